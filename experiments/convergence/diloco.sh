#!/usr/bin/env bash
# DiLoCo against sync and local SGD in a communication-bound cluster: the time-to-accuracy
# scenario (experiments/convergence/time-to-accuracy.json: 64 workers timing ResNet-50 on a
# 10 GbE star, the MLP 784-256-128-10 trained on Fashion-MNIST, runs stop at 85 %), each over
# the seeds $SEEDS (default 1-5, see seeds.sh); prints the iterations and simulated time to 80,
# 83 and 85 % (mean and 95 % t-interval over the seeds that reach it). H = $H (default 8) for
# both local SGD and DiLoCo (outer lr 0.7, momentum 0.9, Nesterov: the paper's).
# usage: experiments/convergence/diloco.sh [path/to/sgdsim] [out dir (default results/diloco)]
set -euo pipefail
bin=${1:-./build/sgdsim}
out=${2:-results/diloco}
h=${H:-8}
base=experiments/convergence/time-to-accuracy.json
source experiments/convergence/seeds.sh
mkdir -p "$out"
run_seeds "$out/sync" "$bin" "$base"
run_seeds "$out/local_sgd-$h" "$bin" "$base" --set scheme.type=local_sgd --set scheme.period="$h"
run_seeds "$out/diloco-$h" "$bin" "$base" --set scheme.type=diloco --set scheme.inner_steps="$h"
/usr/bin/python3 experiments/convergence/accuracy_table.py --targets 0.80,0.83,0.85 \
  "$out/sync" "$out/local_sgd-$h" "$out/diloco-$h"
