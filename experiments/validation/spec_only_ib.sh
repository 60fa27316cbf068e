#!/usr/bin/env bash
# From the spec sheet alone, nothing calibrated, `sgdsim collective` as the spec-sheet page maps
# a cluster of 8-A100 nodes with one 200 Gb/s HDR InfiniBand NIC per GPU: the node preset's host
# path, `rdma` node links of 200 Gb/s per GPU used, NVLink inside the node, a ring (NCCL's
# algorithm across 3+ nodes), the network model `links`, 3 us between nodes (above the 1 us
# inside a node). Two tables:
#   echo   the shipped Azure ND A100 v4 nccl-tests logs (data/calibration/nccl-tests-echo-azure-
#          a100-ib, read by `sgdsim trace --format nccl-tests`), preset nd96asr-v4: per log of
#          2+ nodes the median |error| of the predicted allreduce time over the sizes >= 1 MB,
#          and the bus bandwidth of the 1 GiB allreduce, measured and predicted;
#   ndmv4  Microsoft's own runs on Azure NDm A100 v4 with the NCCL settings Azure recommends
#          (data/validation/mscclpp-ndmv4-nccl), preset nd96amsr-a100-v4: each row's operation.
# usage: experiments/validation/spec_only_ib.sh [path/to/sgdsim [echo|ndmv4]] (default: both tables)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
part=${2:-both}
case $part in
  echo | ndmv4 | both) ;;
  *) echo "spec_only_ib.sh: expected echo, ndmv4 or nothing, got $part" >&2; exit 2 ;;
esac
/usr/bin/python3 - "$bin" "$part" <<'PY'
import csv, json, statistics, subprocess, sys
bin, part = sys.argv[1], sys.argv[2]

def run_json(*args):
    return json.loads(subprocess.run([bin, *args], check=True, capture_output=True,
                                     text=True).stdout)

def predicted_s(preset, ranks, per_node, op, size):
    return run_json("collective", "--algorithm", "ring", "--operation", op, "--ranks",
                    str(ranks), "--devices-per-node", str(per_node), "--node", preset,
                    "--technology", "rdma", "--intra-technology", "nvlink", "--bandwidth",
                    f"{per_node * 200}Gbps", "--latency", "3us", "--network-model", "links",
                    "--bytes", str(size), "--json")["time_s"]

def busbw_GBps(op, ranks, size, t):
    # nccl-tests' bus bandwidth: allreduce 2(n-1)/n, allgather (n-1)/n of size / time.
    return size / t * (2 if op == "allreduce" else 1) * (ranks - 1) / ranks / 1e9

def echo_table():
    print("| GPUs (nodes) | median error, >= 1 MB | measured busbw, 1 GiB | predicted busbw, 1 GiB |")
    print("|---|---|---|---|")
    for gpus in (16, 32, 64, 128):
        log = f"data/calibration/nccl-tests-echo-azure-a100-ib/nccl_{gpus}.log"
        trace = run_json("trace", log, "--format", "nccl-tests", "--json")
        measured = {int(c["bytes"]): c["time_s"] for c in trace["collectives"]
                    if c["bytes"] >= 1_000_000}
        pred = {s: predicted_s("nd96asr-v4", gpus, 8, "allreduce", s) for s in measured}
        err = statistics.median(abs(pred[s] / measured[s] - 1) for s in measured)
        g = 1 << 30
        print(f"| {gpus} ({gpus // 8}) | {100 * err:.1f} % | "
              f"{busbw_GBps('allreduce', gpus, g, measured[g]):.1f} GB/s | "
              f"{busbw_GBps('allreduce', gpus, g, pred[g]):.1f} GB/s |")

def benchmark_row_s(preset, ranks, per_node, op, size):
    # The spec sheet's collective-benchmark row: nccl_tuner, one GPU per process, the A100
    # 80 GB's 2,039 GB/s of memory bandwidth (its datasheet), links without latencies.
    return run_json("collective", "--algorithm", "nccl_tuner", "--operation", op, "--ranks",
                    str(ranks), "--devices-per-node", str(per_node), "--node", preset,
                    "--bandwidth", f"{per_node * 200}Gbps", "--network-model", "ideal",
                    "--latency", "0us", "--intra-latency", "0us", "--memory-bandwidth",
                    "2039GBps", "--bytes", str(size), "--json")["time_s"]

def ndmv4_table():
    print("| VMs x GPUs | operation | size | measured busbw | predicted busbw | error "
          "| collective-benchmark row | error |")
    print("|---|---|---|---|---|---|---|---|")
    for x in csv.DictReader(open("data/validation/mscclpp-ndmv4-nccl/busbw.csv")):
        nodes, dpn, size = int(x["nodes"]), int(x["gpus_per_node"]), int(x["message_bytes"])
        ranks, op = nodes * dpn, x["operation"].replace("all_", "all")
        pred = busbw_GBps(op, ranks, size, predicted_s("nd96amsr-a100-v4", ranks, dpn, op, size))
        bench = busbw_GBps(op, ranks, size,
                           benchmark_row_s("nd96amsr-a100-v4", ranks, dpn, op, size))
        meas = float(x["busbw_GBps"])
        print(f"| {nodes} x {dpn} | {x['operation']} | {size >> 30} GiB | {meas:g} GB/s | "
              f"{pred:.1f} GB/s | {100 * (pred / meas - 1):+.1f} % | {bench:.1f} GB/s | "
              f"{100 * (bench / meas - 1):+.1f} % |")

if part in ("echo", "both"):
    echo_table()
if part == "both":
    print()
if part in ("ndmv4", "both"):
    ndmv4_table()
PY
