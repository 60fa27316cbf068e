#!/usr/bin/env bash
# The falling bus bandwidth of NVIDIA/nccl-tests#169 (8 A100 and 8 x 100 Gb/s RoCE NICs per
# server; all_reduce_perf 1-8 GB on 2 to 6 servers) against sgdsim, with ECMP over the spines
# of a leaf-spine fabric off and on. Prints a Markdown table.
#
# Decided before any number was looked at (none of it is fitted to the larger scales):
# - The ring: NCCL's channels each cross every server boundary on their own NIC, so a ring
#   step puts 8 NIC-to-NIC flows on the fabric per server. The same flows come from one ring
#   over the 8 n GPUs dealt round robin over the servers (--placement cyclic: every hop leaves
#   its server, GPU c of server k sends to GPU c of server k + 1), each GPU's link being its own
#   NIC (--intra-bandwidth 100Gbps; the server's link to its leaf carries the 8 NICs, 800Gbps).
#   NCCL's 8 channels each move an eighth of the buffer, this ring the whole of it through
#   every NIC: the ring of N/8 bytes takes NCCL's time for N bytes (the bus bandwidth is
#   computed for N and P = 8 n ranks).
# - The fabric is not described in the issue. Assumed: two-tier leaf-spine as in Meta's RoCE
#   training network (SIGCOMM 2024: two 8-GPU servers per rack switch, non-blocking uplinks,
#   ECMP over the spines), i.e. 2 servers per leaf, 16 spines, each leaf-spine link one NIC's
#   rate (2 x 800 Gb/s / 16 = 100 Gb/s); the servers of a run are the first n of the 6.
# - ECMP hashes each host pair to a spine (seeded); the table gives the mean over 16 ECMP
#   seeds (16 sets of switch hash functions) and their range.
# - ECMP per connection: NCCL doubles the channels its topology search finds
#   (src/graph/connect.cc, ncclTopoPostset: "nChannels = comm->nChannels =
#   std::min(MAXCHANNELS,nChannels*2)"), so with one channel per NIC found every NIC pair
#   carries 2 channels, each a connection of NCCL_IB_QPS_PER_CONNECTION = 1 QP (net_ib.cc,
#   default 1) with a 5-tuple of its own: --ecmp-connections 2 (at least 2; more if the search
#   found more channels per NIC).
# - Calibration: only the 3-server point (2 servers run NCCL's tree, not the ring). The
#   simulation is a fluid one on an ideal network, so bus bandwidth scales with the NIC rate:
#   each mechanism's prediction is scaled by one factor that makes its 3-server mean 70 GB/s.
#   The "spec" column is the prediction at the NICs' 100 Gb/s without that factor.
# usage: experiments/validation/scale_ecmp.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
csv=data/validation/nccl-tests-roce-a100-scale/busbw.csv
seeds=16
bytes=1073741824  # all_reduce_perf -b 1G: the bus bandwidth of the 1-8 GB range is flat here

# One run: MODE SERVERS SPINES SEED -> "MODE SERVERS GB/s" of NCCL's N-byte allreduce on
# 8 x SERVERS ranks (two runs at a time; the table does not depend on their order).
run() {
  local mode=$1 n=$2 spines=$3 seed=$4 conns=0
  [ "$mode" = conn ] && conns=2
  "$bin" collective --algorithm ring --ranks $((8 * n)) --bytes $((bytes / 8)) \
    --network-model ideal --devices-per-node 8 --bandwidth 800Gbps --latency 2us \
    --intra-bandwidth 100Gbps --intra-latency 0us --topology fat_tree --nodes 6 \
    --nodes-per-leaf 2 --spines "$spines" --ecmp-seed "$seed" --ecmp-connections "$conns" \
    --placement cyclic --json |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); p=d['ranks']
print('$mode', $n, $bytes / d['time_s'] * 2 * (p - 1) / p / 1e9)"
}
export -f run
export bin bytes

# Each run writes its own file: two runs printing to one pipe could interleave their lines.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export tmp
for n in 3 4 5 6; do
  echo "off $n 1 1"
  for s in $(seq 1 $seeds); do echo "on $n 16 $s"; echo "conn $n 16 $s"; done
done | xargs -P 2 -L 1 bash -c 'set -o pipefail; run "$@" > "$tmp/$1-$2-$4"' _
results=$(cat "$tmp"/*)

/usr/bin/python3 - "$csv" "$results" <<'PY'
import csv, statistics, sys
measured = {int(r["nodes"]): float(r["busbw_GBps"]) for r in csv.DictReader(open(sys.argv[1]))}
runs = {}
for line in sys.argv[2].splitlines():
    mode, n, bw = line.split()
    runs.setdefault((mode, int(n)), []).append(float(bw))
mean = lambda k: statistics.fmean(runs[k])
scale = {m: measured[3] / mean((m, 3)) for m in ("off", "on", "conn")}
err = lambda p, n: f"{round(100 * (p / measured[n] - 1)):+d} %"
print("| servers (GPUs) | measured busbw | ECMP off (one fluid core) | error | ECMP on, mean of 16 hash seeds [range] | error | ECMP on, spec 100 Gb/s NICs, uncalibrated | ECMP per connection (2 per NIC pair), mean [range] | error | per connection, spec, uncalibrated |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in (3, 4, 5, 6):
    off = mean(("off", n)) * scale["off"]
    on = [x * scale["on"] for x in runs[("on", n)]]
    on_mean = statistics.fmean(on)
    spec = mean(("on", n))
    conn = [x * scale["conn"] for x in runs[("conn", n)]]
    conn_mean = statistics.fmean(conn)
    print(f"| {n} ({8 * n}) | {measured[n]:.0f} GB/s | {off:.1f} GB/s | {err(off, n)} | "
          f"{on_mean:.1f} GB/s [{min(on):.1f}-{max(on):.1f}] | {err(on_mean, n)} | {spec:.1f} GB/s | "
          f"{conn_mean:.1f} GB/s [{min(conn):.1f}-{max(conn):.1f}] | {err(conn_mean, n)} | "
          f"{mean(('conn', n)):.1f} GB/s |")
m = lambda n: measured[n]
on = lambda n: mean(("on", n))
print()
print(f"Fall from 3 to 6 servers: measured {100 * (m(6) / m(3) - 1):+.0f} %, ECMP off "
      f"{100 * (mean(('off', 6)) / mean(('off', 3)) - 1):+.0f} %, ECMP on "
      f"{100 * (on(6) / on(3) - 1):+.0f} %, ECMP per connection "
      f"{100 * (mean(('conn', 6)) / mean(('conn', 3)) - 1):+.0f} %. Calibration factors (3 servers): "
      f"ECMP off {scale['off']:.3f}, ECMP on {scale['on']:.3f}, per connection {scale['conn']:.3f}.")
PY
