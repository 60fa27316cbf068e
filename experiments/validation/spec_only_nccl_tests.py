#!/usr/bin/env python3
"""nccl-tests from the spec sheet alone: all_reduce_perf on 2 to 128 A100 of Azure ND A100 v4 VMs.

The shipped logs (data/calibration/nccl-tests-echo-azure-a100-ib: one VM of 2, 4 or 8 GPUs run
by one thread, `nThread 1 nGpus G`; 2 to 16 VMs of 8 GPUs with one GPU per process) predicted
with nothing calibrated, as docs/spec-sheet.md maps a collective benchmark: `sgdsim collective
--algorithm nccl_tuner --node nd96asr-v4 --gpus-per-thread G --network-model ideal --latency 0us
--intra-latency 0us --memory-bandwidth 1555GBps` (the A100 40 GB), across VMs `--bandwidth
1600Gbps` (8 x 200 Gb/s HDR), at every size of a log up to 1 GiB (analytic fidelity: on the
ideal network it equals flow). Prints the median |error| per size band.

usage: experiments/validation/spec_only_nccl_tests.py [path/to/sgdsim]
"""
import json
import statistics
import subprocess
import sys

LOGS = "data/calibration/nccl-tests-echo-azure-a100-ib"
BANDS = (("1 KiB - 64 KiB", 1024, 64 << 10), ("64 KiB - 1 MiB", 64 << 10, 1 << 20),
         (">= 1 MiB", 1 << 20, (1 << 30) + 1))


def measured(gpus):
    """(size, out-of-place time in s) of a log's data lines (mpirun's tags removed)."""
    rows = []
    for line in open(f"{LOGS}/nccl_{gpus}.log"):
        f = line.split("<stdout>:", 1)[-1].split()
        if len(f) > 8 and f[0].isdigit():
            rows.append((int(f[0]), float(f[4]) * 1e-6))
    return rows


def predicted_s(sgdsim, gpus, size):
    per_node, per_thread = min(gpus, 8), gpus if gpus <= 8 else 1
    out = subprocess.run([sgdsim, "collective", "--algorithm", "nccl_tuner", "--ranks", str(gpus),
                          "--devices-per-node", str(per_node), "--node", "nd96asr-v4",
                          "--gpus-per-thread", str(per_thread), "--bandwidth", "1600Gbps",
                          "--network-model", "ideal", "--latency", "0us", "--intra-latency", "0us",
                          "--memory-bandwidth", "1555GBps", "--fidelity", "analytic",
                          "--bytes", str(size), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["time_s"]


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    print("| GPUs | " + " | ".join(b[0] for b in BANDS) + " | measured busbw, 1 GiB | predicted |")
    print("|---|" + "---|" * (len(BANDS) + 2))
    for gpus in (2, 4, 8, 16, 32, 64, 128):
        errors = {b[0]: [] for b in BANDS}
        busbw = None
        for size, t in measured(gpus):
            if size < BANDS[0][1] or size >= BANDS[-1][2]:
                continue
            p = predicted_s(sgdsim, gpus, size)
            for name, lo, hi in BANDS:
                if lo <= size < hi:
                    errors[name].append(abs(p / t - 1))
            if size == 1 << 30:
                f = 2 * (gpus - 1) / gpus * size / 1e9
                busbw = (f / t, f / p)
        cells = ["%.1f %%" % (100 * statistics.median(errors[b[0]])) for b in BANDS]
        print("| %d | %s | %.1f GB/s | %.1f GB/s |" % (gpus, " | ".join(cells), *busbw))


if __name__ == "__main__":
    main()
