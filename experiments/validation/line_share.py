"""What share of their NICs' line rate NCCL's ring moved on the shipped public multi-NIC series.

The bus bandwidth of the largest allreduces (1 GiB and up) on 3 or more nodes, where NCCL runs its
ring (on 2 nodes it may run its tree), over the NICs' summed line rate: AWS p4d over EFA
(NVIDIA/nccl#527), A100 servers over 8 x 100 Gb/s RoCE (NVIDIA/nccl-tests#169), and the Azure ND
A100 v4 log of 4 nodes (data/calibration, read by `sgdsim trace --format nccl-tests`).

usage: /usr/bin/python3 experiments/validation/line_share.py [path/to/sgdsim]
"""
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def table_rows(fabric, path, busbw_column):
    """(fabric, nodes, busbw GB/s, NICs per node, Gb/s per NIC) of a table's 3+ node rows."""
    for x in csv.DictReader(open(os.path.join(ROOT, path))):
        if int(x["nodes"]) >= 3:
            yield (fabric, int(x["nodes"]), float(x[busbw_column]), int(x["nics_per_node"]),
                   float(x["nic_Gbps"]))


def echo_row(sgdsim):
    """The Azure ND A100 v4 log of 32 GPUs (4 nodes): the 1 GiB allreduce's bus bandwidth."""
    log = os.path.join(ROOT, "data/calibration/nccl-tests-echo-azure-a100-ib/nccl_32.log")
    out = subprocess.run([sgdsim, "trace", log, "--format", "nccl-tests", "--json"], check=True,
                         capture_output=True, text=True).stdout
    size, ranks = 1 << 30, 32
    t = next(c["time_s"] for c in json.loads(out)["collectives"] if c["bytes"] == size)
    busbw = size / t * 2 * (ranks - 1) / ranks / 1e9
    return ("8 x 200 Gb/s HDR InfiniBand, Azure ND A100 v4", 4, round(busbw, 2), 8, 200.0)


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/sgdsim")
    rows = [*table_rows("4 x 100 Gb/s EFA, AWS p4d", "data/validation/nccl-tests-efa-p4d-scale/"
                        "busbw.csv", "busbw_out_of_place_GBps"),
            *table_rows("8 x 100 Gb/s RoCE", "data/validation/nccl-tests-roce-a100-scale/busbw.csv",
                        "busbw_GBps"),
            echo_row(sgdsim)]
    print("| fabric | nodes | measured busbw, 1 GiB and up | NICs' line rate | share |")
    print("|---|---|---|---|---|")
    for fabric, nodes, busbw, nics, gbps in rows:
        line_GBps = nics * gbps / 8
        print(f"| {fabric} | {nodes} | {busbw:g} GB/s | {line_GBps:g} GB/s | "
              f"{100 * busbw / line_GBps:.0f} % |")


main()
