#!/usr/bin/env bash
# Other jobs' traffic in a training run: example 21 (example 17's 16 PCIe GPUs over 10 GbE TCP,
# ResNet-50 sync with WFBP and a ring) with no other job (example 17 itself), with one or two jobs like it (an
# allreduce of the same gradient after each 110.85 ms of compute), with one job sending back to
# back, and with one that rests 1 s between allreduces. Prints a Markdown table.
# usage: experiments/scale/background.sh [path/to/sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
example=experiments/examples/21-background-traffic.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| other jobs | iteration time, mean (p99) | allreduce per iteration | exposed communication | throughput x alone |"
echo "|---|---|---|---|---|"
row() {  # label, scenario, then --set arguments
  local label=$1 scenario=$2 dir="$out/$RANDOM$RANDOM"
  shift 2
  "$bin" run "$scenario" "$@" --out "$dir" --quiet
  /usr/bin/python3 - "$label" "$dir/summary.json" "$out/alone.json" <<'PY'
import json, os, shutil, sys
label, path, alone_path = sys.argv[1:4]
s = json.load(open(path))
if not os.path.exists(alone_path):
    shutil.copy(path, alone_path)
alone = json.load(open(alone_path))
t = s["iteration_time_s"]
ratio = s["throughput_samples_per_s"] / alone["throughput_samples_per_s"]
print(f"| {label} | {t['mean'] * 1e3:.1f} ms ({t['p99'] * 1e3:.1f} ms) | "
      f"{s['comm_s_per_iter'] * 1e3:.1f} ms | {s['exposed_comm_s_per_iter'] * 1e3:.1f} ms | "
      f"{ratio:.3f} |")
PY
}
row "none (example 17)" experiments/examples/17-pcie-nodes-over-tcp.json
row "1 like this one" "$example"
row "2 like this one" "$example" --set background.jobs=2
row "1 sending back to back" "$example" --set background.gap=0s
row "1 resting 1 s between allreduces" "$example" --set background.gap=1s
