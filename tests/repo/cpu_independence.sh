#!/usr/bin/env bash
# Same numbers on every x86-64 CPU: trains the MLP and the CNN (example 16, 12 iterations) as if
# on CPUs with very different caches (SGDSIM_SIMULATE_CPU_CACHES: what Eigen would detect there)
# and with glibc's FMA/AVX2 code paths masked off (GLIBC_TUNABLES: the libm variant a CPU without
# FMA gets), and requires byte-identical convergence.csv and iterations.csv every time, and the
# same summary.json but for wall_time_s (its final_loss has 16 digits: convergence.csv's 6 would
# hide a last-bit change).
# usage: tests/repo/cpu_independence.sh [path/to/sgdsim]    (exit 1 on any difference)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/sgdsim}"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
example="$root/experiments/examples/16-cnn-pseudo-sync.json"
short=(--set iterations=12 --set training.eval_every=4 --set warmup_iterations=1)
declare -A models=([cnn]='{"type": "cnn", "channels": [4, 8], "kernel": 5, "hidden": [32]}'
                   [mlp]='{"type": "mlp", "hidden": [256, 128]}')
# name=environment: the pinned sizes, a small old CPU, this kind of server, a huge-cache EPYC.
settings=("pinned=" "small=SGDSIM_SIMULATE_CPU_CACHES=8192,65536,1048576"
          "server=SGDSIM_SIMULATE_CPU_CACHES=49152,2097152,503316480"
          "epyc=SGDSIM_SIMULATE_CPU_CACHES=32768,524288,268435456"
          "nofma=GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F")
status=0
for m in cnn mlp; do
  for s in "${settings[@]}"; do
    name=${s%%=*}; envvar=${s#*=}
    env $envvar "$bin" run "$example" --quiet --out "$d/$m-$name" "${short[@]}" \
      --set "training.model=${models[$m]}" >/dev/null
    grep -v '"wall_time_s"' "$d/$m-$name/summary.json" > "$d/$m-$name/summary.nowall"
    for f in convergence.csv iterations.csv summary.nowall; do
      if [ "$name" != pinned ] && ! cmp -s "$d/$m-pinned/$f" "$d/$m-$name/$f"; then
        echo "cpu_independence: $m $f differs under $envvar"; status=1
      fi
    done
  done
  echo "cpu_independence: $m: $(wc -l < "$d/$m-pinned/convergence.csv") convergence rows," \
       "final row $(tail -1 "$d/$m-pinned/convergence.csv")"
done
[ $status = 0 ] && echo "cpu_independence: byte-identical under ${#settings[@]} settings"
exit $status
