#!/usr/bin/env bash
# Validation of sgdsim calibrate nccl-tests on the measured logs in data/calibration/: each
# cluster is calibrated on its smallest scale only and predicts the others (nccl_tuner, the
# closed forms, sizes >= 1 MB; also the largest error over sizes >= 64 KiB).
# usage: experiments/validation/nccl-tests.sh [path/to/sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
ib=data/calibration/nccl-tests-echo-azure-a100-ib
tcp=data/calibration/nccl-tests-aws-p3dn-tcp
row() {  # name, calibration args..., then -- and the checked logs
  local name=$1; shift
  local args=() checks=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  for c in "$@"; do checks+=(--check "$c"); done
  local big small
  big=$("$bin" calibrate nccl-tests "${args[@]}" "${checks[@]}" --min-bytes 1MB --json)
  small=$("$bin" calibrate nccl-tests "${args[@]}" "${checks[@]}" --min-bytes 64KiB --json)
  /usr/bin/python3 - "$name" "$big" "$small" <<'PY'
import json, sys
name, big, small = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
for b, s in zip(big["checks"], small["checks"]):
    print(f"| {name} | {big['ranks']} GPUs | {b['ranks']} GPUs | "
          f"{100 * b['median_abs_rel_error']:.1f} % | {100 * s['max_abs_rel_error']:.1f} % |")
PY
}
echo "| cluster | calibrated on | predicts | median error, >= 1 MB | max error, >= 64 KiB |"
echo "|---|---|---|---|---|"
row "A100 + HDR InfiniBand, inter-node" "$ib/nccl_16.log" --intra "$ib/nccl_8.log" -- \
  "$ib/nccl_32.log" "$ib/nccl_64.log" "$ib/nccl_128.log"
row "A100 NVLink/NVSwitch, one node" "$ib/nccl_2.log" -- "$ib/nccl_4.log" "$ib/nccl_8.log"
row "V100 + 100 GbE TCP (AWS p3dn)" "$tcp/2p3dn.2GPUs.log" --technology tcp -- "$tcp/4p3dn.4GPUs.log"
