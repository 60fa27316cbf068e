# Shared by mpi_tcp_ring.sh and mpi_tcp_contention.sh (sourced, with `bin` set): the data set,
# the network of its specification, and sgdsim's ring timed on it.
csv=data/validation/openmpi-ring-tcp-2to8/allreduce.csv
# 10 Gbit/s Ethernet as `tcp` links, MPI's one TCP stream per peer, route latency 32 us (an OSU
# allreduce of 4 bytes on 2 nodes of the group's 10 GbE cluster, bcaffe-googlenet/allreduce2.log).
spec_net=(--network-model links --technology tcp --bandwidth 10Gbps --latency 32us --sockets mpi)

# Time (s) of sgdsim's ring of NODES ranks, one per node, with further options.
ring_s() {  # bytes nodes options...
  local bytes=$1 nodes=$2
  shift 2
  "$bin" collective --algorithm ring --ranks "$nodes" --bytes "$bytes" "$@" --json |
    /usr/bin/python3 -c "import json,sys; print(repr(json.load(sys.stdin)['time_s']))"
}
