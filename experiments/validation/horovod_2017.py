#!/usr/bin/python3
"""Horovod's 2017 benchmark (16 and 64 Pascal GPUs, 4 per server, 25 and 40 Gbit/s Ethernet,
NCCL over TCP or RDMA), predicted from each benchmark's single-GPU row.

usage: horovod_2017.py [SGDSIM] [--merge horovod]   (default build/sgdsim; prints a Markdown
table; --merge horovod fuses the gradients by Horovod's 5 ms cycle, scheme.merge "horovod",
instead of the spec sheet's 64 MiB buckets in backward order)

Model, stated before it runs: the Horovod README at d54e3a88 (copy and CSV in
data/validation/horovod-readme-2017/) gives images/s of Inception V3, ResNet-101 and VGG-16 with
TensorFlow's tf_cnn_benchmarks, batch 64 per GPU, synthetic data, on one GPU and on "4 servers
with 4 Pascal GPUs each connected by RoCE-capable 25 Gbit/s network" (NCCL over TCP and over
RDMA) and "16 servers with 4 Pascal GPUs each connected by plain 40 Gbit/s network" (NCCL over
TCP). The description is mapped as docs/spec-sheet.md maps words to fields, nothing more:
- a server of 4 GPUs on PCIe with one NIC: the node preset pcie-4gpu-1nic, its NIC at the
  benchmark's rate (25 or 40 Gbit/s), technology rdma for "RDMA" and tcp with NCCL's sockets
  (node_link.sockets library nccl, its defaults) for "TCP"; 5 us per hop (no latency is given;
  the gradients are megabytes, so it does not bind);
- Horovod at that commit: a gradient's allreduce starts once it is ready, fused into 64 MiB
  buffers (horovod/tensorflow/mpi_ops.cc at d54e3a88, tensor_fusion_threshold): overlap wfbp,
  fusion_bytes 64MiB;
- NCCL 2.0 (closed source then; the earliest version the spec-sheet page documents, 2.3, is
  used for the ring's chunks and channels: one ring per NIC, so one connection, one socket,
  between two servers);
- compute: the benchmark's own single-GPU row, 64 images at its rate (device.calibrate), with
  the measured per-layer profiles inception_v3, resnet101 and vgg16 (PipeDream), 1.189 times
  slower while an allreduce runs beside it (device.overlap_slowdown 0.189, the spec sheet's
  rule for NCCL's kernels beside compute; set after the first comparison, for every overlapping
  check at once: overlap_slowdown_effect.py shows the table's errors with and without it).
Nothing is taken from the multi-GPU rows.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

DATA = "data/validation/horovod-readme-2017/throughput.csv"
SCENARIO = "experiments/validation/horovod-2017.json"
PROFILE = {"Inception V3": "inception_v3", "ResNet-101": "resnet101", "VGG-16": "vgg16"}
# benchmark -> (servers, NIC rate); setup -> node_link fields
BENCHMARKS = {"16-gpu": (4, "25Gbps"), "64-gpu": (16, "40Gbps")}
SETUPS = {
    "TCP Horovod (allreduce on GPU with NCCL)":
        ("TCP", {"technology": "tcp", "sockets": {"library": "nccl"}}),
    "RDMA Horovod (allreduce on GPU with NCCL)": ("RDMA", {"technology": "rdma"}),
}


def predicted(binary, tmp, servers, rate, link, model, one_gpu, overlap, merge="none"):
    """images/s of the scenario on `servers` servers, the link `link` at `rate`."""
    node_link = dict({"bandwidth": rate, "latency": "5us"}, **link)
    out = os.path.join(tmp, "run")
    subprocess.run([binary, "run", SCENARIO, "--quiet", "--out", out,
                    "--set", f"scheme.merge={merge if overlap == 'wfbp' else 'none'}",
                    "--set", f"model={PROFILE[model]}",
                    "--set", f"workers.count={4 * servers}",
                    "--set", f"platform.generate.nodes={servers}",
                    "--set", "platform.generate.node_link=" + json.dumps(node_link),
                    "--set", f"scheme.overlap={overlap}",
                    "--set", f"device.calibrate.iteration_time={64 / one_gpu * 1e3:.4f}ms"],
                   check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["throughput_samples_per_s"]


def main():
    args = sys.argv[1:]
    merge = "none"
    if "--merge" in args:
        merge = args[args.index("--merge") + 1]
        del args[args.index("--merge"):args.index("--merge") + 2]
    binary = args[0] if args else "build/sgdsim"
    rows = list(csv.DictReader(open(DATA)))
    one = {(r["benchmark"], r["model"]): float(r["images_per_s"]) for r in rows
           if r["gpus"] == "1"}
    print("| GPUs (servers), network | model | NCCL over | measured images/s | predicted | error "
          "| no overlap (bound) | error |")
    print("|---|---|---|---|---|---|---|---|")
    errors, ratio, above = [], {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            if r["setup"] not in SETUPS:
                continue
            servers, rate = BENCHMARKS[r["benchmark"]]
            name, link = SETUPS[r["setup"]]
            m = float(r["images_per_s"])
            base = one[(r["benchmark"], r["model"])]
            p, n = (predicted(binary, tmp, servers, rate, link, r["model"], base, overlap, merge)
                    for overlap in ("wfbp", "none"))
            errors.append(100 * (p / m - 1))
            above += n <= m
            ratio.setdefault((r["benchmark"], r["model"]), {})[name] = (m, p)
            print(f"| {r['gpus']} ({servers}), {r['network']} | {r['model']} | {name} | {m:,.1f} "
                  f"| {p:,.1f} | {errors[-1]:+.1f} % | {n:,.1f} | {100 * (n / m - 1):+.1f} % |")
        # A what-if, not a prediction: NCCL's sockets with two channels (NCCL 2.5 and later)
        # instead of NCCL 2.3's one ring per NIC.
        what_if = predicted(binary, tmp, 4, "25Gbps",
                            {"technology": "tcp", "sockets": {"library": "nccl", "channels": 2}},
                            "VGG-16", one[("16-gpu", "VGG-16")], "wfbp")
    print()
    print(f"Median |error| of the {len(errors)} rows: "
          f"{statistics.median(abs(e) for e in errors):.1f} %; "
          f"from {min(errors):+.1f} to {max(errors):+.1f} %. Measured above the no-overlap "
          f"bound: {above} of {len(errors)}.")
    for (bench, model), by in ratio.items():
        if len(by) == 2:
            (mt, pt), (mr, pr) = by["TCP"], by["RDMA"]
            print(f"- {bench}, {model}: RDMA / TCP measured {mr / mt:.2f}, predicted {pr / pt:.2f}.")
    m = ratio[("16-gpu", "VGG-16")]["TCP"][0]
    print(f"- What-if, 16-gpu, VGG-16 over TCP with two socket channels (20 Gb/s, NCCL 2.5+): "
          f"{what_if:,.1f} images/s, {100 * (what_if / m - 1):+.1f} %.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
