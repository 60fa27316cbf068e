#!/usr/bin/env bash
# Times one MPI_Allreduce under SMPI with SMPI's own algorithm implementation, on a SimGrid
# platform file, for comparison with `sgdsim collective` (tests/cli/smpi_test.cpp).
#
# usage: run_smpi_allreduce.sh ALGO RANKS BYTES PLATFORM [MODEL] [--cfg=NAME:VALUE]...
#
#   ALGO      an sgdsim name, mapped to SMPI's implementation:
#               ring -> lr (logical ring: reduce-scatter + allgather, P-1 steps each);
#               recursive_halving_doubling, rhd -> rab_rdb (Rabenseifner: reduce-scatter by
#                 recursive halving, allgather by recursive doubling);
#               recursive_doubling, rdb -> rdb;
#             any other name is passed to --cfg=smpi/allreduce as is (e.g. rab1, ompi_ring_segmented)
#   RANKS     number of MPI ranks; rank r runs on the r-th <host> of PLATFORM in file order
#             (the hosts `sgdsim collective --platform` uses)
#   BYTES     message size in bytes; MPI_FLOAT elements, so a multiple of 4
#             (use a multiple of 4 x RANKS: lr sends its remainder with another allreduce)
#   PLATFORM  SimGrid platform XML, e.g. from `sgdsim platform --output`
#   MODEL     ideal   = CM02 without cross-traffic or TCP window (sgdsim --network-model ideal)
#             default = SimGrid's default LV08 (sgdsim --network-model default)   [default]
#             smpi    = smpirun's own default, network/model:SMPI (piecewise SMPI factors)
#
# Environment:
#   SMPI_ALLREDUCE_TIMER  the smpicxx-built program (default: build/smpi_allreduce_timer.so of
#                         this source tree, CMake target smpi_allreduce_timer)
#   SMPI_OP               sum (MPI_SUM, default) or noop (a do-nothing commutative MPI_Op: the
#                         same simulated time, without the real reduction loops: faster, and
#                         rdb/rab_rdb's temporary buffers stay untouched, so no real memory)
#   SMPI_ALLOC            shared (SMPI_SHARED_MALLOC buffers, default) or malloc (real buffers,
#                         the send buffer filled: SMPI holds and copies every rank's payload,
#                         ranks x 2 x BYTES of memory; how an unmodified MPI program runs)
#   SMPIRUN               smpirun to use (default: smpirun on PATH)
#   SMPI_COLLECTIVE       allreduce (default), allgather or reduce_scatter: time MPI_Allgather
#                         (BYTES gathered, BYTES/RANKS from each) or MPI_Reduce_scatter instead;
#                         ALGO maps to SMPI's smpi/allgather (ring -> ring, rhd -> rdb) or
#                         smpi/reduce_scatter (ring -> ompi_ring, rhd ->
#                         ompi_basic_recursivehalving)
#
# Prints one JSON line: the program's {"ranks","bytes","time_s","start_skew_s","op"} plus
# "algorithm" (as given), "smpi_algorithm", "model", "wall_s" and "max_rss_kb" (of smpirun and
# its children, from /usr/bin/time; null without it: Debian package `time`). max_rss_kb counts
# every mapping of the shared-malloc pages once per mapping: 64 ranks x 2 x 100 MB shows as
# ~13 GB although the process really holds ~35 MB (PSS); it is not the memory used.
# Exit status: 0 ok, 2 bad arguments, otherwise smpirun's.
set -euo pipefail

die() { echo "run_smpi_allreduce.sh: $*" >&2; exit 2; }

[[ $# -ge 4 ]] || die "usage: run_smpi_allreduce.sh ALGO RANKS BYTES PLATFORM [MODEL] [--cfg=NAME:VALUE]..."
algo=$1 ranks=$2 bytes=$3 platform=$4
shift 4
model=default
if [[ $# -gt 0 && $1 != --* ]]; then model=$1; shift; fi
extra=("$@")

[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "RANKS must be a positive integer, got '$ranks'"
[[ $bytes =~ ^[1-9][0-9]*$ ]] || die "BYTES must be a positive integer, got '$bytes'"
(( bytes % 4 == 0 )) || die "BYTES must be a multiple of 4 (MPI_FLOAT), got $bytes"
[[ -r $platform ]] || die "cannot read platform file '$platform'"

collective=${SMPI_COLLECTIVE:-allreduce}
case $collective in
  allreduce)
    case $algo in
      ring | lr) smpi_algo=lr ;;
      recursive_halving_doubling | rhd | rab_rdb) smpi_algo=rab_rdb ;;
      recursive_doubling | rdb) smpi_algo=rdb ;;
      *) smpi_algo=$algo ;;
    esac ;;
  allgather)
    case $algo in
      ring) smpi_algo=ring ;;
      recursive_halving_doubling | rhd) smpi_algo=rdb ;;
      *) smpi_algo=$algo ;;
    esac ;;
  reduce_scatter)
    case $algo in
      ring) smpi_algo=ompi_ring ;;
      recursive_halving_doubling | rhd) smpi_algo=ompi_basic_recursivehalving ;;
      *) smpi_algo=$algo ;;
    esac ;;
  *) die "SMPI_COLLECTIVE must be allreduce, allgather or reduce_scatter, got '$collective'" ;;
