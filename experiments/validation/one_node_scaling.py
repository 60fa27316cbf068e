#!/usr/bin/python3
"""One node, calibrated on one GPU: the published 2-16 GPU rates of a node against sgdsim.

usage: one_node_scaling.py [SGDSIM]   (default build/sgdsim)

Model, stated before it runs: each case is a row group of
data/calibration/gpu-training-throughput/ (ResNet-50, one node) whose rates were measured with
PyTorch, TensorFlow or MXNet data parallelism over NCCL inside one node. sgdsim gets the 1-GPU
rate only (`device.calibrate`: batch / rate per mini-batch), the node preset of docs/host-path.md
that describes the node (its NVLink and PCIe paths), `resnet50`'s measured per-layer profile,
sync SGD with wait-free backprop and PyTorch DDP's buckets (25 MB, the first 1 MiB), fp32
gradients (fp32 and TF32 rows, and autocast AMP rows, whose parameters stay fp32: PyTorch's
torch.cuda.amp and TensorFlow's AMP; MXNet's AMP rows are left out: their gradient type is not
stated), and predicts the per-GPU rate on 2-16 GPUs. Nothing is fitted to the node rates.
Set after the first comparison, for every overlapping check at once: the compute beside the
allreduces 1.189 times slower (device.overlap_slowdown, the spec sheet's rule for NCCL beside
compute; here it moves the rates by 0.1 % at most: the allreduce is a small part of the step).
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

DATA = "data/calibration/gpu-training-throughput/throughput.csv"
# (source_id, gpu, memory GB, system prefix, precisions, node preset)
CASES = [
    ("dle-pytorch-rn50", "V100", "16", "DGX-1", ("fp32", "amp"), "dgx1-v100"),
    ("dle-pytorch-rn50", "A100", "80", "DGX A100", ("tf32", "amp"), "dgx-a100"),
    ("dle-tf-rn50", "V100", "16", "DGX-1", ("fp32", "amp"), "dgx1-v100"),
    ("dle-tf-rn50", "A100", "40", "DGX A100", ("tf32", "amp"), "dgx-a100"),
    ("dle-mxnet-rn50", "V100", "16", "DGX-1", ("fp32",), "dgx1-v100"),
    ("dle-mxnet-rn50", "A100", "80", "DGX A100", ("tf32",), "dgx-a100"),
    ("dle-tf-rn50", "V100", "32", "DGX-2", ("fp32", "amp"), "dgx2"),
    ("dle-mxnet-rn50", "V100", "32", "DGX-2", ("fp32",), "dgx2"),
    ("lambda-bench-2024", "H100", "80", "server", ("fp32", "amp"), "dgx-h100"),
    ("lambda-bench-2024", "A100", "80", "server", ("fp32", "amp"), "dgx-a100"),
    ("lambda-bench-2024", "V100", "16", "Lambda Cloud", ("fp32", "amp"), "dgx1-v100"),
]


def rows_of(rows, source, gpu, mem, system, precision):
    """{gpus: (samples/s, batch)} of one measurement."""
    out = {}
    for r in rows:
        if (r["source_id"], r["gpu"], r["gpu_memory_gb"], r["precision"]) == (source, gpu, mem, precision) \
                and r["system"].startswith(system) and r["model"].startswith("ResNet-50") \
                and r["form_factor"] in ("SXM2", "SXM3", "SXM4", "SXM5"):
            out[int(r["gpus"])] = (float(r["samples_per_s"]), int(r["batch_per_gpu"]))
    return out


def predict(sgdsim, preset, gpus, batch, iteration_ms, out):
    args = [sgdsim, "run", "experiments/examples/02-minimal.json", "--out", out, "--quiet",
            "--set", "model=resnet50", "--set", f"batch_size={batch}",
            "--set", f"workers.count={gpus}", "--set", f"workers.per_node={gpus}",
            "--set", f"platform.generate.devices_per_node={gpus}",
            "--set", f"platform.generate.node={preset}",
            "--set", f"device.calibrate.iteration_time={iteration_ms}ms",
            "--set", f"device.calibrate.batch_size={batch}",
            "--set", "scheme.first_bucket_bytes=1MiB", "--set", "iterations=5",
            "--set", "device.overlap_slowdown=0.189",
            "--set", "warmup_iterations=1"]
    subprocess.run(args, check=True)
    s = json.load(open(os.path.join(out, "summary.json")))
    return s["throughput_samples_per_s"] / gpus


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    rows = list(csv.DictReader(open(DATA)))
    print("| source | GPU | precision | preset | GPUs | measured per GPU (% of 1 GPU) | "
          "predicted per GPU (% of 1 GPU) | error |")
    print("|---|---|---|---|---|---|---|---|")
    errors, fast = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for source, gpu, mem, system, precisions, preset in CASES:
            for precision in precisions:
                m = rows_of(rows, source, gpu, mem, system, precision)
                one, batch = m[1]
                for n in sorted(k for k in m if k > 1):
                    measured = m[n][0] / n
                    ms = f"{batch / one * 1e3:.6g}"
                    p = predict(sgdsim, preset, n, batch, ms, os.path.join(tmp, f"{len(errors)}"))
                    e = 100 * (p / measured - 1)
                    errors.append(abs(e))
                    fast += e > 0
                    print(f"| {source} | {gpu} {mem} GB | {precision} | `{preset}` | {n} | "
                          f"{measured:.1f} ({100 * measured / one:.0f} %) | "
                          f"{p:.1f} ({100 * p / one:.0f} %) | {e:+.1f} % |")
    print(f"\n{len(errors)} predicted node rates: median |error| {statistics.median(errors):.1f} %, "
          f"largest {max(errors):.1f} %, {sum(e <= 5 for e in errors)} within 5 %, {fast} predicted "
          "faster than measured.")


if __name__ == "__main__":
    main()
