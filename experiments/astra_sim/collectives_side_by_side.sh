#!/usr/bin/env bash
# sgdsim and ASTRA-sim side by side on one collective each: per-rank Chakra ET files of a single
# COMM_COLL node (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER) of comm_size BYTES, as ASTRA-sim's own
# microbenchmarks are built (examples/workload/microbenchmarks), written here with the encoder of
# make_dp_et.py. ASTRA-sim reads comm_size as each rank's input (ALL_GATHER: each rank's part of
# the gathered whole); sgdsim reads it the same way (docs/chakra.md). Network: RANKS ranks on a
# ring of 50 GB/s (ASTRA-sim's GB: 2^30 bytes) and 500 ns per hop for ASTRA-sim (one chunk, its
# local-memory model made free, 10 ns endpoint delay per message: side_by_side_lib.sh); for
# sgdsim a star of 50 GiB/s, 250 ns links (a route crosses two), the ideal network, the ring
# collective, no optimizer step (workload.optimizer "trace"), at fidelity flow and analytic.
#
# ASTRA_BIN is ASTRA-sim's congestion-unaware analytical binary (docs/measurements/benchmarks.md
# says how it was built); "-" runs sgdsim only and leaves ASTRA-sim's inputs in OUT. Prints a
# Markdown table of the simulated times.
#
# usage: experiments/astra_sim/collectives_side_by_side.sh SGDSIM ASTRA_BIN|- OUT [RANKS...]
#        (RANKS default 4 8 16; BYTES=1048576 in the environment)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=experiments/astra_sim/side_by_side_lib.sh
source "$here/side_by_side_lib.sh"
side_by_side_args "4 8 16" "$@"
bytes="${BYTES:-1048576}"
collectives=(all_reduce all_gather reduce_scatter)
astra_inputs "$out" 1
for n in "${sizes[@]}"; do
  printf 'topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n' \
    "$n" >"$out/astra/network_$n.yml"
  for c in "${collectives[@]}"; do
    /usr/bin/python3 - "$here" "$out/et/n$n/$c" "$n" "$c" "$bytes" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import make_dp_et as et
prefix, ranks, kind, size = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
comm_type = {"all_reduce": 0, "all_gather": 2, "reduce_scatter": 7}[kind]
import os
os.makedirs(os.path.dirname(prefix), exist_ok=True)
coll = et.node(1, kind, et.COMM_COLL_NODE,
               attrs=et.attr("comm_type", 9, comm_type) + et.attr("comm_size", 9, size))
for r in range(ranks):
    with open(f"{prefix}.{r}.et", "wb") as f:
        f.write(b"".join(et.varint(len(m)) + m for m in [et.f_bytes(1, b"0.0.4"), coll]))
PY
    if [ "$astra" != "-" ]; then
      run_astra "$astra" "$out" "${c}_$n" "$out/et/n$n/$c" "$out/astra/network_$n.yml"
    fi
    for fidelity in flow analytic; do
      "$sgdsim" run "$here/dp_chakra.json" --out "$out/run_${c}_${n}_$fidelity" --overwrite \
        --quiet --set "fidelity=$fidelity" --set "workers.count=$n" \
        --set "platform.generate.nodes=$n" --set "workload.chakra=$out/et/n$n/$c" \
        --set iterations=1 --set workload.optimizer=trace
    done
  done
done
/usr/bin/python3 - "$out" "$astra" "$bytes" "${sizes[@]}" <<'PY'
import json, sys
out, astra, size, sizes = sys.argv[1], sys.argv[2] != "-", int(sys.argv[3]), sys.argv[4:]
sim_ns = lambda c, n, f: json.load(open(f"{out}/run_{c}_{n}_{f}/summary.json"))["simulated_time_s"] * 1e9
print(f"| collective, comm_size {size:,} B | ranks | ASTRA-sim | sgdsim flow | sgdsim analytic | sgdsim - ASTRA-sim |")
print("|---|---|---|---|---|---|")
for c in ("all_reduce", "all_gather", "reduce_scatter"):
    for n in sizes:
        flow, analytic = sim_ns(c, n, "flow"), sim_ns(c, n, "analytic")
        assert abs(flow - analytic) <= 1e-9 * flow, (c, n, flow, analytic)
        a, gap = "not run", ""
        if astra:
            a_ns = float(open(f"{out}/astra_{c}_{n}.ns").read())
            a, gap = f"{a_ns:,.0f} ns", f"{flow - a_ns:+,.1f} ns"
        print(f"| {c.upper()} | {n} | {a} | {flow:,.1f} ns | {analytic:,.1f} ns | {gap} |")
PY
