#!/usr/bin/python3
"""BERT-large pre-training on 1 to 64 DGX-2H nodes, predicted from the one-node row.

usage: dle_bert_dgx2h.py [SGDSIM]   (default build/sgdsim; prints a Markdown table)

Model, stated before it runs: NVIDIA DeepLearningExamples' PyTorch BERT README (the copy in
data/calibration/gpu-training-throughput/dle-pytorch-bert-readme-78ec6802.md, "Pre-training on
multiple NVIDIA DGX-2H With 32G", pytorch:19.07 container) gives the mixed-precision rate of
phase 1 (sequence 128, 64 sequences per GPU per micro-batch) and phase 2 (512, 8) on 1, 4, 16
and 64 nodes of 16 V100. Its scripts/run_pretraining.sh leaves allreduce_post_accumulation and
allreduce_post_accumulation_fp16 on: one fp16 allreduce of all gradients after the last
micro-batch's backward pass (`overlap` none, one bucket), then LAMB. The table does not give the
accumulation steps; they are read as the phases' global batches of run_pretraining.sh, 65,536
and 32,768 sequences, kept at every scale (1,024 GPUs x 64 is 65,536 exactly):
accumulation = global batch / (GPUs x micro-batch). The node is mapped as docs/spec-sheet.md
maps "DGX-2H: 16 V100 SXM3 on NVSwitch, 8 x 100 Gb/s EDR InfiniBand, NCCL 2.4"
(experiments/validation/dle-bert-large-dgx2h.json). The compute time of a micro-batch is the
one-node row's: 16 x micro-batch / rate. Nothing else is taken from the table.
"""
import json
import os
import subprocess
import sys
import tempfile

README = "data/calibration/gpu-training-throughput/dle-pytorch-bert-readme-78ec6802.md"
SCENARIO = "experiments/validation/dle-bert-large-dgx2h.json"
TITLE = "###### Pre-training on multiple NVIDIA DGX-2H With 32G"
GLOBAL_BATCH = {128: 65536, 512: 32768}  # run_pretraining.sh's phase 1 and phase 2
GPUS_PER_NODE = 16


def measured_rows():
    """[(nodes, sequence length, fp16 micro-batch, fp16 sequences/s)] of the README's table."""
    lines = open(README).read().split(TITLE, 1)[1].splitlines()
    rows = []
    for line in lines:
        if line.startswith("######"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or not cells[0].isdigit():
            continue
        rows.append((int(cells[0]), int(cells[4]), int(cells[3]), float(cells[6])))
    return rows


def predict(sgdsim, nodes, seq, micro, step_s, accumulation):
    sets = [f"platform.generate.nodes={nodes}", f"workers.count={GPUS_PER_NODE * nodes}",
            f"batch_size={micro}", f"device.calibrate.batch_size={micro}",
            f"device.calibrate.iteration_time={step_s * 1e3:.6f}ms",
            f"scheme.accumulation_steps={accumulation}", "flow_symmetry=rotation"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        args = [sgdsim, "run", SCENARIO, "--out", out, "--quiet"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True)
        return json.load(open(os.path.join(out, "summary.json")))


def main():
    sgdsim = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    rows = measured_rows()
    print("| sequence, micro-batch | nodes (GPUs) | accumulation steps | measured seq/s | "
          "predicted seq/s | error | predicted step: compute + exposed communication + "
          "optimizer |")
    print("|---|---|---|---|---|---|---|")
    errors = []
    for nodes, seq, micro, rate in rows:
        one = next(r for r in rows if r[0] == 1 and r[1] == seq)
        step_s = GPUS_PER_NODE * micro / one[3]
        accumulation = GLOBAL_BATCH[seq] // (GPUS_PER_NODE * nodes * micro)
        s = predict(sgdsim, nodes, seq, micro, step_s, accumulation)
        p = s["throughput_samples_per_s"]
        err = 100 * (p / rate - 1)
        if nodes > 1:
            errors.append(abs(err))
        ms = lambda k: 1e3 * s[k]
        print(f"| {seq}, {micro} | {nodes} ({GPUS_PER_NODE * nodes}) | {accumulation} | "
              f"{rate:g} | {p:.1f} | {err:+.1f} % | {1e3 * s['iteration_time_s']['mean']:.1f} ms"
              f" = {ms('compute_s_per_iter'):.1f} + {ms('exposed_comm_s_per_iter'):.1f} + "
              f"{ms('update_s_per_iter'):.1f} |")
    errors.sort()
    mid = len(errors) // 2
    median = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
    print(f"\nMedian |error| over the {len(errors)} multi-node rows: {median:.1f} %, "
          f"largest {errors[-1]:.1f} %.")


if __name__ == "__main__":
    main()
