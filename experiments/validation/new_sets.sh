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
#   - the GCP 8-GPU runs once more as NCCL 2.4.7 ran them: the tree on 2 nodes (its
#     ncclTreeThreshold), the ring on 4, each connection's rate set by its TCP streams (the run's
#     NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, 4 on 2 nodes and 12 on 4).
#   - the RTX 5090 server once more on the host-path preset pcie-8gpu-2socket-gen5 (its
#     sockets, host memory and inter-socket link from public specifications): the ratio of
#     measured to predicted bus bandwidth at 4 GPUs scales the preset's 8-GPU prediction.
#   - a 2 -> 3 and 4 node series over AWS's EFA (NVIDIA/nccl#527): its 2-node bus bandwidth read
#     as a ring, and as nccl_tuner reads it (NCCL's tree, which its tuner picks on two nodes);
#     the fitted network bandwidth predicts the larger scales.
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

# GCP 8 GPUs per node once more, as NCCL 2.4.7 ran it. Its ncclTreeThreshold (src/init.cc)
# runs the tree for every size on 2 nodes of NVLink GPUs and the ring above 1.92 MB x channels
# on 4 (at most 16 channels: 31 MB, below the 128 MiB measured); the tree sends each byte once
# through a node's NIC where the ring sends 2 (p - 1) / p of it. Both runs were far below the
# 32 Gb/s line rate, so the streams bound (docs/nccl-sockets.md: a connection moves at most
# streams x one stream's goodput), and the runs set different streams per connection:
# NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = 4 x 1 on 2 nodes, 4 x 3 on 4. The one fitted
# number is the 2-node network rate (so the goodput per stream); 4 nodes get 3 times it, capped
# at the 32 Gb/s link's TCP payload. Inside the node NVLink (25 GB/s) binds neither run.
gcp_time() {  # nodes bytes bandwidth nccl-algo: simulated seconds on nodes x 8 GPUs
  "$bin" collective --algorithm nccl_tuner --ranks $(($1 * 8)) --devices-per-node 8 \
    --bytes "$2" --bandwidth "$3" --intra-bandwidth 25GBps --network-model ideal \
    --nccl-algo "$4" --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['time_s'])"
}
read -r small_bytes big_bytes < <(/usr/bin/python3 - "$gcp" <<'PY'
import csv, sys
rows = sorted((r for r in csv.DictReader(open(sys.argv[1])) if r["gpus_per_node"] == "8"),
              key=lambda r: int(r["nodes"]))
print(rows[0]["min_message_bytes"], rows[1]["min_message_bytes"])
PY
)
runs=()
for bw in 1 2; do
  runs+=("2 $bw $(gcp_time 2 "$small_bytes" "${bw}GBps" tree)")
  runs+=("4 $bw $(gcp_time 4 "$big_bytes" "${bw}GBps" ring)")
done
/usr/bin/python3 - "$gcp" "${runs[@]}" <<'PY'
import csv, statistics, sys
rows = {int(r["nodes"]): r for r in csv.DictReader(open(sys.argv[1])) if r["gpus_per_node"] == "8"}
fit = {}
for run in sys.argv[2:]:
    nodes, bw, t = run.split()
    fit.setdefault(int(nodes), {})[float(bw) * 1e9] = float(t)
line = {}
for n, t in fit.items():  # t = a + c / bw through the two runs
    (b1, t1), (b2, t2) = sorted(t.items())
    c = (t1 - t2) / (1 / b1 - 1 / b2)
    line[n] = (t1 - c / b1, c)
busbw = {n: statistics.median(float(r[f"busbw_run{i}_Gbps"]) for i in (1, 2, 3)) for n, r in rows.items()}
size = {n: int(r["min_message_bytes"]) for n, r in rows.items()}
streams = {n: int(r["nccl_socket_nthreads"]) * int(r["nccl_nsocks_perthread"]) for n, r in rows.items()}
factor = lambda n: 2 * (8 * n - 1) / (8 * n)
measured = {n: size[n] * factor(n) * 8 / (busbw[n] * 1e9) for n in rows}
a, c = line[2]
rate2 = c / (measured[2] - a)  # B/s between nodes that the 2-node tree time asks for
payload = 32e9 / 8 * 1448 / 1538  # the 32 Gb/s link's TCP payload, MTU 1500
rate4 = min(payload, rate2 * streams[4] / streams[2])
predicted = {2: measured[2], 4: line[4][0] + line[4][1] / rate4}
pb = {n: size[n] * factor(n) * 8 / predicted[n] / 1e9 for n in (2, 4)}
trend = lambda a, b: f"{a:.1f} -> {b:.1f} Gbit/s ({round(100 * (b / a - 1)):+d} %)"
print(f"| GCP 32 GbE, NCCL sockets, 8 GPUs per node (table), NCCL 2.4.7's tree on 2 nodes, "
      f"{streams[2]} -> {streams[4]} streams | 2 nodes, tree: {rate2 * 8 / 1e9:.2f} Gbit/s between "
      f"nodes on {streams[2]} streams | 4 nodes, ring on {streams[4]} | "
      f"{100 * abs(measured[4] / predicted[4] - 1):.1f} % | {trend(busbw[2], busbw[4])} | "
      f"{trend(pb[2], pb[4])} |")
