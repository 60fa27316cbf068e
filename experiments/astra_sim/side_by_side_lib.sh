#!/usr/bin/env bash
# What side_by_side.sh and fat_tree_side_by_side.sh share (sourced, not run): ASTRA-sim's system
# and memory files, running ASTRA-sim and sgdsim under /usr/bin/time, and the table.

# The scripts' arguments after DEFAULTS (the sizes when none is given): SGDSIM ASTRA_BIN|- OUT
# [SIZES...]. Sets sgdsim and astra (absolute paths, or "-"), out (created, absolute) and the
# array sizes.
side_by_side_args() {
  local defaults="$1"
  shift
  sgdsim="$(realpath "$1")"
  astra="$2"
  [ "$astra" = "-" ] || astra="$(realpath "$astra")"
  mkdir -p "$3"
  out="$(cd "$3" && pwd)"
  shift 3
  sizes=("$@")
  # shellcheck disable=SC2206 # the defaults are words
  [ ${#sizes[@]} -gt 0 ] || sizes=($defaults)
}

# ASTRA-sim's system file for DIMS network dimensions (ring collectives in each, one chunk per
# collective, the local-memory model made free, the rest as its example system file) and its
# memory file, in OUT/astra.
astra_inputs() {
  local out="$1" dims="$2" ring
  ring=$(printf '"ring", %.0s' $(seq "$dims"))
  ring="[${ring%, }]"
  mkdir -p "$out/astra"
  cat >"$out/astra/system.json" <<JSON
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": $ring,
  "all-gather-implementation": $ring,
  "reduce-scatter-implementation": $ring,
  "all-to-all-implementation": $ring,
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1000000000,
  "boost-mode": 0,
  "roofline-enabled": 0,
  "peak-perf": 900
}
JSON
  printf '{\n  "memory-type": "NO_MEMORY_EXPANSION"\n}\n' >"$out/astra/memory.json"
}

# Runs a command with its outputs in FILE.stdout / FILE.stderr; writes "cpu_s rss_kb" (user +
# system seconds, peak RSS) to FILE.cpu.
timed() {
  local file="$1"
  shift
  /usr/bin/time -f "%U %S %M" -o "$file.time" "$@" >"$file.stdout" 2>"$file.stderr"
  awk '{printf "%.2f %d\n", $1 + $2, $3}' "$file.time" >"$file.cpu"
}

# ASTRA_BIN on the ET files PREFIX.<rank>.et and NETWORK: OUT/astra_SIZE.{cpu,ns}. It runs in
# OUT, where it writes its log folder.
run_astra() {
  local astra="$1" out="$2" size="$3" prefix="$4" network="$5"
  (cd "$out" && timed "$out/astra_$size" "$astra" --workload-configuration="$prefix" \
    --system-configuration="$out/astra/system.json" \
    --remote-memory-configuration="$out/astra/memory.json" \
    --network-configuration="$network")
  grep -o 'sys\[0\] finished, [0-9]* cycles' "$out/astra_$size.stdout" | grep -o '[0-9]* cycles' |
    cut -d' ' -f1 >"$out/astra_$size.ns"
}

# sgdsim run SCENARIO at fidelity analytic, plain flow (every message a SimGrid communication),
# flow with private routes in closed form, and flow with rotation (extra --set options after
# SIZE): OUT/run_MODE_SIZE and OUT/sgdsim_MODE_SIZE.cpu.
run_sgdsim_modes() {
  local sgdsim="$1" scenario="$2" out="$3" size="$4" mode extra
  shift 4
  for mode in analytic flow closed rotation; do
    case $mode in
      analytic) extra=(--set fidelity=analytic) ;;
      flow) extra=(--set flow_private_routes=simgrid) ;;
      closed) extra=(--set flow_private_routes=closed_form) ;;
      rotation) extra=(--set flow_symmetry=rotation) ;;
    esac
    timed "$out/sgdsim_${mode}_$size" "$sgdsim" run "$scenario" --out "$out/run_${mode}_$size" \
      --overwrite --quiet --force "$@" "${extra[@]}"
  done
}

# The Markdown table: FIRST is the first column's heading, LABEL a Python format of the size n
# (and of quarter, n / 4: nodes of 4 GPUs) for its cells; ASTRA "-" when ASTRA-sim was not run.
side_by_side_table() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
out, astra, first, label, sizes = sys.argv[1], sys.argv[2] != "-", sys.argv[3], sys.argv[4], sys.argv[5:]
cpu = lambda f: [float(x) for x in open(f"{out}/{f}.cpu").read().split()]
sim_ns = lambda m, n: json.load(open(f"{out}/run_{m}_{n}/summary.json"))["simulated_time_s"] * 1e9
print(f"| {first} | ASTRA-sim: simulated, CPU (peak RSS) | sgdsim flow: simulated | sgdsim analytic: CPU | flow: CPU | flow, closed form: CPU | flow, rotation: CPU | flow / ASTRA-sim CPU | closed form / ASTRA-sim CPU |")
print("|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    s = {m: sim_ns(m, n) for m in ("analytic", "flow", "closed", "rotation")}
    assert abs(s["flow"] - s["rotation"]) <= 1e-9 * s["flow"], s
    assert abs(s["flow"] - s["closed"]) <= 1e-9 * s["flow"], s
    c = {m: cpu(f"sgdsim_{m}_{n}") for m in s}
    a, ratio, closed_ratio, gap = "not run", "", "", ""
    if astra:
        a_ns = float(open(f"{out}/astra_{n}.ns").read())
        a_cpu, a_rss = cpu(f"astra_{n}")
        a = f"{a_ns:,.0f} ns, {a_cpu:.2f} s ({a_rss / 1024:.0f} MiB)"
        ratio = f"x{c['flow'][0] / a_cpu:.2f}"
        closed_ratio = f"x{c['closed'][0] / a_cpu:.3f}"
        gap = f" ({100 * (s['flow'] / a_ns - 1):+.4f} %)"
    print(f"| {label.format(n=int(n), quarter=int(n) // 4)} | {a} | {s['flow']:,.0f} ns{gap} | {c['analytic'][0]:.2f} s "
          f"| {c['flow'][0]:.2f} s ({c['flow'][1] / 1024:.0f} MiB) | {c['closed'][0]:.2f} s | {c['rotation'][0]:.2f} s "
          f"| {ratio} | {closed_ratio} |")
PY
}
