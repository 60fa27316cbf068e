#!/usr/bin/env bash
# Scale checks on the public measurement sets in data/: each series is calibrated on its
# smaller scale only and predicts the larger one. Prints one row per series: the median
# |error| of the predicted allreduce time at sizes >= 1 MB (the table sets give one size per
# configuration, all >= 32 MiB, so their error is that size's), and the bus bandwidth of the
# largest measured size at both scales, measured against predicted.
#   - nccl-tests logs (AWS p3dn over TCP): sgdsim calibrate nccl-tests, as nccl-tests.sh does.
#   - bus-bandwidth tables (GCP 32 GbE sockets, one RTX 5090 PCIe server): the smaller scale's
#     bus bandwidth is the link bandwidth of a ring (a ring's bus bandwidth equals its slowest
#     link's at large messages), and sgdsim collective predicts the larger scale on it.
#   - the RTX 5090 server once more on the host-path preset pcie-8gpu-2socket-gen5 (its
#     sockets, host memory and inter-socket link from public specifications): the ratio of
#     measured to predicted bus bandwidth at 4 GPUs scales the preset's 8-GPU prediction.
# Nothing here is tuned to the larger scale. usage: experiments/validation/new_sets.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
tcp=data/calibration/nccl-tests-aws-p3dn-tcp
gcp=data/validation/nccl-sockets-gcp-32gbe/busbw.csv
pcie=data/validation/pcie-node-rtx5090/busbw.csv

echo "| set | calibrated on | checked on | median error, >= 1 MB | measured busbw | predicted busbw |"
echo "|---|---|---|---|---|---|"

# nccl-tests logs: check the calibration log too, for the predicted bus bandwidth at its scale.
json=$("$bin" calibrate nccl-tests "$tcp/2p3dn.2GPUs.log" --technology tcp --min-bytes 1MB \
  --check "$tcp/2p3dn.2GPUs.log" --check "$tcp/4p3dn.4GPUs.log" --json)
/usr/bin/python3 - "$json" <<'PY'
import json, sys
fit = json.loads(sys.argv[1])
small, big = fit["checks"]
def busbw(check, key):  # GB/s of the largest size: bytes / time x 2 (n - 1) / n
    p = max(check["points"], key=lambda q: q["bytes"])
    n = check["ranks"]
    return p["bytes"] / p[key] * 2 * (n - 1) / n / 1e9
def trend(a, b):
    return f"{a:.2f} -> {b:.2f} GB/s ({round(100 * (b / a - 1)):+d} %)"
print(f"| V100 + 100 GbE TCP, AWS p3dn (nccl-tests logs) | 2 nodes x 1 GPU | 4 nodes x 1 GPU | "
      f"{100 * big['median_abs_rel_error']:.1f} % | "
      f"{trend(busbw(small, 'measured_s'), busbw(big, 'measured_s'))} | "
      f"{trend(busbw(small, 'predicted_s'), busbw(big, 'predicted_s'))} |")
PY

# Bus bandwidth of a ring allreduce of BYTES over NODES x GPUS ranks, predicted by sgdsim
# collective on a node link of BW (and the tool's default link inside a node).
predict_busbw() {  # bytes nodes gpus link-bandwidth [intra-bandwidth]
  local bytes=$1 nodes=$2 gpus=$3 bw=$4 intra=${5:-}
  local args=(--algorithm ring --ranks $((nodes * gpus)) --bytes "$bytes" --network-model ideal)
  if [ -n "$intra" ]; then
    args+=(--devices-per-node "$gpus" --intra-bandwidth "$intra")
  else
    args+=(--bandwidth "$bw" --devices-per-node "$gpus")
  fi
  "$bin" collective "${args[@]}" --json |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); n=d['ranks']
print(d['bytes'] / d['time_s'] * 2 * (n - 1) / n)"
}

# GCP, NCCL sockets over 32 Gb/s Ethernet: 2 nodes -> 4 nodes, at 1 and at 8 GPUs per node.
for gpus in 1 8; do
  read -r small_bytes small_med big_bytes big_med < <(/usr/bin/python3 - "$gcp" "$gpus" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["gpus_per_node"] == sys.argv[2]]
