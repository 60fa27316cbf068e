#!/usr/bin/env bash
# Validation against real-cluster measurements (issue 8): runs every case of this folder with
# `sgdsim validate` and prints a Markdown error table (case, metric, measured, simulated,
# error %) and the median absolute error of the iteration-time predictions.
#   headline cases: HTA ResNet-50 DDP (2 x A100), B-Caffe GoogLeNet 2/4/8 nodes, OSU 2/4/8 nodes
#   sensitivity:    B-Caffe with the network calibrated on the OSU log instead
# Each case is calibrated on one scale (its "calibration" source) and predicts the others.
# usage: experiments/validation/run.sh [path/to/sgdsim] [output dir]   (from the repository root)
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/validation}
here=experiments/validation
if [[ ! -x "$bin" ]]; then
  echo "run.sh: $bin not found (build first: cmake --build build -j2)" >&2
  exit 1
fi
echo "## Validation: headline cases"
echo
"$bin" validate "$here/hta-resnet50-ddp.json" "$here/bcaffe-googlenet.json" \
  "$here/osu-allreduce.json" --out "$out"
echo
echo "## Sensitivity: B-Caffe with the network calibrated on the 2-node OSU log"
echo
"$bin" validate "$here/bcaffe-googlenet-osu-network.json" --out "$out/sensitivity"
