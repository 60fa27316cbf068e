#!/usr/bin/env python3
"""One NVLink node from the spec sheet alone: nccl-tests' all_reduce_perf on 2, 4 and 8 A100.

The shipped Azure ND A100 v4 one-node logs (data/calibration/nccl-tests-echo-azure-a100-ib,
nccl_2/4/8.log: `nThread 1 nGpus G`, one thread launching every GPU) predicted with nothing
calibrated, as docs/spec-sheet.md maps a collective benchmark: `sgdsim collective --algorithm
nccl_tuner --node nd96asr-v4 --gpus-per-thread G --network-model ideal --latency 0us
--intra-latency 0us` at every size of the log. Prints the median |error| per size band.

usage: experiments/validation/spec_only_node.py [path/to/sgdsim]
"""
import json
import statistics
import subprocess
import sys

LOGS = "data/calibration/nccl-tests-echo-azure-a100-ib"
BANDS = (("1 KiB - 64 KiB", 1024, 64 << 10), ("64 KiB - 1 MiB", 64 << 10, 1 << 20),
         (">= 1 MiB", 1 << 20, 1 << 62))


def measured(gpus):
    """(size, out-of-place time in s) of a log's data lines."""
    rows = []
    for line in open(f"{LOGS}/nccl_{gpus}.log"):
        f = line.split()
        if len(f) > 8 and f[0].isdigit():
            rows.append((int(f[0]), float(f[4]) * 1e-6))
    return rows


def predicted_s(sgdsim, gpus, size):
    out = subprocess.run([sgdsim, "collective", "--algorithm", "nccl_tuner", "--ranks", str(gpus),
                          "--devices-per-node", str(gpus), "--node", "nd96asr-v4",
                          "--gpus-per-thread", str(gpus), "--network-model", "ideal",
                          "--latency", "0us", "--intra-latency", "0us", "--memory-bandwidth", "1555GBps",
                          "--bytes", str(size),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["time_s"]


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    print("| GPUs | " + " | ".join(b[0] for b in BANDS) + " | measured busbw, 1 GiB | predicted |")
    print("|---|" + "---|" * (len(BANDS) + 2))
    for gpus in (2, 4, 8):
        errors = {b[0]: [] for b in BANDS}
        busbw = None
        for size, t in measured(gpus):
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
