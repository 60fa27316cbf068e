#!/usr/bin/env bash
# Scale check on data/validation/openmpi-ring-tcp-2to8/: Open MPI 4.0.1's ring allreduce
# (coll_tuned algorithm 4) over its TCP transport, one rank per node, 100 MiB from host memory
# (OSU osu_allreduce), on 2 to 8 nodes of one Ethernet cluster (shyhuai/dl_scheduling).
# The model, stated before it runs:
#   - the allreduce is a ring of one rank per node (what the runs forced);
#   - calibrated on the 2-node run only: its bus bandwidth (bytes / time x 2 (n - 1) / n)
#     becomes the link bandwidth of sgdsim's ring on the ideal network (at large messages a
#     ring's bus bandwidth is its slowest link's), as new_sets.sh does for bus-bandwidth tables;
#   - 3 to 8 nodes are predicted on that link; nothing is fitted to them.
# Printed: per node count, the measured mean time (one job alone on the nodes), the predicted
# time and its error, and the bus bandwidth measured and predicted; then the median |error|
# over 3-8 nodes and the change of the bus bandwidth with the node count, for the mean time and
# for the repository's other statistic (the mean of each run's 10 slowest iterations).
# usage: experiments/validation/mpi_tcp_ring.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
csv=data/validation/openmpi-ring-tcp-2to8/allreduce.csv

# Bus bandwidth (B/s) of sgdsim's ring of NODES ranks, one per node, on links of BW.
ring_busbw() {  # bytes nodes link-bandwidth
  "$bin" collective --algorithm ring --ranks "$2" --bytes "$1" --bandwidth "$3" \
    --network-model ideal --json |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); n=d['ranks']
print(d['bytes'] / d['time_s'] * 2 * (n - 1) / n)"
}

for column in latency_mean_us latency_slowest10_mean_us; do
  read -r bytes small_busbw < <(/usr/bin/python3 - "$csv" "$column" <<'PY'
import csv, sys
r = next(r for r in csv.DictReader(open(sys.argv[1]))
         if r["nodes"] == "2" and r["concurrent_jobs"] == "1")
b = int(r["message_bytes"])
print(b, b / (float(r[sys.argv[2]]) * 1e-6))  # 2 ranks: bus bandwidth = bytes / time
PY
  )
  runs=()
  for nodes in 2 3 4 5 6 7 8; do
    runs+=("$nodes $(ring_busbw "$bytes" "$nodes" "${small_busbw}Bps")")
  done
  /usr/bin/python3 - "$csv" "$column" "${runs[@]}" <<'PY'
import csv, statistics, sys
column = sys.argv[2]
rows = {int(r["nodes"]): r for r in csv.DictReader(open(sys.argv[1]))
        if r["concurrent_jobs"] == "1"}
pred = {int(n): float(b) for n, b in (run.split() for run in sys.argv[3:])}
factor = lambda n: 2 * (n - 1) / n
size = {n: int(r["message_bytes"]) for n, r in rows.items()}
t_meas = {n: float(r[column]) * 1e-6 for n, r in rows.items()}
t_pred = {n: size[n] * factor(n) / pred[n] for n in pred}
busbw = {n: size[n] * factor(n) / t_meas[n] for n in t_meas}
err = {n: 100 * (t_pred[n] / t_meas[n] - 1) for n in pred}
nodes = sorted(pred)
later = [n for n in nodes if n > 2]
med = statistics.median(abs(err[n]) for n in later)
change = lambda b, n: 100 * (b[n] / b[2] - 1)
if column == "latency_mean_us":
    print("| nodes | measured time | predicted time | error | measured busbw | predicted busbw |")
    print("|---|---|---|---|---|---|")
    for n in nodes:
        print(f"| {n} | {1e3 * t_meas[n]:.1f} ms | {1e3 * t_pred[n]:.1f} ms | {err[n]:+.1f} % | "
              f"{busbw[n] / 1e9:.3f} GB/s | {pred[n] / 1e9:.3f} GB/s |")
    print()
    print(f"Calibrated on 2 nodes: ring links of {pred[2] / 1e9:.3f} GB/s "
          f"({8 * pred[2] / 1e9:.2f} Gbit/s).")
    label = "Mean time"
else:
    label = "Mean of the 10 slowest iterations"
pct = lambda x: f"{round(x) + 0:+d} %"  # + 0: no "-0"
print()
meas_mid = statistics.median(change(busbw, n) for n in later)
pred_mid = statistics.median(change(pred, n) for n in later)
print(f"{label}: median |error| over 3-8 nodes {med:.1f} %; busbw from 2 nodes to 3-8 nodes "
      f"(median) measured {pct(meas_mid)}, predicted {pct(pred_mid)}; "
      f"2 -> 8 nodes measured {pct(change(busbw, 8))}, predicted {pct(change(pred, 8))}.")
PY
done
