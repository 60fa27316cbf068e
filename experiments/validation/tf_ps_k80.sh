#!/usr/bin/env bash
# TensorFlow's parameter-server benchmark on 1 to 8 AWS p2.8xlarge instances (8 K80 each,
# distributed_replicated: each instance sums its 8 GPUs' gradients and pushes them to
# parameter servers that run on the worker instances, one per instance) against sgdsim.
# Data: data/validation/tf-benchmarks-aws-k80-ps (tensorflow/tensorflow benchmarks.md).
#
# Decided before any larger scale was looked at (nothing is fitted to 16-64 GPUs):
# - A worker is one instance: its 8 GPUs and their local gradient sum are its compute, whose
#   time is calibrated on the smallest scale only, one instance (8 GPUs): 8 x the page's batch
#   per GPU (64; 32 for ResNet-152) per step at the measured 8-GPU rate (device.calibrate).
# - Parameter servers: the byteps collective with co-located servers, one per instance (the
#   page: "Equal numbers of parameter servers and worker servers"), pushes of 4 MB partitions
#   and pulls back; at 64 GPUs InceptionV3 ran 6 servers and ResNet-152 4 on 8 instances, which
#   co-located servers cannot express, so those points are left out.
# - Network: AWS's p2.8xlarge spec, 10 Gbit/s, kernel TCP (link technology tcp, 5 us).
# - TensorFlow's step graph pushes a gradient when it is ready; whether the pulls of the next
#   step overlap anything is not documented, so two bounds are printed: wait-free backprop
#   (every push and pull overlapped with backprop) and no overlap (all of it after backprop).
# usage: experiments/validation/tf_ps_k80.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
csv=data/validation/tf-benchmarks-aws-k80-ps/throughput.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() {  # MODEL PROFILE INSTANCES OVERLAP CALIBRATED_STEP_S INSTANCE_BATCH -> images/s
  "$bin" run experiments/validation/tf-k80-ps.json --set "model=$2" \
    --set "workers.count=$3" --set "platform.generate.nodes=$3" --set "scheme.overlap=$4" \
    --set "batch_size=$6" --set "device.calibrate.batch_size=$6" \
    --set "device.calibrate.iteration_time=${5}s" --out "$tmp/$1-$3-$4" >/dev/null
  /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['throughput_samples_per_s'])" \
    "$tmp/$1-$3-$4/summary.json"
}

echo "| model | GPUs (instances) | measured images/s | predicted, wait-free backprop | error | predicted, no overlap | error |"
echo "|---|---|---|---|---|---|---|"
for spec in "ResNet-50 resnet50 8 64" "InceptionV3 inception_v3 4 64" "ResNet-152 resnet152 4 32"; do
  read -r name profile max batch <<<"$spec"
  measured() {  # instances -> images/s at the page's batch per GPU
    /usr/bin/python3 - "$csv" "$name" "$1" "$batch" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["model"] == sys.argv[2] and r["batch_per_gpu"] == sys.argv[4] and int(r["gpus"]) == 8 * int(sys.argv[3]):
        print(r["images_per_s"])
PY
  }
  one=$(measured 1)
  step=$(/usr/bin/python3 -c "print(f'{8 * $batch / $one:.6f}')")
  for n in 1 2 4 8; do
    [ "$n" -le "$max" ] || continue
    m=$(measured "$n")
    w=$(rate "$name" "$profile" "$n" wfbp "$step" $((8 * batch)))
    o=$(rate "$name" "$profile" "$n" none "$step" $((8 * batch)))
    /usr/bin/python3 - "$name" "$n" "$m" "$w" "$o" <<'PY'
import sys
name, n = sys.argv[1], int(sys.argv[2])
m, w, o = (float(x) for x in sys.argv[3:])
err = lambda p: f"{100 * (p / m - 1) + 0:+.1f} %".replace("-0.0", "+0.0")
print(f"| {name} | {8 * n} ({n}) | {m:g} | {w:.0f} | {err(w)} | {o:.0f} | {err(o)} |")
PY
  done
done | tee "$tmp/rows"
echo
echo "Calibrated on one instance (8 GPUs): its step of 8 x the batch per GPU (64; ResNet-152 32) at the measured rate; 16-64 GPUs are predicted."
# The change of images/s per GPU with the instance count, measured and at each bound, and the
# median |error| of the predicted rows.
/usr/bin/python3 - "$tmp/rows" <<'PY'
import statistics, sys
print()
rows = [[c.strip() for c in line.split("|")[1:-1]] for line in open(sys.argv[1])]
pct = lambda x: f"{round(x) + 0:+d} %"
per_gpu = {}
for name, gpus, m, w, _, o, _ in rows:
    per_gpu.setdefault(name, []).append((int(gpus.split()[0]), float(m), float(w), float(o)))
for name, pts in per_gpu.items():
    (g1, m1, w1, o1), (gn, mn, wn, on) = pts[0], pts[-1]
    ch = lambda a, b: pct(100 * (b / gn) / (a / g1) - 100)
    print(f"- {name}, images/s per GPU from {g1} to {gn} GPUs: measured {ch(m1, mn)}, "
          f"wait-free backprop {ch(w1, wn)}, no overlap {ch(o1, on)}.")
pred = [r for r in rows if int(r[1].split()[0]) > 8]
med = lambda k: statistics.median(abs(float(r[k].split()[0])) for r in pred)
print(f"- Median |error| of the {len(pred)} predicted rows: wait-free backprop {med(4):.1f} %, "
      f"no overlap {med(6):.1f} %.")
PY
