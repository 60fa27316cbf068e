#!/usr/bin/env bash
# MG-WFBP against WFBP and no overlap on B-Caffe's measured GoogLeNet backward pass, at the
# node counts the logs were taken at (2, 4, 8). Prints a Markdown table of backward+allreduce
# time per iteration and the speedup over no overlap.
# usage: experiments/mgwfbp/run.sh [path/to/sgdsim] [validation dir]
set -euo pipefail
bin=${1:-./build/sgdsim}
val=${2:-data/validation/bcaffe-googlenet}
here=experiments/mgwfbp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mean() { /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['iteration_time_s']['mean'], s['buckets'])" "$1/summary.json"; }
echo "| nodes | no overlap (ms) | WFBP per layer (ms) | MG-WFBP (ms) | MG-WFBP buckets | WFBP speedup | MG-WFBP speedup |"
echo "|---|---|---|---|---|---|---|"
for n in 2 4 8; do
  /usr/bin/python3 "$here/bcaffe_profile.py" "$val/tmp${n}comm.log" "$tmp/profile.json"
  cp "$here/base.json" "$tmp/base.json"
  common=(--set "workers.count=$n" --quiet)
  "$bin" run "$tmp/base.json" "${common[@]}" --set scheme.overlap=none --out "$tmp/none-$n"
  "$bin" run "$tmp/base.json" "${common[@]}" --out "$tmp/wfbp-$n"
  "$bin" run "$tmp/base.json" "${common[@]}" --set scheme.merge=mgwfbp --out "$tmp/mg-$n"
  read -r t_none _ < <(mean "$tmp/none-$n"); read -r t_wfbp _ < <(mean "$tmp/wfbp-$n"); read -r t_mg b_mg < <(mean "$tmp/mg-$n")
  /usr/bin/python3 -c "import sys; n,a,b,c,k=sys.argv[1:]; a,b,c=float(a),float(b),float(c); print(f'| {n} | {a*1e3:.2f} | {b*1e3:.2f} | {c*1e3:.2f} | {k} | {a/b:.3f} | {a/c:.3f} |')" "$n" "$t_none" "$t_wfbp" "$t_mg" "$b_mg"
done
