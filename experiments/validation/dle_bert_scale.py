#!/usr/bin/python3
"""BERT-large pre-training on up to 64 nodes, predicted from each series' one-node row.

usage: dle_bert_scale.py [SGDSIM]   (default build/sgdsim; prints a Markdown table)

Model, stated before it runs: NVIDIA DeepLearningExamples' BERT READMEs (copies in
data/calibration/gpu-training-throughput/) give the mixed-precision pre-training rate of
BERT-large on 1 to 64 nodes, phase 1 (sequence 128) and phase 2 (512), in four series:
PyTorch on DGX-2H (16 V100, 8 x 100 Gb/s EDR; pytorch:19.07, NCCL 2.4), PyTorch on DGX A100 80GB
(8 A100, 8 x 200 Gb/s HDR; pytorch:21.11), TensorFlow on DGX-2H (19.08) and TensorFlow on DGX
A100 40GB (20.06). Their scripts accumulate the gradients of a step's micro-batches and average
them in one fp16 allreduce after the last micro-batch's backward pass (PyTorch:
allreduce_post_accumulation and _fp16, on in run_pretraining.sh; TensorFlow: Horovod's allreduce
of the accumulated fp16 gradients), then take LAMB's step: `overlap` none, one bucket (Horovod's
64 MiB fusion buffers for TensorFlow), `accumulation_steps` the step's micro-batches, as
docs/spec-sheet.md ("Frameworks") maps them.
The accumulation steps are the tables' own where they give them; the PyTorch DGX-2H table does
not, and they are read as run_pretraining.sh's global batches, 65,536 and 32,768 sequences, kept
at every scale (1,024 GPUs x 64 is 65,536 exactly). The PyTorch DGX A100 table's "16 and 18"
steps at 4 nodes, phase 1, is read from its accumulated batch per GPU (2,048 / 256 = 8). The
nodes are mapped as the spec-sheet page maps them: DGX-2H with the node preset `dgx2h` and 8 x
100 Gb/s `rdma` (experiments/validation/dle-bert-large-dgx2h.json), DGX A100 with the node
preset `dgx-a100` and 8 x 200 Gb/s (dle-bert-large-dgx-a100.json). A micro-batch's compute time
is the series' one-node row's: GPUs per node x micro-batch / rate. Nothing else is taken from
the tables.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

DATA = "data/calibration/gpu-training-throughput/"
GLOBAL_BATCH = {128: 65536, 512: 32768}  # PyTorch run_pretraining.sh's phase 1 and phase 2


def table_rows(readme, title):
    """The cells of each data row of the Markdown table after the line `title`."""
    lines = open(DATA + readme).read().split(title, 1)[1].splitlines()
    rows, started = [], False
    for line in lines:
        if not line.startswith("|"):
            if started:
                break
            continue
        started = True
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if cells[0].isdigit():
            rows.append(cells)
    return rows


def pair(cell):
    """The two numbers of "64 , 32" or "126 and 256"."""
    return [int(x) for x in re.findall(r"\d+", cell)]


def pytorch_dgx2h():
    """(nodes, sequence, micro-batch, accumulation, sequences/s) of the DGX-2H table."""
    out = []
    for c in table_rows("dle-pytorch-bert-readme-78ec6802.md",
                        "###### Pre-training on multiple NVIDIA DGX-2H With 32G"):
        nodes, micro, seq = int(c[0]), int(c[3]), int(c[4])
        out.append((nodes, seq, micro, GLOBAL_BATCH[seq] // (16 * nodes * micro), float(c[6])))
    return out


def pytorch_dgx_a100():
    out = []
    for c in table_rows("dle-pytorch-bert-readme-a07d20a1.md",
                        "###### Pre-training NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling"):
        micro, accumulated = pair(c[2])[1], pair(c[3])[1]  # the FP16 values
        out.append((int(c[0]), int(c[5]), micro, accumulated // micro, float(c[6])))
    return out


def tensorflow(title):
    def rows():
        return [(int(c[0]), int(c[1]), pair(c[2])[0], pair(c[3])[0], float(c[5]))
                for c in table_rows("dle-tf-bert-readme-9de48bc9.md", title)]
    return rows


# TensorFlow's allreduces go through Horovod, whose fusion buffer is 64 MiB in 0.19 and 0.20.
HOROVOD_FUSION = "scheme.fusion_bytes=64MiB"

SERIES = [  # name, rows, scenario (its NCCL version and node), GPUs per node, extra --set
    ("PyTorch, DGX-2H", pytorch_dgx2h, "dle-bert-large-dgx2h.json", 16, []),
    ("PyTorch, DGX A100 80GB", pytorch_dgx_a100, "dle-bert-large-dgx-a100.json", 8, []),
    ("TensorFlow, DGX-2H",
     tensorflow("###### Pre-training training performance: multi-node on DGX-2H 32GB"),
     "dle-bert-large-dgx2h.json", 16, [HOROVOD_FUSION]),
    ("TensorFlow, DGX A100 40GB",
     tensorflow("###### Pre-training training performance: multi-node on DGX A100 40GB"),
     "dle-bert-large-dgx-a100.json", 8, ["device.memory_bandwidth=1555GBps", HOROVOD_FUSION]),
]


def predict(sgdsim, scenario, per_node, extra, nodes, micro, step_s, accumulation):
    sets = extra + [f"platform.generate.nodes={nodes}", f"workers.count={per_node * nodes}",
                    f"batch_size={micro}", f"device.calibrate.batch_size={micro}",
                    f"device.calibrate.iteration_time={step_s * 1e3:.6f}ms",
                    f"scheme.accumulation_steps={accumulation}", "flow_symmetry=rotation"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        args = [sgdsim, "run", "experiments/validation/" + scenario, "--out", out, "--quiet"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True)
        return json.load(open(os.path.join(out, "summary.json")))


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    print("| series | sequence, micro-batch | nodes (GPUs) | accumulation steps | measured seq/s | "
          "predicted seq/s | error | predicted step: compute + exposed communication + "
          "optimizer |")
    print("|---|---|---|---|---|---|---|---|")
    summary = []
    for name, rows_of, scenario, per_node, extra in SERIES:
        rows, errors, scaling = rows_of(), [], ""
        for nodes, seq, micro, accumulation, rate in rows:
            one = next(r for r in rows if r[0] == 1 and r[1] == seq)
            step_s = per_node * one[2] / one[4]
            s = predict(sgdsim, scenario, per_node, extra, nodes, micro, step_s, accumulation)
            p = s["throughput_samples_per_s"]
            err = 100 * (p / rate - 1)
            if nodes > 1:
                errors.append(err)
            if nodes == max(r[0] for r in rows) and seq == 128:
                linear = nodes * one[4]
                scaling = (f"; phase 1 at {nodes} nodes, {100 * rate / linear:.1f} % of linear "
                           f"scaling measured, {100 * p / linear:.1f} % predicted")
            ms = lambda k: 1e3 * s[k]
            print(f"| {name} | {seq}, {micro} | {nodes} ({per_node * nodes}) | {accumulation} | "
                  f"{rate:g} | {p:.1f} | {err:+.1f} % | "
                  f"{1e3 * s['iteration_time_s']['mean']:.1f} ms = {ms('compute_s_per_iter'):.1f}"
                  f" + {ms('exposed_comm_s_per_iter'):.1f} + {ms('update_s_per_iter'):.1f} |")
        summary.append((name, errors, scaling))
    print()
    for name, errors, scaling in summary:
        print(f"- {name}: {len(errors)} multi-node rows, median |error| "
              f"{statistics.median([abs(e) for e in errors]):.1f} %, from {min(errors):+.1f} to "
              f"{max(errors):+.1f} %{scaling}")


if __name__ == "__main__":
    main()
