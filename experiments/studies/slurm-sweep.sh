#!/usr/bin/env bash
# Runs a sweep on a Slurm allocation: one MPI rank per node (sgdsim_mpi_sweep), each running
# as many `sgdsim run` processes at a time as it has CPUs. Rank 0 hands the runs out and writes
# OUT/results.jsonl and OUT/results.csv; OUT must be on a file system every node sees.
# Resumable: submit the same command again after a timeout or a cancel, and only the missing
# or failed runs run.
#
# usage: sbatch [--nodes N] experiments/studies/slurm-sweep.sh [SWEEP.json] [OUT]
#        (from the repository root; SGDSIM_BUILD=path/to/build if not ./build)
#SBATCH --job-name=sgdsim-sweep
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=32
#SBATCH --time=01:00:00
#SBATCH --output=sgdsim-sweep-%j.log
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
sweep=${1:-experiments/studies/scaling.json}
out=${2:-results/$(basename "$sweep" .json)}
build=${SGDSIM_BUILD:-build}
jobs=${SLURM_CPUS_PER_TASK:-$(nproc)}
if [[ ! -x "$build/sgdsim_mpi_sweep" ]]; then
  echo "slurm-sweep.sh: $build/sgdsim_mpi_sweep not found (build with Open MPI installed: make build)" >&2
  exit 2
fi
# --bind-to none: a rank's child processes must be free to use all the node's CPUs.
# (With a PMIx-enabled Slurm, `srun --mpi=pmix "$build/sgdsim_mpi_sweep" ...` works as well.)
# Open MPI refuses to start as root unless told so (containers and CI run as root).
root_flag=(); [[ $(id -u) == 0 ]] && root_flag=(--allow-run-as-root)
exec mpirun "${root_flag[@]}" --map-by ppr:1:node --bind-to none \
  "$build/sgdsim_mpi_sweep" "$sweep" --out "$out" -j "$jobs"
