#!/usr/bin/env python3
"""Cross-check of nccl_tuner's channel_launch on NCCL's own graph (one NVLink node).

sgdsim's `nccl_tuner` times an operation on one node with a cost per channel NCCL gives it
(`channel_launch`, fitted by `calibrate nccl-tests` on the shipped 2-GPU A100 log of
data/calibration/nccl-tests-echo-azure-a100-ib) on top of NCCL 2.8's tuner model and the
calibrated links. This script predicts the 4- and 8-GPU logs from the same mechanism with
NCCL's own numbers instead, re-typed from NCCL v2.11.4-1 (the logs are of 2022 and print no
version; the constants below are the same in 2.10-2.12; BSD-3-Clause):

- How many channels an allreduce uses. A channel is one thread block. src/enqueue.cc
  (getAlgoInfo) starts from the communicator's channels and drops one while the message is
  below channels x threads x threshold; the thresholds (src/include/comm.h) are 8, 8 and 64
  bytes per thread for LL, LL128 and Simple, the ring's LL one times the ranks
  (src/graph/tuning.cc), with 512, 640 and 512 threads. An A100 node on NVSwitch (12 NVLinks of
  22 GB/s, SM80_NVLINK_WIDTH in src/graph/topo.h) gets rings of 12 channels at 22 GB/s from
  the search (src/graph/search.cc, which doubles 6 rings of 44 GB/s), and the communicator twice
  that, 24 (src/graph/connect.cc duplicates the channels).
- NCCL's own tuner (src/graph/tuning.cc): baseLat, hwLat of NVLink, the Ampere bandwidth
  refinements (235 GB/s cap, llMaxBw 87.7, ll128MaxBwPerCh 20, perChMaxTreeBw 24), the tree's
  correction factors; it picks the algorithm and protocol, and its time is the GPU's work (no
  calibrated link, no fitted launch latency).
- A cost per channel per call, `a` microseconds: the one fitted number, on nccl_2.log alone.
  The predicted time is max(the launch floor of nccl-tests' one thread driving G GPUs,
  a x channels + the tuner's time). The floor is `sgdsim calibrate nccl-tests`' launch time per
  GPU from nccl_2.log, times G.

It prints the measured out-of-place time, sgdsim's prediction (`calibrate nccl-tests
nccl_2.log --min-bytes 1MB --check ...`, channel_launch fitted) and this cross-check's, for the
4- and 8-GPU logs, and the summary of sgdsim's with `--channel-launch 0`.

usage: experiments/validation/nccl_channels.py [path/to/sgdsim]
"""
import json
import math
import statistics
import subprocess
import sys

LOGS = "data/calibration/nccl-tests-echo-azure-a100-ib"
KIB = 1024
# src/graph/tuning.cc, [algorithm][protocol LL, LL128, Simple], microseconds.
BASE_LAT = {"tree": (4.4, 4.4, 0.0), "ring": (3.6, 10.0, 8.4)}
NVLINK_LAT = {"tree": (0.52, 1.25, 28.0), "ring": (0.47, 1.9, 3.4)}
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0,
     1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9))
GRAPH_CHANNELS, CHANNEL_GBPS, COMM_CHANNELS = 12, 22.0, 24
THREADS = (512, 640, 512)
THRESHOLD = (8, 8, 64)  # bytes per thread
PROTOCOLS = ("LL", "LL128", "Simple")


def log2i(n):
    return n.bit_length() - 1


def tuner_table(ranks):
    """NCCL's (latency us, algorithm bandwidth GB/s) per (algorithm, protocol) on one node."""
    steps = 2 * (ranks - 1)
    out = {}
    for algo in ("tree", "ring"):
        for p in range(3):
            bus = min(GRAPH_CHANNELS * CHANNEL_GBPS, 235.0)
            if algo == "ring" and p == 0:
                bus = min(87.7, bus / 4)
            if algo == "ring" and p == 1:
                bus = min(bus * 0.92, 20.0 * GRAPH_CHANNELS)
            if algo == "tree":
                bus = min(bus * 0.92, GRAPH_CHANNELS * 24.0)
                if p == 0:
                    bus = min(bus / 3.8, 87.7)
                if p == 1:
                    bus = min(bus * 7 / 9, 20.0 * GRAPH_CHANNELS)
            ratio = 0.5 if algo == "tree" else ranks / steps
            latency = BASE_LAT[algo][p] + steps * NVLINK_LAT[algo][p]
            out[(algo, p)] = (latency, bus * ratio)
    return out


