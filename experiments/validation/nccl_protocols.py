#!/usr/bin/env python3
"""What-if study of NCCL's LL and LL128 protocols for `nccl_tuner`.

sgdsim's `nccl_tuner` times every allreduce with NCCL's Simple protocol, except where NCCL's own
tuner picks tree/LL on 2+ nodes (the tree/LL model, fitted by calibrate nccl-tests; its tuner
port is nccl_tuner_choice in sim/collectives/nccl_tuner.cpp, the same model as nccl28_choice
below), where it picks ring/LL or ring/LL128 on one node and LL across nodes (protocols "auto"). NCCL
also has LL128, and LL on rings across nodes, with lower per-step latency and lower bandwidth,
and picks per size the (algorithm, protocol) its tuner model predicts fastest. This script
answers two questions from the measured logs in data/calibration/, with `sgdsim calibrate
nccl-tests --json` as its only input:

1. Where does NCCL's own tuner switch protocol? (`choice` table.) It evaluates NCCL's published
   tuner model (src/graph/tuning.cc of NCCL 2.8: baseLat, hwLat, the bandwidth refinements per
   algorithm and protocol, treeCorrectionFactor and the ring plateau; numbers re-typed from the
   source, BSD-3-Clause) for A100 nodes of 8 GPUs on NVSwitch and InfiniBand, with `--channels`
   channels of `--channel-GBps` each (the logs do not print NCCL's topology; 8 x 24 GB/s is
   NCCL's usual ring graph for HDR 200 Gb/s NICs).
2. Would adding LL and LL128 as cheaper alternatives make the predictions better? (`errors`
   table.) Each calibrated Simple-only prediction (`--tree-ll off --protocols
   simple`) t(n) = L + lat + data(n) is compared with sgdsim's (the tree/LL model where NCCL
   picks it, LL and LL128 on one node, nccl-tests' launch floor) and with
   min(t(n), min over tree/ring x LL/LL128 of L + lat_NCCL(a, p) + data(n) / eff(a, p)), where
   lat_NCCL are NCCL 2.18's latencies (baseLat + steps x hwLat) and eff(a, p) NCCL's bandwidth
   ratios of that protocol to Simple (ring LL 1/4, ring LL128 0.92, tree LL 0.92/3.8, tree LL128
   0.92 x 120/128). L and the links are the calibration's (fitted on the smallest scale).

usage: experiments/validation/nccl_protocols.py [path/to/sgdsim] [--channels 8] [--channel-GBps 24]
"""
import argparse
import json
import statistics
import subprocess

IB = "data/calibration/nccl-tests-echo-azure-a100-ib"
TCP = "data/calibration/nccl-tests-aws-p3dn-tcp"
PROTOCOLS = ("LL", "LL128", "Simple")

# NCCL 2.18 latencies (us) for the what-if: baseLat[algo][proto], hwLat[hw][algo][proto].
BASE_LAT = {"tree": (6.8, 14.0, 0.0), "ring": (6.6, 14.0, 8.4)}
HW_LAT = {"nvl": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)},
          "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)}}
EFFICIENCY = {("ring", 0): 0.25, ("ring", 1): 0.92, ("tree", 0): 0.92 / 3.8,
              ("tree", 1): 0.92 * 120 / 128}

# NCCL 2.8 tuner (the version whose full model, with its corrections, is re-typed here).
BASE_LAT_28 = {"tree": (4.4, 4.4, 0.0), "ring": (3.6, 10.0, 8.4)}
HW_LAT_28 = {"nvl": {"tree": (0.52, 1.2, 28.0), "ring": (0.47, 1.9, 3.4)},
             "net": {"tree": (5.0, 8.5, 50.0), "ring": (2.7, 4.0, 9.6)}}
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9))
LL128_MAX_BW_PER_CHANNEL = 16.7  # GB/s, allreduce


def log2i(n):
    k = 0
    while (2 << k) <= n:
        k += 1
    return k


def nccl_latency_us(base, hw, algo, proto, ranks, per_node, nodes, ll_intra_factor=1.0):
    """NCCL's latency of one allreduce: base + its steps' hardware latencies."""
    intra = hw["nvl"][algo][proto] * (ll_intra_factor if proto == 0 and nodes > 1 else 1.0)
    inter = hw["net" if nodes > 1 else "nvl"][algo][proto]
    if algo == "ring":
        steps = 2 * (ranks - 1)
        inter_steps = 2 * nodes if nodes > 1 else 0
        return base[algo][proto] + (steps - inter_steps) * intra + inter_steps * inter
    return base[algo][proto] + 2 * ((per_node - 1) * intra + log2i(nodes) * inter)


def nccl28_choice(nbytes, ranks, per_node, channels, channel_GBps):
    """The (algorithm, protocol) NCCL 2.8's tuner picks, and its predicted time in us."""
    nodes = ranks // per_node
    best = None
    for algo in ("tree", "ring"):
        for p in range(3):
            bus = min(channels * channel_GBps, 235.0)  # compCap 80 cap
            if algo == "ring" and p == 0:
                bus *= 0.25
            if algo == "ring" and p == 1:
                bus = min(bus * 0.92, LL128_MAX_BW_PER_CHANNEL * channels)
            if algo == "tree":
                max_tree = (105.0 if p == 1 else 80.0) if nodes > 2 else (130.0 if p == 1 else 110.0)
                bus = min(bus * 0.9, max_tree)
                if p == 0:
                    bus /= 3.8
                if p == 1:
                    bus = min(bus * (7 / 9 if nodes == 1 else 0.915),
                              LL128_MAX_BW_PER_CHANNEL * channels * 7 / 9)
            algbw = bus * (0.5 if algo == "tree" else ranks / (2 * (ranks - 1)))
            lat = nccl_latency_us(BASE_LAT_28, HW_LAT_28, algo, p, ranks, per_node, nodes, 1.8)
            log_size = log2i(nbytes >> 6)
            if algo == "tree" and log_size < 22:
                algbw *= TREE_CORRECTION[p][log_size]
            if algo == "ring" and p == 2 and nodes > 1 and nbytes >= ranks / 16.0 * 65536:
                lat *= 1.9  # NCCL's "plateau effect of ring"
            t = lat + nbytes / (1000 * algbw)
            if best is None or t < best[2]:
                best = (algo, PROTOCOLS[p], t)
    return best


