#!/usr/bin/env bash
# Per-layer profile check (issue 20): the profile `sgdsim trace --out` makes from the HTA
# ResNet-50 DDP trace (one layer per conv / batch-norm / linear op), simulated at the traced
# batch on 2 workers with the scenario `sgdsim validate` derives for hta-resnet50-ddp.json (the
# calibrated alpha-beta network, the measured update step as device_speed, PyTorch DDP's bucket
# caps: fusion_bytes 25 MiB, first_bucket_bytes 1 MiB). Prints the simulated and the traced
# step (mean of the trace's 3 steps); extra --set arguments go to the run.
# usage: experiments/validation/per_layer.sh [path/to/sgdsim] [output dir] [--set PATH=VALUE]...
#        (from the repo root)
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/validation-per-layer}
shift $(($# < 2 ? $# : 2))
trace=data/validation/hta/nccl_parser_config/nccl_data.json.gz
if [[ ! -x "$bin" ]]; then
  echo "per_layer.sh: $bin not found (build first: cmake --build build -j2)" >&2
  exit 1
fi
mkdir -p "$out"
"$bin" validate experiments/validation/hta-resnet50-ddp.json --out "$out/validate" > /dev/null
# The batch is the traced steps' per-rank mini-batch; any N gives the same times as long as the
# profile and the run agree (the trace does not record it).
"$bin" trace "$trace" --out "$out/profile.json" --batch-size 32 | tail -n 1
"$bin" run "$out/validate/hta-resnet50-ddp/2-x-A100/scenario.json" --quiet \
  --set "model=$(cd "$out" && pwd)/profile.json" --set batch_size=32 \
  --set output.timeline=false "$@" --out "$out/run"
"$bin" trace "$trace" --json > "$out/trace.json"
python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
sim = json.load(open(f"{out}/run/summary.json"))["iteration_time_s"]["mean"]
steps = json.load(open(f"{out}/trace.json"))["steps"]
traced = sum(s["time_s"] for s in steps) / len(steps)
print(f"per-layer profile, 2 workers, batch 32: simulated {sim * 1e3:.3f} ms, "
      f"traced {traced * 1e3:.3f} ms (mean of {len(steps)} steps), "
      f"error {(sim - traced) / traced * 100:+.1f} %")
EOF
