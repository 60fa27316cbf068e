#!/usr/bin/env bash
# sgdsim and ASTRA-sim side by side on the data-parallel workload of this folder (README.md): per
# iteration a 20 ms forward, four 10 ms backward steps each followed by a 256 MiB ring
# allreduce, on RANKS ranks behind one switch, 50 GiB/s (ASTRA-sim's "GB/s") and 250 ns per
# link, a message crossing two links; ASTRA-sim with one chunk per collective and its
# local-memory model made free (local-mem-bw 1e9), sgdsim without an optimizer step
# (workload.optimizer "trace"), so that both simulate the same iterations.
#
# ASTRA-sim is not a Debian package: ASTRA_BIN is its congestion-unaware analytical binary,
# built by the user (docs/measurements/benchmarks.md says how it was built for the recorded
# run); "-" runs sgdsim only and leaves ASTRA-sim's inputs in OUT for someone who has it.
# ASTRA-sim runs a trace once, so its files hold ITERATIONS iterations (make_dp_et.py
# --iterations: each forward after the previous iteration's allreduces); sgdsim repeats the
# one-iteration files. For each size it runs ASTRA-sim, then sgdsim at fidelity analytic, flow,
# and flow with flow_symmetry "rotation", and prints simulated times and CPU seconds (user +
# system, /usr/bin/time) as a Markdown table. Plain flow at 1,024 ranks x 10 iterations takes
# about a quarter of an hour of CPU.
#
# usage: experiments/astra_sim/side_by_side.sh SGDSIM ASTRA_BIN|- OUT [RANKS...]
#        (RANKS default 8 256 1024; ITERATIONS=10 in the environment)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=experiments/astra_sim/side_by_side_lib.sh
source "$here/side_by_side_lib.sh"
side_by_side_args "8 256 1024" "$@"
iterations="${ITERATIONS:-10}"
astra_inputs "$out" 1
for n in "${sizes[@]}"; do
  /usr/bin/python3 "$here/make_dp_et.py" "$out/et/n$n/one/dp" --ranks "$n"
  printf 'topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 250.0 ]  # ns\n' \
    "$n" >"$out/astra/network_$n.yml"
  if [ "$astra" != "-" ]; then
    /usr/bin/python3 "$here/make_dp_et.py" "$out/et/n$n/all/dp" --ranks "$n" \
      --iterations "$iterations"
    run_astra "$astra" "$out" "$n" "$out/et/n$n/all/dp" "$out/astra/network_$n.yml"
  fi
  run_sgdsim_modes "$sgdsim" "$here/dp_chakra.json" "$out" "$n" --set "workers.count=$n" \
    --set "platform.generate.nodes=$n" --set "workload.chakra=$out/et/n$n/one/dp" \
    --set "iterations=$iterations" --set workload.optimizer=trace
done
side_by_side_table "$out" "$astra" "ranks x iterations" "{n:,} x $iterations" "${sizes[@]}"
