#!/usr/bin/env python3
"""nccl-tests allreduce on one Azure VM (8 A100, H100, H200; 4 GB200) against the spec-sheet row.

Reads data/validation/azure-nccl-allreduce (Azure/AI-benchmarking-guide's tables:
`NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8` on the 8-GPU VMs, `NCCL_ALGO=Ring ...
-g 4` on ND GB200 v6; in-place bus bandwidth) and predicts every size >= 1 MiB with the
collective-benchmark row of docs/spec-sheet.md: `sgdsim collective --algorithm nccl_tuner
--node PRESET --ranks G --devices-per-node G --gpus-per-thread G --network-model ideal
--latency 0us --intra-latency 0us --memory-bandwidth B`, B the GPU's memory bandwidth from
NVIDIA's data sheets (GB200: Microsoft's 8 TB/s). Nothing is calibrated. ND H200 v5 has the
NVLink 4 NVSwitch of ND H100 v5, so it takes the same preset (its HBM3e's 4.8 TB/s as B). The
A100 has no NVLS: NCCL ran another algorithm there, whatever the file's text says. The GB200
run set NCCL_ALGO=Ring, and so does its row (`--nccl-algo ring`). "NCCL_ALGO=Ring" reads the
H100 table as if NVLS were off: what sgdsim predicted for it before NVLS was modelled.

usage: experiments/validation/azure_nccl.py [path/to/sgdsim] [--sizes]
       experiments/validation/azure_nccl.py --extract   (rewrites the CSVs from the .md files)
"""
import argparse
import csv
import json
import math
import re
import statistics
import subprocess

DATA = "data/validation/azure-nccl-allreduce"
# VM, NCCL version, preset, GPUs, GPU memory bandwidth (data sheets), extra options.
RUNS = [
    ("ND_H100_v5", "2.18.5", "nd96isr-h100-v5", 8, "3352GBps", []),
    ("ND_H200_v5", "2.20.5", "nd96isr-h100-v5", 8, "4800GBps", []),
    ("ND_A100_v4", "2.18.5", "nd96amsr-a100-v4", 8, "2039GBps", []),
    ("ND_GB200_v6", "2.25.1", "nd-gb200-v6", 4, "8000GBps", ["--nccl-algo", "ring"]),
    ("ND_H100_v5", "2.18.5", "nd96isr-h100-v5", 8, "3352GBps", ["--nccl-algo", "ring"]),
]
# The source file of each VM's table (the GB200 one an excerpt: see SOURCES.md).
SOURCE = {"ND_GB200_v6": "ND_GB200_v6_results-excerpt.md"}
# The runs of the per-size table (--sizes): each VM as the collective-benchmark row reads it.
SIZES_SHOWN = ("ND_H100_v5", "ND_H200_v5", "ND_GB200_v6")
MIB = 1 << 20


def extract():
    """The markdown tables as label,bytes,busbw_GBps (labels read as -f 2's powers of two)."""
    scale = {"K": 1e3, "M": 1e6, "G": 1e9}
    for vm in dict.fromkeys(run[0] for run in RUNS):  # each VM once, in RUNS' order
        text = open(f"{DATA}/{SOURCE.get(vm, vm + '_results.md')}").read()
        section = text.split("NCCL Bandwidth")[1].split("## End-to-End")[0]
        rows = re.findall(r"^\|\s*(\d+)([KMG])\s*\|\s*([\d.]+)\s*\|", section, re.M)
        with open(f"{DATA}/{vm}_allreduce_busbw.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["label", "bytes", "busbw_GBps"])
            for number, unit, busbw in rows:
                w.writerow([number + unit, 2 ** round(math.log2(int(number) * scale[unit])),
                            busbw])


def measured(vm):
    with open(f"{DATA}/{vm}_allreduce_busbw.csv") as f:
        return [(r["label"], int(r["bytes"]), float(r["busbw_GBps"])) for r in csv.DictReader(f)]


def predict(sgdsim, preset, gpus, memory, extra, size, gpus_per_thread=None):
    """The collective-benchmark row on one node of `gpus` GPUs, nccl-tests driving
    `gpus_per_thread` of them from one thread (default: all, as `-g gpus`)."""
    cmd = [sgdsim, "collective", "--algorithm", "nccl_tuner", "--node", preset, "--ranks",
           str(gpus), "--devices-per-node", str(gpus), "--bytes", str(size), "--gpus-per-thread",
           str(gpus_per_thread or gpus), "--memory-bandwidth", memory, "--network-model",
           "ideal", "--latency", "0us", "--intra-latency", "0us", "--json"] + extra
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def busbw_GBps(size, time_s, gpus):
    return size / time_s * 2 * (gpus - 1) / gpus / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sgdsim", nargs="?", default="build/sgdsim")
    ap.add_argument("--extract", action="store_true")
    ap.add_argument("--sizes", action="store_true", help="per-size table of the NVLS runs")
    a = ap.parse_args()
    if a.extract:
        extract()
        return
    results = []
    for vm, nccl, preset, gpus, memory, extra in RUNS:
        rows = []
        for label, size, bw in measured(vm):
            if size < MIB:
                continue
            d = predict(a.sgdsim, preset, gpus, memory, extra, size)
            t_measured = size / (bw * 1e9) * 2 * (gpus - 1) / gpus
            rows.append((label, bw, busbw_GBps(size, d["time_s"], gpus),
                         d["time_s"] / t_measured - 1, d.get("chosen") or "nccl_tuner"))
        results.append((vm, nccl, preset, gpus, extra, rows))
    if a.sizes:
        # The first run of each VM shown (the H100's second run is its ring reading).
        shown = [next(r for r in results if r[0] == vm) for vm in SIZES_SHOWN]
        print("| size | " + " | ".join(f"{r[0].replace('_', ' ')}: measured, predicted, error"
                                       for r in shown) + " |")
        print("|---|" + "---|" * len(shown))
        for k in range(len(shown[0][5])):
            cells = [f"{r[5][k][1]:.1f}, {r[5][k][2]:.1f} GB/s, {100 * r[5][k][3]:+.1f} %"
                     for r in shown]
            print(f"| {shown[0][5][k][0]} | " + " | ".join(cells) + " |")
        return
    print("| VM, GPUs (NCCL) | preset | sgdsim ran | median error, 1 MiB - 8 GiB | largest | "
          "measured busbw, 8 GiB | predicted |")
    print("|---|---|---|---|---|---|---|")
    for vm, nccl, preset, gpus, extra, rows in results:
        errors = [abs(r[3]) for r in rows]
        ran = sorted({r[4].replace("nccl_tuner(", "").rstrip(")") for r in rows})
        ring = " read as NCCL_ALGO=Ring" if extra and vm == "ND_H100_v5" else ""
        name = f"{vm.replace('_', ' ')}{ring}, {gpus}"
        print(f"| {name} ({nccl}) | `{preset}` | {', '.join(ran)} | "
              f"{100 * statistics.median(errors):.1f} % | {100 * max(errors):.1f} % | "
              f"{rows[-1][1]:.1f} GB/s | {rows[-1][2]:.1f} GB/s |")


if __name__ == "__main__":
    main()