med = lambda r: statistics.median(float(r[f"busbw_run{i}_Gbps"]) for i in (1, 2, 3))
small, big = sorted(rows, key=lambda r: int(r["nodes"]))
print(small["min_message_bytes"], med(small), big["min_message_bytes"], med(big))
PY
  )
  bw="${small_med}Gbps"
  p_small=$(predict_busbw "$small_bytes" 2 "$gpus" "$bw")
  p_big=$(predict_busbw "$big_bytes" 4 "$gpus" "$bw")
  /usr/bin/python3 - "$gpus" "$small_med" "$big_med" "$p_small" "$p_big" <<'PY'
import sys
gpus = sys.argv[1]
ms, mb, ps, pb = (float(x) for x in sys.argv[2:])
ps, pb = ps * 8 / 1e9, pb * 8 / 1e9  # B/s -> Gbit/s
trend = lambda a, b: f"{a:.1f} -> {b:.1f} Gbit/s ({round(100 * (b / a - 1)):+d} %)"
print(f"| GCP 32 GbE, NCCL sockets, {gpus} GPU{'s' if gpus != '1' else ''} per node (table) | "
      f"2 nodes | 4 nodes | {100 * abs(mb / pb - 1):.1f} % | {trend(ms, mb)} | {trend(ps, pb)} |")
PY
done

# One PCIe server, 4 -> 8 RTX 5090: the 4-GPU bus bandwidth is the link between GPUs.
read -r small_bw big_bw bytes < <(/usr/bin/python3 - "$pcie" <<'PY'
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r["gpus"]))
print(rows[0]["max_busbw_GBps"], rows[1]["max_busbw_GBps"], rows[0]["min_message_bytes"])
PY
)
p_small=$(predict_busbw "$bytes" 1 4 "" "${small_bw}GBps")
p_big=$(predict_busbw "$bytes" 1 8 "" "${small_bw}GBps")
/usr/bin/python3 - "$small_bw" "$big_bw" "$p_small" "$p_big" <<'PY'
import sys
ms, mb, ps, pb = (float(x) for x in sys.argv[1:])
ps, pb = ps / 1e9, pb / 1e9
trend = lambda a, b: f"{a:.1f} -> {b:.1f} GB/s ({round(100 * (b / a - 1)):+d} %)"
print(f"| RTX 5090 x 8, one PCIe server (table) | 4 GPUs | 8 GPUs | {100 * abs(mb / pb - 1):.1f} % | "
      f"{trend(ms, mb)} | {trend(ps, pb)} |")
PY

# The same server on the host-path preset (2 x Xeon Platinum 8480+, 4 Gen5 GPUs per socket,
# SHM through host memory): the preset predicts both scales; the 4-GPU measurement calibrates
# one factor (measured / predicted) that scales the 8-GPU prediction.
preset_busbw() {  # bytes gpus
  "$bin" collective --algorithm ring --ranks "$2" --devices-per-node "$2" --bytes "$1" \
    --network-model ideal --node pcie-8gpu-2socket-gen5 --json |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); n=d['ranks']
print(d['bytes'] / d['time_s'] * 2 * (n - 1) / n)"
}
q_small=$(preset_busbw "$bytes" 4)
q_big=$(preset_busbw "$bytes" 8)
/usr/bin/python3 - "$small_bw" "$big_bw" "$q_small" "$q_big" <<'PY'
import sys
ms, mb, ps, pb = (float(x) for x in sys.argv[1:])
ps, pb = ps / 1e9, pb / 1e9
pb_cal = pb * ms / ps  # the 4-GPU ratio measured / predicted carried to 8 GPUs
trend = lambda a, b: f"{a:.1f} -> {b:.1f} GB/s ({round(100 * (b / a - 1)):+d} %)"
print(f"| RTX 5090 x 8, preset `pcie-8gpu-2socket-gen5` (table) | 4 GPUs | 8 GPUs | "
      f"{100 * abs(mb / pb_cal - 1):.1f} % | {trend(ms, mb)} | {trend(ms, pb_cal)} "
      f"(uncalibrated {trend(ps, pb)}) |")
PY
