# Sourced by the convergence scripts: runs one setting over several seeds.
# run_seeds OUT_DIR SGDSIM SCENARIO [--set k=v ...] runs the scenario once per seed in
# $SEEDS (default "1 2 3 4 5"; `seed` sets the weight initialisation, the shard permutation
# and, on the synthetic dataset, the data), into OUT_DIR/seed-N, $JOBS (default 2) at a time.
# accuracy_table.py aggregates such directories (mean and 95 % t-interval per setting).
SEEDS=${SEEDS:-1 2 3 4 5}
JOBS=${JOBS:-2}
run_seeds() {
  local dir=$1 bin=$2 scenario=$3
  shift 3
  mkdir -p "$dir"
  printf '%s\n' $SEEDS | xargs -P "$JOBS" -I{} "$bin" run "$scenario" --out "$dir/seed-{}" \
    --quiet --set seed={} "$@"
}
