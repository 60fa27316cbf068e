#!/usr/bin/env bash
# Runs every fuzz target (or the named ones) for SECONDS each, JOBS at a time, on its seed
# corpus (tests/fuzz/make_corpus.sh, built first if missing), and prints executions and
# coverage from libFuzzer's final statistics. Exits 1 if a target crashed: the input is kept
# as build-fuzz/artifacts/<target>-crash-* (add it to tests/fuzz/regressions/ once fixed).
#
# usage: tests/fuzz/run.sh [-t SECONDS] [-j JOBS] [TARGET...]
# environment: FUZZ_DIR=build folder of the fuzz preset (default build-fuzz)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${FUZZ_DIR:-$root/build-fuzz}"
[[ -d "$dir" ]] || { echo "run.sh: $dir does not exist (cmake --build --preset fuzz)" >&2; exit 2; }
dir="$(cd "$dir" && pwd)"
seconds=60
jobs=2
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -t) seconds="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] ||
  mapfile -t targets < <(grep -E '^[a-z_]+$' "$root/tests/fuzz/targets.txt")
for t in "${targets[@]}"; do
  [[ -x "$dir/fuzz_$t" ]] || { echo "run.sh: $dir/fuzz_$t not built (cmake --build --preset fuzz)" >&2; exit 2; }
done
[[ -d "$dir/corpus" ]] || "$root/tests/fuzz/make_corpus.sh" "$dir/corpus" >/dev/null
mkdir -p "$dir/logs" "$dir/artifacts"
rm -f "$dir"/logs/*.rc

run_one() {
  local t="$1"
  mkdir -p "$dir/work/$t"
  # New inputs go to work/<t>; the seed corpus stays as make_corpus.sh built it.
  "$dir/fuzz_$t" "$dir/work/$t" "$dir/corpus/$t" -max_total_time="$seconds" -timeout=60 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
    >"$dir/logs/$t.log" 2>&1
  echo $? >"$dir/logs/$t.rc"
}

status=0
pids=()
for t in "${targets[@]}"; do
  while [[ ${#pids[@]} -ge $jobs ]]; do
    wait "${pids[0]}" || true
    pids=("${pids[@]:1}")
  done
  ( cd "$dir" && run_one "$t" ) &
  pids+=($!)
done
wait

printf '%-16s %12s %8s %8s %8s  %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
  log="$dir/logs/$t.log"
  rc="$(cat "$dir/logs/$t.rc" 2>/dev/null || echo missing)"
  touch "$log"
  execs=$(grep 'stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1)
  persec=$(grep 'stat::average_exec_per_sec:' "$log" | awk '{print $2}' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1)
  cov=$(awk '{print $2}' <<<"$last")
  ft=$(awk '{print $4}' <<<"$last")
  result=ok
  if grep -qE 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|fuzz invariant broken|==[0-9]+== ?ERROR' "$log"; then
    result="CRASH (see $log)"
    status=1
  elif [[ "$rc" != 0 ]]; then
    result="FAILED, exit $rc (see $log)"
    status=1
  fi
  printf '%-16s %12s %8s %8s %8s  %s\n' "$t" "${execs:--}" "${persec:--}" "${cov:--}" "${ft:--}" "$result"
done
exit $status
