#!/usr/bin/env bash
# Training throughput on one cluster of A100-SXM4-40GB nodes from FlagPerf's tables
# (data/validation/flagperf-a100): each model's one-GPU row gives its compute time, and the
# scenario (experiments/validation/flagperf-<model>-a100.json: the spec-sheet mapping of "A100,
# InfiniBand 200 Gb/s": NVLink 300 GB/s inside a node, one 200 Gb/s rdma link per node, NCCL's
# ring, PyTorch DDP's buckets) predicts 8 GPUs on one node and 16 on two; the last column reads
# the nodes as DGX A100 instead (node preset dgx-a100: 8 x 200 Gb/s HDR per node), as the
# suite's ResNet-50 page names them.
#   gpt2      GPT-2 medium, fp32. The one-GPU row accumulates 8 micro-batches of 4 per optimizer
#             step, so a micro-batch's forward + backward is (32 / 14.2 s - one optimizer step)
#             / 8. Rows: the run's optimizer (torch.optim.AdamW tensor by tensor, adamw_loop) and
#             a fused Adam (adam); 16 GPUs from the 8-GPU node's rate (forward + backward =
#             4 x 8 / 97.6 s - one adamw_loop step, keeping the node's loss, as
#             docs/gpu-throughput.md advises); then, as a diagnostic and not a prediction, the
#             first rows with nothing of the allreduce overlapping the backward pass.
#   resnet50  ResNet-50, fp32, batch 256 per GPU (SGD: its step is the default, negligible);
#             rows from the one-GPU row, then 16 GPUs from the 8-GPU node's rate.
# usage: experiments/validation/flagperf_a100.sh [path/to/sgdsim [gpt2|resnet50]]
#        (prints a Markdown table; default gpt2)
# Set after the first comparison, for every overlapping check at once: the scenario's
# device.overlap_slowdown 0.189 (the spec sheet's rule for NCCL beside compute, Lee et al.'s
# mean; not fitted here); overlap_slowdown_effect.py shows each check with and without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
part=${2:-gpt2}
case $part in
  gpt2 | resnet50) ;;
  *) echo "flagperf_a100.sh: expected gpt2 or resnet50, got $part" >&2; exit 2 ;;
esac
/usr/bin/python3 - "${1:-build/sgdsim}" "$part" <<'PY'
import csv, json, os, subprocess, sys, tempfile
bin, part = sys.argv[1], sys.argv[2]
model = {"gpt2": "gpt2_medium", "resnet50": "resnet50"}[part]
scenario = f"experiments/validation/flagperf-{part}-a100.json"
rows = {r["config"]: r for r in csv.DictReader(open("data/validation/flagperf-a100/throughput.csv"))
        if r["model"] == model}

def dgx_scenario(path):
    """The scenario with the DGX A100 node preset (its host path sets the links inside)."""
    s = json.load(open(scenario))
    g = s["platform"]["generate"]
    del g["intra_node_link"]
    g["node"] = {"preset": "dgx-a100"}
    g["node_link"]["bandwidth"] = "1600Gbps"
    json.dump(s, open(path, "w"))

def run(path, sets):
    with tempfile.TemporaryDirectory() as out:
        args = [bin, "run", path, "--out", os.path.join(out, "r"), "--quiet"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True)
        return json.load(open(os.path.join(out, "r", "summary.json")))

def optimizer_s(opt):
    """sgdsim's optimizer step for `opt` on the scenario's device (one GPU's run)."""
    one_gpu = ["workers.count=1", "workers.per_node=1", "platform.generate.nodes=1",
               "platform.generate.devices_per_node=1", f"device.optimizer={opt}"]
    return run(scenario, one_gpu)["update_s_per_iter"]

def step_s(r):
    return int(r["micro_batch_per_gpu"]) * int(r["nodes"]) * int(r["gpus_per_node"]) / float(r["p_core_per_s"])

one, node = rows["1x1"], rows["1x8"]
cases = []  # (label, sets, forward + backward of one micro-batch, config)
if part == "gpt2":
    for opt in ("adamw_loop", "adam"):
        opt_s = optimizer_s(opt)
        micro_s = (step_s(one) * int(one["gradient_accumulation"]) - opt_s) / int(one["gradient_accumulation"])
        cases += [(f"`{opt}`", [f"device.optimizer={opt}"], micro_s, c) for c in ("1x8", "2x8")]
    cases.append(("`adamw_loop`, from the 8-GPU node", ["device.optimizer=adamw_loop"],
                  step_s(node) - optimizer_s("adamw_loop"), "2x8"))
    # Not a prediction: nothing of the allreduce overlapping the backward pass.
    cases += [("`adamw_loop`, no overlap", ["device.optimizer=adamw_loop", "scheme.overlap=none"],
               cases[0][2], c) for c in ("1x8", "2x8")]
else:
    cases += [("from one GPU", [], step_s(one), c) for c in ("1x8", "2x8")]
    cases.append(("from the 8-GPU node", [], step_s(node), "2x8"))
head = "optimizer, calibration" if part == "gpt2" else "calibration"
print(f"| {head} | GPUs (nodes) | measured /s | predicted /s | error | predicted iteration: "
      "compute + exposed communication + optimizer | DGX A100 preset: predicted /s | error |")
print("|---|---|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as tmp:
    dgx = os.path.join(tmp, "dgx.json")
    dgx_scenario(dgx)
    for label, sets, micro_s, config in cases:
        r = rows[config]
        nodes, gpus = int(r["nodes"]), int(r["nodes"]) * int(r["gpus_per_node"])
        sets = sets + [f"device.calibrate.iteration_time={micro_s:.6f}s",
                       f"workers.count={gpus}", f"platform.generate.nodes={nodes}"]
        batch = gpus * int(r["micro_batch_per_gpu"])
        measured = float(r["p_core_per_s"])
        s, d = run(scenario, sets), run(dgx, sets)
        t, td = s["iteration_time_s"]["mean"], d["iteration_time_s"]["mean"]
        err = lambda x: f"{(x - measured) / measured * 100:+.1f} %"
        print(f"| {label} | {gpus} ({nodes}) | {measured:.1f} | {batch / t:.1f} | {err(batch / t)} | "
              f"{t * 1e3:.1f} ms = {s['compute_s_per_iter'] * 1e3:.1f} + "
              f"{s['exposed_comm_s_per_iter'] * 1e3:.1f} + {s['update_s_per_iter'] * 1e3:.1f} | "
              f"{batch / td:.1f} | {err(batch / td)} |")
PY
