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
sgdsim="$(realpath "$1")"
astra="$2"
out="$3"
shift 3
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(8 256 1024)
iterations="${ITERATIONS:-10}"
mkdir -p "$out/astra"
cat >"$out/astra/system.json" <<'JSON'
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1000000000,
  "boost-mode": 0,
  "roofline-enabled": 0,
  "peak-perf": 900
}
JSON
printf '{\n  "memory-type": "NO_MEMORY_EXPANSION"\n}\n' >"$out/astra/memory.json"

# CPU seconds (user + system) and peak RSS of a command: "cpu_s rss_kb" on the last line of FILE.
timed() {
  local file="$1"
  shift
  /usr/bin/time -f "%U %S %M" -o "$file.time" "$@" >"$file.stdout" 2>"$file.stderr"
  awk '{printf "%.2f %d\n", $1 + $2, $3}' "$file.time"
}

for n in "${ranks[@]}"; do
  /usr/bin/python3 "$here/make_dp_et.py" "$out/et/n$n/one/dp" --ranks "$n"
  printf 'topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 250.0 ]  # ns\n' \
    "$n" >"$out/astra/network_$n.yml"
  if [ "$astra" != "-" ]; then
    /usr/bin/python3 "$here/make_dp_et.py" "$out/et/n$n/all/dp" --ranks "$n" \
      --iterations "$iterations"
    timed "$out/astra_$n" "$astra" --workload-configuration="$out/et/n$n/all/dp" \
      --system-configuration="$out/astra/system.json" \
      --remote-memory-configuration="$out/astra/memory.json" \
      --network-configuration="$out/astra/network_$n.yml" >"$out/astra_$n.cpu"
    grep -o 'sys\[0\] finished, [0-9]* cycles' "$out/astra_$n.stdout" | grep -o '[0-9]* cycles' |
      cut -d' ' -f1 >"$out/astra_$n.ns"
  fi
  for mode in analytic flow rotation; do
    sets=(--set "workers.count=$n" --set "platform.generate.nodes=$n"
      --set "workload.chakra=$out/et/n$n/one/dp" --set "iterations=$iterations"
      --set workload.optimizer=trace)
    case $mode in
      analytic) sets+=(--set fidelity=analytic) ;;
      rotation) sets+=(--set flow_symmetry=rotation) ;;
    esac
    timed "$out/sgdsim_${mode}_$n" "$sgdsim" run "$here/dp_chakra.json" --out "$out/run_${mode}_$n" \
      --overwrite --quiet --force "${sets[@]}" >"$out/sgdsim_${mode}_$n.cpu"
  done
done

/usr/bin/python3 - "$out" "$iterations" "$astra" "${ranks[@]}" <<'PY'
import json, sys
out, iterations, astra, ranks = sys.argv[1], int(sys.argv[2]), sys.argv[3] != "-", sys.argv[4:]
cpu = lambda f: [float(x) for x in open(f"{out}/{f}.cpu").read().split()]
sim_ns = lambda m, n: json.load(open(f"{out}/run_{m}_{n}/summary.json"))["simulated_time_s"] * 1e9
print(f"| ranks x iterations | ASTRA-sim: simulated, CPU (peak RSS) | sgdsim: simulated | sgdsim analytic: CPU | flow: CPU | flow, rotation: CPU | flow / ASTRA-sim CPU |")
print("|---|---|---|---|---|---|---|")
for n in ranks:
    s = {m: sim_ns(m, n) for m in ("analytic", "flow", "rotation")}
    assert max(s.values()) - min(s.values()) <= 1e-9 * max(s.values()), s
    c = {m: cpu(f"sgdsim_{m}_{n}") for m in s}
    a, ratio = "not run", ""
    if astra:
        a_ns = float(open(f"{out}/astra_{n}.ns").read())
        a_cpu, a_rss = cpu(f"astra_{n}")
        a = f"{a_ns:,.0f} ns, {a_cpu:.2f} s ({a_rss / 1024:.0f} MiB)"
        ratio = f"x{c['flow'][0] / a_cpu:.1f}"
        gap = f" ({100 * (s['flow'] / a_ns - 1):+.4f} %)"
    else:
        gap = ""
    print(f"| {int(n):,} x {iterations} | {a} | {s['flow']:,.0f} ns{gap} | {c['analytic'][0]:.2f} s "
          f"| {c['flow'][0]:.2f} s ({c['flow'][1] / 1024:.0f} MiB) | {c['rotation'][0]:.2f} s | {ratio} |")
PY
