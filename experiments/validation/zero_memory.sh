#!/usr/bin/env bash
# sgdsim's memory per GPU under DeepSpeed ZeRO stages 2 and 3 against the two memory_status
# lines of deepspeedai/DeepSpeed#3734 (a 13B-parameter model on 8 A100 80 GB; data:
# data/validation/deepspeed-zero-memory-a100).
#
# Decided before the comparison (nothing is fitted to it):
# - Compared: sgdsim's model states per GPU (memory.model_states_bytes: ZeRO's 2 + 2 + K bytes
#   per parameter, K = 12 for mixed-precision Adam, sharded as the stage says) against
#   `current alloc` after the training step, when the activations are freed. The peak
#   (`max`) holds activations of a batch and sequence length the post does not give, so it
#   is printed beside sgdsim's peak without activations and not compared.
# - Parameters: the post's "13B", 13.0e9 (the exact count is not given); fp16 with Adam
#   (DeepSpeed's fp16 optimizer: fp32 master weights, momentum and variance).
# usage: experiments/validation/zero_memory.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
csv=data/validation/deepspeed-zero-memory-a100/memory.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| ZeRO stage | GPUs | measured after step (GiB) | predicted model states (GiB) | error | measured peak (GiB) | predicted peak without activations (GiB) |"
echo "|---|---|---|---|---|---|---|"
for stage in 2 3; do
  "$bin" run experiments/validation/zero-13b-a100.json --set "scheme.stage=$stage" \
    --out "$tmp/z$stage" >/dev/null
  /usr/bin/python3 - "$csv" "$stage" "$tmp/z$stage/summary.json" <<'PY'
import csv, json, sys
row = next(r for r in csv.DictReader(open(sys.argv[1])) if r["stage"] == sys.argv[2])
mem = json.load(open(sys.argv[3]))["memory"]
gib = 1024 ** 3
after, peak = float(row["current_alloc_after_step_gib"]), float(row["max_alloc_gib"])
states, top = mem["model_states_bytes"] / gib, mem["peak_bytes"] / gib
err = 100 * (states / after - 1)
print(f"| {row['stage']} | {row['gpus']} | {after:.2f} | {states:.2f} | {err:+.1f} % | {peak:.2f} | {top:.2f} |")
PY
done
echo
echo "Model states from ZeRO's count (13.0e9 parameters, fp16, Adam, 8 GPUs); activations not modelled."