PY

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

# AWS instances of 8 A100 with 4 x 100 Gb/s EFA (NVIDIA/nccl#527), 1 GiB on 2 -> 3 and 4 nodes:
# EFA (libfabric), not TCP sockets; no public NCCL socket series at 3+ node counts was found.
# Calibrated on 2 nodes, as a ring (the tables' method above) and as NCCL's tree, which
# nccl_tuner picks there from NCCL's own model on this node's graph (NCCL 2.8.4 topo.h: 12 GB/s
# per channel of a 100 Gb/s NIC, 21 GB/s per A100 NVLink inside the node). Inside the node both
# readings use the NVSwitch peer-to-peer rate of the p4d.24xlarge preset (docs/host-path.md,
# 240 GB/s), which binds neither; the network bandwidth between nodes is the one fitted number.
efa=data/validation/nccl-tests-efa-p4d-scale/busbw.csv
efa_time() {  # nodes bandwidth nccl-algo: simulated seconds of 1 GiB on nodes x 8 A100
  "$bin" collective --algorithm nccl_tuner --ranks $(($1 * 8)) --devices-per-node 8 \
    --bytes 1073741824 --bandwidth "$2" --intra-bandwidth 240GBps --network-model ideal \
    --tuner-channel-bandwidth 12GBps --tuner-intra-channel-bandwidth 21GBps --nccl-algo "$3" \
    --json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(d['time_s'], d.get('chosen', ''))"
}
for reading in ring auto; do
  # The time is a + c / bandwidth on the ideal network, so two runs give a and c at each scale,
  # and the 2-node measurement gives the bandwidth.
  runs=()
  for nodes in 2 3 4; do
    for bw in 50 25; do
      algo=$([ "$nodes" = 2 ] && echo "$reading" || echo auto)
      runs+=("$nodes $bw $(efa_time "$nodes" "${bw}GBps" "$algo")")
    done
  done
  /usr/bin/python3 - "$efa" "$reading" "${runs[@]}" <<'PY'
import csv, statistics, sys
measured = {int(r["nodes"]): float(r["time_out_of_place_us"]) * 1e-6
            for r in csv.DictReader(open(sys.argv[1]))}
size = 1073741824
fit, chosen = {}, {}
for run in sys.argv[3:]:
    nodes, bw, t, how = run.split(maxsplit=3)
    fit.setdefault(int(nodes), {})[float(bw) * 1e9] = float(t)
    chosen[int(nodes)] = how
line = {}
for n, t in fit.items():  # t = a + c / bw through the two runs
    (b1, t1), (b2, t2) = sorted(t.items())
    c = (t1 - t2) / (1 / b1 - 1 / b2)
    line[n] = (t1 - c / b1, c)
a, c = line[2]
bw = c / (measured[2] - a)  # the network bandwidth the 2-node time asks for
predicted = {n: a_n + c_n / bw for n, (a_n, c_n) in line.items()}
busbw = lambda n, t: size / t * 2 * (8 * n - 1) / (8 * n) / 1e9
errors = {n: abs(predicted[n] / measured[n] - 1) for n in (3, 4)}
trend = lambda f: " -> ".join(f"{f(n):.1f}" for n in (2, 3, 4)) + \
    f" GB/s ({round(100 * (f(4) / f(2) - 1)):+d} %)"
name = {"ring": "2 nodes read as a ring", "auto": "nccl_tuner"}[sys.argv[2]]
algo = "tree" if chosen[2] == "nccl_tuner(tree)" else "ring"  # what moved the 2-node data
print(f"| 8 A100 + 4 x 100 Gb/s EFA, AWS p4d (table; EFA, not TCP), {name} | 2 nodes, "
      f"{algo}: {bw / 1e9:.1f} GB/s between nodes | 3 and 4 nodes | "
      f"{100 * statistics.median(errors.values()):.1f} % "
      f"(3 nodes {100 * errors[3]:.1f}, 4 nodes {100 * errors[4]:.1f}) | "
      f"{trend(lambda n: busbw(n, measured[n]))} | {trend(lambda n: busbw(n, predicted[n]))} |")
PY
done
