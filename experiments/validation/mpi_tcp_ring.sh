#!/usr/bin/env bash
# Scale check on data/validation/openmpi-ring-tcp-2to8/: Open MPI 4.0.1's ring allreduce
# (coll_tuned algorithm 4) over its TCP transport, one rank per node, 100 MiB from host memory
# (OSU osu_allreduce), on 2 to 8 nodes of one Ethernet cluster (shyhuai/dl_scheduling).
# Two models, stated before they run; each is calibrated on the 2-node run only and predicts 3
# to 8 nodes, nothing fitted to them:
#   network only: the 2-node run's bus bandwidth (bytes / time x 2 (n - 1) / n) becomes the
#     link bandwidth of sgdsim's ring on the ideal network (at large messages a ring's bus
#     bandwidth is its slowest link's), as new_sets.sh does for bus-bandwidth tables;
#   network and copy: the network is its specification, 10 Gbit/s Ethernet (the cluster of the
#     study's authors, arXiv 2002.10105) as `tcp` links carrying MPI's one TCP stream per peer
#     (`--sockets mpi`), route latency 32 us (an OSU allreduce of 4 bytes on 2 nodes of the
#     same group's 10 GbE cluster, data/validation/bcaffe-googlenet/allreduce2.log: 31.92 us;
#     below 0.3 % of any time here). Open MPI's ring first copies the send buffer into the
#     receive buffer (ompi_coll_base_allreduce_intra_ring); the part of the 2-node time the ring
#     on that network does not explain is taken as that copy, `copy_bandwidth` = bytes / part,
#     paid once per allreduce at every node count.
# Printed: per node count, the measured mean time (one job alone on the nodes), each model's
# time and error, and the bus bandwidth measured and predicted; then the median |error| over
# 3-8 nodes and the change of the bus bandwidth with the node count, for the mean time and for
# the repository's other statistic (the mean of each run's 10 slowest iterations).
# usage: experiments/validation/mpi_tcp_ring.sh [sgdsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
source experiments/validation/mpi_tcp_common.sh

for column in latency_mean_us latency_slowest10_mean_us; do
  read -r bytes t2 < <(/usr/bin/python3 - "$csv" "$column" <<'PY'
import csv, sys
r = next(r for r in csv.DictReader(open(sys.argv[1]))
         if r["nodes"] == "2" and r["concurrent_jobs"] == "1")
print(int(r["message_bytes"]), float(r[sys.argv[2]]) * 1e-6)
PY
  )
  # Network only: 2 ranks move the whole buffer once, so the link is bytes / time.
  link_Bps=$(/usr/bin/python3 -c "print(repr($bytes / $t2))")
  # Network and copy: what the 2-node ring on the specified network leaves over is the copy.
  copy_Bps=$(/usr/bin/python3 -c "print(repr($bytes / ($t2 - $(ring_s "$bytes" 2 "${spec_net[@]}"))))")
  runs=()
  for nodes in 2 3 4 5 6 7 8; do
    runs+=("$nodes $(ring_s "$bytes" "$nodes" --network-model ideal --bandwidth "${link_Bps}Bps") \
$(ring_s "$bytes" "$nodes" "${spec_net[@]}" --copy-bandwidth "${copy_Bps}Bps")")
  done
  /usr/bin/python3 experiments/validation/mpi_tcp_ring_table.py "$csv" "$column" "$link_Bps" \
    "$copy_Bps" "${runs[@]}"
done
