#!/usr/bin/env bash
# Rewrites tests/golden/<example>.summary.json from the given sgdsim binary.
set -euo pipefail
bin=${1:-./build/sgdsim}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in experiments/examples/*.json; do
  name=$(basename "$f" .json)
  "$bin" run "$f" --out "$tmp/$name" --quiet
  # wall_time_s differs run to run and is not compared.
  grep -v '"wall_time_s"' "$tmp/$name/summary.json" > "tests/golden/$name.summary.json"
  echo "updated tests/golden/$name.summary.json"
done
