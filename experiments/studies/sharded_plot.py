#!/usr/bin/env python3
"""Table and figure of the sharded data-parallelism study (experiments/studies/sharded.json):
throughput per GPU, exposed communication per iteration and peak memory per GPU of DDP,
ZeRO-1/2/3, FSDP and HSDP, per model, platform and GPU count.

usage: /usr/bin/python3 experiments/studies/sharded_plot.py results/sharded/results.jsonl
           [--gpus 8,512] [--out FIG.png]
Prints the table (Markdown) on stdout, all GPU counts or those of --gpus; with --out also
draws the figure (matplotlib, every GPU count).
"""
import argparse
import collections
import json

SCHEMES = ["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3", "FSDP", "HSDP"]
PLATFORMS = {"dgx-a100": "8 x NVLink/node, 4 x 100 Gb/s IB", "pcie-4gpu-1nic": "4 x PCIe/node, 25 GbE"}


def scheme_name(p):
    kind = p["scheme.type"]
    if kind == "sync":
        return "DDP"
    if kind == "zero":
        return f"ZeRO-{p['scheme.stage']}"
    return "HSDP" if p.get("scheme.hybrid") else "FSDP"


def load(path):
    rows = collections.defaultdict(dict)  # (model, platform, scheme) -> gpus -> values
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        p = r["params"]
        gpus = p["workers.count"]
        rows[(p["model"], p["platform.generate.node"], scheme_name(p))][gpus] = {
            "throughput": r["throughput_samples_per_s"] / gpus,
            "exposed_ms": 1e3 * r["exposed_comm_s_per_iter"],
            "peak_gb": r["memory"]["peak_bytes"] / 1e9,
        }
    return rows


def table(rows, gpu_counts=None):
    print("| model | platform | scheme | GPUs | samples/s per GPU | exposed comm (ms/iter) | peak memory (GB) |")
    print("|---|---|---|---|---|---|---|")
    for model in sorted({k[0] for k in rows}):
        for plat in PLATFORMS:
            for scheme in SCHEMES:
                for gpus, v in sorted(rows.get((model, plat, scheme), {}).items()):
                    if gpu_counts and gpus not in gpu_counts:
                        continue
                    print(f"| {model} | {PLATFORMS[plat]} | {scheme} | {gpus} | {v['throughput']:.1f} | "
                          f"{v['exposed_ms']:.1f} | {v['peak_gb']:.2f} |")


def figure(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({k[0] for k in rows})
    cols = [(m, p) for m in models for p in PLATFORMS]
    metrics = [("throughput", "samples/s per GPU"), ("exposed_ms", "exposed comm (ms/iter)"),
               ("peak_gb", "peak memory per GPU (GB)")]
    fig, axes = plt.subplots(len(metrics), len(cols), figsize=(4 * len(cols), 3 * len(metrics)),
                             squeeze=False)
    for c, (model, plat) in enumerate(cols):
        for r, (key, label) in enumerate(metrics):
            ax = axes[r][c]
            for scheme in SCHEMES:
                series = sorted(rows.get((model, plat, scheme), {}).items())
                if series:
                    ax.plot([g for g, _ in series], [v[key] for _, v in series], marker="o",
                            label=scheme)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("GPUs")
            if c == 0:
                ax.set_ylabel(label)
            if r == 0:
                ax.set_title(f"{model}\n{PLATFORMS[plat]}", fontsize=9)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=80)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--gpus", help="comma-separated GPU counts for the table (default: all)")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = load(a.results)
    table(rows, {int(g) for g in a.gpus.split(",")} if a.gpus else None)
    if a.out:
        figure(rows, a.out)


if __name__ == "__main__":
    main()