def calibrate(sgdsim, log, checks, extra, tree_ll="off"):
    args = [sgdsim, "calibrate", "nccl-tests", log, "--min-bytes", "1MB", "--json",
            "--tree-ll", tree_ll] + extra
    if tree_ll == "off":  # Simple only: neither tree/LL nor LL and LL128 on one node
        args += ["--protocols", "simple"]
    for c in checks:
        args += ["--check", c]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def simple_latency_us(fit, ranks, per_node, nodes):
    """nccl_tuner's own latency (Simple step latencies of the calibration), in us."""
    hi, he = fit["step_latency_intra_s"] * 1e6, fit["step_latency_inter_s"] * 1e6
    steps = 2 * (ranks - 1)
    inter = min(steps, 2 * nodes) if nodes > 1 else 0
    ring = (steps - inter) * hi + inter * he
    tree = 2 * ((per_node - 1) * hi + log2i(nodes) * he)
    return fit["launch_latency_s"] * 1e6 + min(ring, tree)


def with_protocols(fit, check, model):
    """(bytes, measured, Simple only, with LL/LL128 alternatives, sgdsim's model) in us for a
    check's points (model: the same check with the tree/LL model on)."""
    ranks = check["ranks"]
    per_node = min(fit["gpus_per_node"], ranks)
    nodes = (ranks + per_node - 1) // per_node
    launch = fit["launch_latency_s"] * 1e6
    base = simple_latency_us(fit, ranks, per_node, nodes)
    rows = []
    for p, q in zip(check["points"], model["points"]):
        old = p["predicted_s"] * 1e6
        data = old - base
        alt = min(launch + nccl_latency_us(BASE_LAT, HW_LAT, a, q, ranks, per_node, nodes)
                  + data / EFFICIENCY[(a, q)] for a in ("ring", "tree") for q in (0, 1))
        rows.append((p["bytes"], p["measured_s"] * 1e6, old, min(old, alt), q["predicted_s"] * 1e6))
    return rows


def median_error(rows, lo, hi, column):
    return 100 * statistics.median(abs(r[column] - r[1]) / r[1] for r in rows if lo <= r[0] < hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sgdsim", nargs="?", default="build/sgdsim")
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--channel-GBps", type=float, default=24.0)
    a = ap.parse_args()
    print("NCCL 2.8 tuner's choice and its predicted time (A100, 8 GPUs per node, %d channels x %g"
          " GB/s):\n"
          % (a.channels, a.channel_GBps))
    sizes = [1 << k for k in range(15, 21)]
    print("| GPUs | " + " | ".join("%d KiB" % (n >> 10) for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for ranks in (16, 32, 64, 128):
        cells = ["%s/%s %.0f us" % nccl28_choice(n, ranks, 8, a.channels, a.channel_GBps)
                 for n in sizes]
        print("| %d | %s |" % (ranks, " | ".join(cells)))
    cases = [
        ("InfiniBand", f"{IB}/nccl_16.log", [f"{IB}/nccl_{r}.log" for r in (32, 64, 128)], []),
        ("NVLink", f"{IB}/nccl_2.log", [f"{IB}/nccl_{r}.log" for r in (4, 8)], []),
        ("TCP", f"{TCP}/2p3dn.2GPUs.log", [f"{TCP}/4p3dn.4GPUs.log"], ["--technology", "tcp"]),
    ]
    print("\nMedian |error| of the predictions (calibrated with --min-bytes 1MB on the first log):"
          " Simple only / sgdsim (NCCL's LL, its LL128 on one node, tree/LL fitted) / Simple"
          " with LL and LL128 as cheaper alternatives\n")
    print("| cluster | GPUs | 1 KiB - 64 KiB | >= 64 KiB | >= 1 MB |")
    print("|---|---|---|---|---|")
    mid = []
    for name, log, checks, extra in cases:
        fit = calibrate(a.sgdsim, log, checks, extra)
        model = calibrate(a.sgdsim, log, checks, extra, "on")
        for check, mcheck in zip(fit["checks"], model["checks"]):
            rows = with_protocols(fit, check, mcheck)
            cells = ["%.1f / %.1f / %.1f %%" % tuple(median_error(rows, lo, hi, c) for c in (2, 4, 3))
                     for lo, hi in ((1024, 64 << 10), (64 << 10, 1 << 62), (1 << 20, 1 << 62))]
            print("| %s | %d | %s |" % (name, check["ranks"], " | ".join(cells)))
            if name == "NVLink":
                mid.append((check["ranks"], max((r[4] / r[1] - 1 for r in rows
                                                 if 128 << 10 <= r[0] <= 4 << 20), key=abs)))
    print()
    for ranks, worst in mid:
        print("NVLink, %d GPUs, 128 KiB - 4 MiB: sgdsim's largest error %+.1f %%" % (ranks, 100 * worst))


if __name__ == "__main__":
    main()