esac

case $model in
  ideal) model_cfg=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:0) ;;
  default | lv08 | LV08) model_cfg=(--cfg=network/model:LV08) ;;
  smpi | SMPI) model_cfg=(--cfg=network/model:SMPI) ;;
  *) die "MODEL must be ideal, default or smpi, got '$model'" ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
timer=${SMPI_ALLREDUCE_TIMER:-$here/../../build/smpi_allreduce_timer.so}
[[ -x $timer ]] || die "no SMPI program at '$timer' (build target smpi_allreduce_timer, or set SMPI_ALLREDUCE_TIMER)"
smpirun=${SMPIRUN:-smpirun}
command -v "$smpirun" >/dev/null || die "smpirun not found (Debian package libsimgrid-dev)"
op=${SMPI_OP:-sum}
alloc=${SMPI_ALLOC:-shared}
[[ $alloc == shared || $alloc == malloc ]] || die "SMPI_ALLOC must be shared or malloc, got '$alloc'"

work=$(mktemp -d "${TMPDIR:-/tmp}/smpi-allreduce.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Host names in declaration order: <host id=...> elements and <cluster prefix radical suffix>
# expansions (radical "0-63" or "0-3,8,10-11"), as SimGrid creates them.
# (awk reads the whole file: no early exit, which would SIGPIPE the writer under pipefail.)
awk -v n="$ranks" '
  function attr(tag, name,   m) {
    if (match(tag, "[[:space:]]" name "=(\"[^\"]*\"|\047[^\047]*\047)")) {
      m = substr(tag, RSTART, RLENGTH); sub(/^[^=]*=./, "", m); return substr(m, 1, length(m) - 1)
    }
    return ""
  }
  function emit(name) { if (++count <= n) print name }
  BEGIN { RS = "<" }
  /^host[[:space:]\/>]/ { emit(attr($0, "id")) }
  /^cluster[[:space:]\/>]/ {
    k = split(attr($0, "radical"), parts, ",")
    for (i = 1; i <= k; i++) {
      if (split(parts[i], ab, "-") == 2) { for (j = ab[1] + 0; j <= ab[2] + 0; j++) emit(attr($0, "prefix") j attr($0, "suffix")) }
      else emit(attr($0, "prefix") parts[i] attr($0, "suffix"))
    }
  }' "$platform" >"$work/hostfile"
found=$(wc -l <"$work/hostfile")
(( found == ranks )) || die "platform '$platform' declares $found hosts (<host> or <cluster>), need $ranks"

# Everything that could make SMPI's time differ from the bare network model, set explicitly.
opts=(
  --cfg=smpi/"$collective":"$smpi_algo"
  --cfg=smpi/simulate-computation:no     # do not inject the real CPU time of user code
  --cfg=smpi/cpu-threshold:-1            # ... nor any benchmarked block
  --cfg=smpi/host-speed:1Gf              # only used to convert benchmarked time (none here)
  --cfg=smpi/os:0:0:0:0:0                # no per-message send/recv/isend overheads
  --cfg=smpi/or:0:0:0:0:0
  --cfg=smpi/ois:0:0:0:0:0
  --cfg=smpi/wtime:0                     # MPI_Wtime injects 10 ns by default
  --cfg=smpi/init:0
  --cfg=smpi/send-is-detached-thresh:65536   # SMPI's default (eager below 64 KiB)
  --cfg=smpi/async-small-thresh:0        # default: no eager mailbox
  --cfg=smpi/shared-malloc:global        # SMPI_SHARED_MALLOC buffers share physical pages
  --cfg=smpi/privatization:no            # the program has no mutable globals
  --cfg=smpi/display-timing:no
  --cfg=surf/precision:1e-9              # smpirun's own setting, stated
  "${model_cfg[@]}"
  --log=root.thres:critical              # SimGrid's info lines would pollute stdout
  "${extra[@]}"
)

cmd=("$smpirun" -np "$ranks" -platform "$platform" -hostfile "$work/hostfile" "${opts[@]}" "$timer" "$bytes" "$op" "$alloc" "$collective")
status=0
if [[ -x /usr/bin/time ]]; then
  /usr/bin/time -f '%e %M' -o "$work/time" "${cmd[@]}" >"$work/out" 2>"$work/err" || status=$?
  read -r wall rss <"$work/time" || true
  [[ ${wall:-} =~ ^[0-9.]+$ ]] || wall=null
  [[ ${rss:-} =~ ^[0-9]+$ ]] || rss=null
else  # no /usr/bin/time (Debian package `time`): wall time only
  start=$EPOCHREALTIME
  "${cmd[@]}" >"$work/out" 2>"$work/err" || status=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  rss=null
fi
json=$(grep -m1 '^{"ranks"' "$work/out" || true)
if [[ $status -ne 0 || -z $json ]]; then
  echo "run_smpi_allreduce.sh: smpirun failed (status $status): ${cmd[*]}" >&2
  tail -n 20 "$work/out" "$work/err" >&2
  exit $(( status == 0 ? 1 : status ))
fi
echo "${json%\}},\"algorithm\":\"$algo\",\"smpi_algorithm\":\"$smpi_algo\",\"model\":\"$model\",\"wall_s\":$wall,\"max_rss_kb\":$rss}"
