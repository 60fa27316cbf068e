#!/usr/bin/env bash
# Straggler experiment (issue 4): 16 workers train ResNet-50 on a 100 Gb/s star, with and
# without one worker computing 2x slower. Synchronous SGD waits for it every iteration;
# asynchronous SGD (16 co-located parameter-server shards) lets the others run on.
# usage: experiments/schemes/stragglers.sh [path/to/sgdsim]   (prints a Markdown table)
set -euo pipefail
bin=${1:-./build/sgdsim}
base=experiments/schemes/stragglers-base.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tp() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['throughput_samples_per_s'])" "$1/summary.json"; }
echo "| scheme | throughput, uniform (samples/s) | throughput, one worker 2x slower | ratio |"
echo "|---|---|---|---|"
for scheme in sync async; do
  sets=(--set "scheme.type=$scheme")
  [[ $scheme == async ]] && sets+=(--set scheme.servers=16)
  "$bin" run "$base" "${sets[@]}" --out "$out/$scheme-uniform" --quiet
  "$bin" run "$base" "${sets[@]}" --set variability.stragglers.fraction=0.0625 \
    --set variability.stragglers.slowdown=2 --out "$out/$scheme-straggler" --quiet
  u=$(tp "$out/$scheme-uniform"); s=$(tp "$out/$scheme-straggler")
  /usr/bin/python3 -c "import sys; u,s=float(sys.argv[2]),float(sys.argv[3]); print(f'| {sys.argv[1]} | {u:.1f} | {s:.1f} | {s/u:.3f} |')" "$scheme" "$u" "$s"
done
echo
echo "(N-1)/N = 0.9375 for N = 16: async must keep at least that; sync falls to about 0.5."