def tuner_pick(ranks, nbytes):
    """(time us, algorithm, protocol) of NCCL's cheapest choice."""
    best = None
    for (algo, p), (latency, bw) in tuner_table(ranks).items():
        if algo == "tree" and log2i(nbytes >> 6) < 23:
            bw *= TREE_CORRECTION[p][log2i(nbytes >> 6)]
        t = latency + nbytes / (1e3 * bw)
        if best is None or t < best[0]:
            best = (t, algo, p)
    return best


def channels(ranks, nbytes, algo, p):
    """The channels getAlgoInfo leaves for this size (threads halve below 2 channels)."""
    threshold = THRESHOLD[p] * (ranks if algo == "ring" and p == 0 else 1)
    nc = COMM_CHANNELS
    while nbytes < nc * THREADS[p] * threshold and nc >= 2:
        nc -= 1
    return nc


def predict_us(ranks, nbytes, a_us, floor_us):
    t, algo, p = tuner_pick(ranks, nbytes)
    nc = channels(ranks, nbytes, algo, p)
    return max(floor_us * ranks, a_us * nc + t), f"{algo}/{PROTOCOLS[p]}", nc


def measured(ranks):
    """Out-of-place time (us) per size >= 32 KiB of nccl_<ranks>.log."""
    out = {}
    for line in open(f"{LOGS}/nccl_{ranks}.log"):
        f = line.split()
        if len(f) > 5 and f[0].isdigit() and int(f[0]) >= 32 * KIB:
            out.setdefault(int(f[0]), float(f[4]))
    return out


def fit_a(points, floor_us):
    """The per-channel cost minimizing the squared relative error on nccl_2.log."""
    def cost(a):
        return sum((predict_us(2, n, a, floor_us)[0] / m - 1) ** 2 for n, m in points.items())
    return min((i / 100 for i in range(401)), key=cost)


def sgdsim_points(binary, *extra):
    cmd = [binary, "calibrate", "nccl-tests", f"{LOGS}/nccl_2.log", "--min-bytes", "1MB",
           "--check", f"{LOGS}/nccl_4.log", "--check", f"{LOGS}/nccl_8.log", "--json", *extra]
    d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    checks = {c["ranks"]: {int(p["bytes"]): 1e6 * p["predicted_s"] for p in c["points"]}
              for c in d["checks"]}
    return checks, 1e6 * d["launch_per_gpu_s"]


def size_name(n):
    return f"{n // KIB} KiB" if n < KIB * KIB else f"{n // (KIB * KIB)} MiB"


def summary(rows, key):
    def errs(lo, hi):
        return [abs(r[key] / r["m"] - 1) * 100 for r in rows if lo <= r["n"] <= hi]
    band = errs(128 * KIB, 4 * KIB * KIB)
    return (f"median |error| >= 1 MB {statistics.median(errs(10 ** 6, math.inf)):.1f} %, "
            f"128 KiB - 4 MiB median {statistics.median(band):.1f} %, largest {max(band):.1f} %")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    checks, floor_us = sgdsim_points(binary)
    without, _ = sgdsim_points(binary, "--channel-launch", "0")
    a = fit_a(measured(2), floor_us)
    print(f"Per-channel cost fitted on nccl_2.log: {a:.2f} us; nccl-tests launch floor "
          f"{floor_us:.3f} us per GPU (calibrate nccl-tests)")
    for ranks in (4, 8):
        print(f"\n{ranks} GPUs (nccl_{ranks}.log, out of place)\n")
        print("| size | measured us | sgdsim us | error | cross-check us | NCCL's pick, channels | "
              "error |")
        print("|---|---|---|---|---|---|---|")
        rows = []
        for n, m in sorted(measured(ranks).items()):
            w, pick, nc = predict_us(ranks, n, a, floor_us)
            s = checks[ranks][n]
            rows.append({"n": n, "m": m, "s": s, "w": w, "o": without[ranks][n]})
            if n <= 64 * KIB * KIB:  # the table stops at 64 MiB; the summary has every size
                print(f"| {size_name(n)} | {m:.1f} | {s:.1f} | {100 * (s / m - 1):+.1f} % | "
                      f"{w:.1f} | {pick}, {nc} | {100 * (w / m - 1):+.1f} % |")
        print(f"\nsgdsim: {summary(rows, 's')}")
        print(f"cross-check: {summary(rows, 'w')}")
        print(f"sgdsim, --channel-launch 0: {summary(rows, 'o')}")


if __name__ == "__main__":
    main()
