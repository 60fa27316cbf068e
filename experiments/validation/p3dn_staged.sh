#!/usr/bin/env bash
# The AWS p3dn TCP logs with and without nccl_tuner's staged network path: calibrated on the
# 2-node log alone (sizes >= 1 MB), the 4-node log predicted size by size. "flat" is the model
# before it (--staged-host-bandwidth 0: one launch latency and one rate for every size).
# usage: experiments/validation/p3dn_staged.sh [path/to/sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
d=data/calibration/nccl-tests-aws-p3dn-tcp
run() { "$bin" calibrate nccl-tests "$d/2p3dn.2GPUs.log" --technology tcp --min-bytes 1MB \
  --check "$d/4p3dn.4GPUs.log" --json "$@"; }
/usr/bin/python3 - "$(run)" "$(run --staged-host-bandwidth 0)" <<'PY'
import json, sys
staged, flat = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name, f in (("staged", staged), ("flat", flat)):
    print(f"- {name}: {8e-9 * f['inter']['bandwidth_Bps']:.1f} Gb/s, launch latency "
          f"{1e6 * f['launch_latency_s']:.0f} us, 2-node fit {100 * f['median_abs_rel_error']:.1f} %")
print()
print("| bytes | 4 nodes measured | staged | error | flat | error |")
print("|---|---|---|---|---|---|")
for s, p in zip(staged["checks"][0]["points"], flat["checks"][0]["points"]):
    if s["bytes"] < 1e6:
        continue
    m = s["measured_s"]
    print(f"| {s['bytes']:.0f} | {1e6 * m:.0f} us | {1e6 * s['predicted_s']:.0f} us | "
          f"{100 * (s['predicted_s'] / m - 1):+.1f} % | {1e6 * p['predicted_s']:.0f} us | "
          f"{100 * (p['predicted_s'] / m - 1):+.1f} % |")
print(f"| median abs | | | {100 * staged['checks'][0]['median_abs_rel_error']:.1f} % | | "
      f"{100 * flat['checks'][0]['median_abs_rel_error']:.1f} % |")
PY
