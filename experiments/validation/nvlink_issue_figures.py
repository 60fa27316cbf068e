#!/usr/bin/python3
"""The one-node allreduce figures of data/validation/nccl-issues-nvlink-one-node (NCCL issue
text) against the spec sheet's collective-benchmark row, nothing calibrated: `nccl_tuner` on
the board's node preset, links without latencies, the GPU's memory bandwidth from its data
sheet (H800 SXM5 and H200: HBM3 3.35 TB/s and HBM3e 4.8 TB/s; NVLS has no memory term), one
process per GPU, at the run's largest size (4 GiB for the H200 run; 8 GiB, nccl-tests' usual
end, where the H800 run's sizes are not stated).

usage: experiments/validation/nvlink_issue_figures.py [path/to/sgdsim]
"""
import csv
import sys

from azure_nccl import busbw_GBps, predict

DATA = "data/validation/nccl-issues-nvlink-one-node/busbw.csv"
# GPU -> (node preset, memory bandwidth from the GPU's data sheet)
BOARDS = {"H800 SXM5": ("hgx-h800", "3350GBps"), "H200": ("dgx-h100", "4800GBps")}


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    print("| source | GPUs | node preset | size | measured busbw | predicted busbw | error |")
    print("|---|---|---|---|---|---|---|")
    for row in csv.DictReader(open(DATA)):
        preset, memory = BOARDS[row["gpu"]]
        gpus = int(row["gpus"])
        # the run's largest size ("64K-4G": 4 GiB), or 8 GiB where the sizes are not stated
        last = row["sizes"].split("-")[-1]
        size = int(last[:-1]) << 30 if last.endswith("G") else 8 << 30
        measured = float(row["busbw_GBps"])
        d = predict(sgdsim, preset, gpus, memory, [], size, gpus_per_thread=1)
        predicted = busbw_GBps(size, d["time_s"], gpus)
        print(f"| {row['source']} | {gpus} {row['gpu']} | `{preset}` | {size >> 30} GiB | "
              f"{measured:g} GB/s | {predicted:.1f} GB/s | {100 * (predicted / measured - 1):+.1f} % |")


if __name__ == "__main__":
    main()
