#!/usr/bin/env bash
# Contention check on data/validation/openmpi-ring-tcp-2to8/: K = 2 to 8 copies of the same OSU
# allreduce (100 MiB, Open MPI 4.0.1's ring over TCP, one rank per node) started at once on the
# same 2 to 8 nodes, each copy's mean time per allreduce, averaged over the copies.
# The model, stated before it runs (that of mpi_tcp_ring.sh, "network and copy"):
#   - the network is its specification, 10 Gbit/s Ethernet as `tcp` links with MPI's one TCP
#     stream per peer, route latency 32 us; the ring copies the send buffer first
#     (`copy_bandwidth`), calibrated on the 2-node run of one job alone; nothing else is fitted;
#   - the K jobs are `sgdsim collective --jobs K --iterations 20`: each job's allreduces run
#     one after the other (OSU's barrier between them is left out), every job on its own cores
#     (its copy overlaps the others' transfers), all sharing the network at flow fidelity;
#   - when the copies started is not known, so two bounds: jobs spread evenly over one
#     allreduce (job j starts j / K of the closed form's time later: the default) and jobs in
#     lockstep (all start together: `--job-offset 0s`).
# Printed: per node count and K, the errors of both bounds; then the median |error| of each,
# and how many of the 49 measurements lie between the bounds (within 1 %).
# usage: experiments/validation/mpi_tcp_contention.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
source experiments/validation/mpi_tcp_common.sh

read -r bytes t2 < <(/usr/bin/python3 - "$csv" <<'PY'
import csv, sys
r = next(r for r in csv.DictReader(open(sys.argv[1]))
         if r["nodes"] == "2" and r["concurrent_jobs"] == "1")
print(int(r["message_bytes"]), float(r["latency_mean_us"]) * 1e-6)
PY
)
copy_Bps=$(/usr/bin/python3 -c "print(repr($bytes / ($t2 - $(ring_s "$bytes" 2 "${spec_net[@]}"))))")
runs=()
for nodes in 2 3 4 5 6 7 8; do
  for jobs in 2 3 4 5 6 7 8; do
    common=(--copy-bandwidth "${copy_Bps}Bps" --jobs "$jobs" --iterations 20)
    runs+=("$nodes $jobs $(ring_s "$bytes" "$nodes" "${spec_net[@]}" "${common[@]}") \
$(ring_s "$bytes" "$nodes" "${spec_net[@]}" "${common[@]}" --job-offset 0s)")
  done
done
/usr/bin/python3 - "$csv" "${runs[@]}" <<'PY'
import csv, statistics, sys
meas = {(int(r["nodes"]), int(r["concurrent_jobs"])): float(r["latency_mean_us"]) * 1e-6
        for r in csv.DictReader(open(sys.argv[1]))}
pred = {}
for run in sys.argv[2:]:
    n, k, spread, lock = run.split()
    pred[(int(n), int(k))] = (float(spread), float(lock))
err = lambda key, m: 100 * (pred[key][m] / meas[key] - 1)
jobs = sorted({k for _, k in pred})
print("| nodes | " + " | ".join(f"{k} jobs" for k in jobs) + " |")
print("|---|" + "---|" * len(jobs))
for n in sorted({n for n, _ in pred}):
    pct = lambda x: f"{round(x) + 0:+d}"  # + 0: no "-0"
    cells = [f"{pct(err((n, k), 0))} / {pct(err((n, k), 1))} %" for k in jobs]
    print(f"| {n} | " + " | ".join(cells) + " |")
print()
between = sum(1 for key in pred if pred[key][0] * 0.99 <= meas[key] <= pred[key][1] * 1.01)
for m, name in ((0, "jobs spread evenly"), (1, "jobs in lockstep")):
    e = [err(key, m) for key in pred]
    print(f"{name}: median |error| {statistics.median(abs(x) for x in e):.1f} %, "
          f"from {min(e):+.1f} to {max(e):+.1f} %.")
print()
print(f"Measured between the bounds (within 1 %): {between} of {len(pred)}.")
PY
