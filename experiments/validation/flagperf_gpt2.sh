#!/usr/bin/env bash
# GPT-2 medium training throughput on A100-SXM4-40GB from FlagPerf's table
# (data/validation/flagperf-gpt2-a100): the one-GPU row gives the compute time, and
# experiments/validation/flagperf-gpt2-a100.json (the spec-sheet mapping: NVLink 300 GB/s inside
# a node, one 200 Gb/s InfiniBand link per node, NCCL 2.12's ring, PyTorch DDP's buckets)
# predicts 8 GPUs on one node and 16 on two. The one-GPU row accumulates 8 micro-batches of 4
# per optimizer step, so a micro-batch's forward + backward is (32 / 14.2 s - one optimizer step)
# / 8, the optimizer step being the scenario's (device.optimizer). Rows: the run's optimizer as
# FlagPerf ran it (torch.optim.AdamW tensor by tensor, adamw_loop) and as a fused Adam (adam);
# last, 16 GPUs from the 8-GPU node's rate as docs/gpu-throughput.md advises where a node rate
# exists (forward + backward = 4 x 8 / 97.6 s - one adamw_loop step, keeping the node's loss);
# then, as a diagnostic and not a prediction, the first rows with no overlap of the allreduce.
# usage: experiments/validation/flagperf_gpt2.sh [path/to/sgdsim]     (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/../.."
/usr/bin/python3 - "${1:-build/sgdsim}" <<'PY'
import csv, json, os, subprocess, sys, tempfile
bin = sys.argv[1]
scenario = "experiments/validation/flagperf-gpt2-a100.json"
rows = {r["config"]: r for r in csv.DictReader(open("data/validation/flagperf-gpt2-a100/throughput.csv"))}
PARAMETERS = 354823168  # models/profiles/gpt2_medium.json
BYTES = {"adamw_loop": 88, "adam": 28}  # device.optimizer, docs/transformer-profiles.md
MEMORY_BPS = 1555e9  # A100 40GB datasheet: 1,555 GB/s HBM2

def run(sets):
    with tempfile.TemporaryDirectory() as out:
        args = [bin, "run", scenario, "--out", os.path.join(out, "r"), "--quiet"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True)
        return json.load(open(os.path.join(out, "r", "summary.json")))

one = rows["1x1"]
per_step = int(one["global_batch"]) / float(one["p_core_seq_per_s"])
print("| optimizer, calibration | GPUs (nodes) | measured seq/s | predicted seq/s | error | predicted iteration: compute + exposed communication + optimizer |")
print("|---|---|---|---|---|---|")
node = rows["1x8"]
node_step = int(node["micro_batch_per_gpu"]) * int(node["gpus_per_node"]) / float(node["p_core_seq_per_s"])
cases = []
for opt in ("adamw_loop", "adam"):
    step_s = PARAMETERS * BYTES[opt] / MEMORY_BPS
    micro_s = (per_step - step_s) / int(one["gradient_accumulation"])
    cases += [(f"`{opt}`", opt, micro_s, config) for config in ("1x8", "2x8")]
cases.append(("`adamw_loop`, from the 8-GPU node", "adamw_loop",
              node_step - PARAMETERS * BYTES["adamw_loop"] / MEMORY_BPS, "2x8"))
# Not a prediction: the same as the first two rows with nothing of the allreduce overlapping
# the backward pass (scheme.overlap none).
cases += [(f"`adamw_loop`, no overlap", "adamw_loop", cases[0][2], c, "none") for c in ("1x8", "2x8")]
for label, opt, micro_s, config, *overlap in cases:
    r = rows[config]
    nodes, gpus = int(r["nodes"]), int(r["nodes"]) * int(r["gpus_per_node"])
    s = run([f"device.optimizer={opt}", f"device.calibrate.iteration_time={micro_s:.6f}s",
             f"workers.count={gpus}", f"platform.generate.nodes={nodes}",
             f"scheme.overlap={overlap[0] if overlap else 'wfbp'}"])
    t = s["iteration_time_s"]["mean"]
    predicted = gpus * int(r["micro_batch_per_gpu"]) / t
    measured = float(r["p_core_seq_per_s"])
    print(f"| {label} | {gpus} ({nodes}) | {measured:.1f} | {predicted:.1f} | "
          f"{(predicted - measured) / measured * 100:+.1f} % | {t * 1e3:.1f} ms = "
          f"{s['compute_s_per_iter'] * 1e3:.1f} + {s['exposed_comm_s_per_iter'] * 1e3:.1f} + "
          f"{s['update_s_per_iter'] * 1e3:.1f} |")
PY
