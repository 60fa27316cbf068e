#!/usr/bin/env bash
# PyTorch FSDP throughput of MosaicML's MPT benchmark (llm-foundry, Composer's FSDP:
# FULL_SHARD, bf16 PURE) on 8 to 128 A100 40 GB with 1600 Gbps RoCE between nodes, against
# sgdsim. Data: data/validation/mosaicml-mpt-fsdp-a100-roce (llm-foundry's benchmark README).
#
# Decided before any multi-node number was compared (nothing is fitted to 16-128 GPUs):
# - Calibration: the 8-GPU row only (one node). Its tokens per second per GPU give the compute
#   of one micro-batch (micro_batch x 2048 tokens at that rate: device.calibrate). Each row
#   runs its own accumulation (grad_accum micro-batches per step: scheme.accumulation_steps;
#   3-4 at 8 GPUs, 1 from 16): under FSDP Composer synchronizes every micro-batch (its
#   ddp_sync_context applies no_sync to DDP modules only), accumulation_sync "every".
# - Model: mpt_profile.py from the MPT yamls (d_model, n_layers, vocab) and the table's
#   parameter count; one FSDP unit per block (fusion_bytes = a block's bf16 bytes) and one for
#   the embeddings (Composer wraps each MPT block, the root holds the rest).
# - FSDP as Composer's defaults set it: FULL_SHARD (reshard after forward), backward_prefetch
#   BACKWARD_POST, no forward prefetch; bf16 parameters and gradients on the wire.
# - Platform: nodes of 8 A100 on NVSwitch (node preset dgx-a100: 8 x 200 Gb/s NICs with GPU
#   Direct RDMA), 1600 Gbps per node over RoCE (technology rdma), one star switch; flat NCCL
#   rings over all GPUs (NCCL runs all-gather and reduce-scatter as rings); analytic fidelity.
# - ALGORITHM nccl_tuner instead: the same rings after NCCL's tuner latency (p - 1 steps per
#   all-gather or reduce-scatter) and the A100 40 GB's memory term (1,555 GB/s, its datasheet).
# usage: experiments/validation/fsdp_mpt.sh [sgdsim [ring|nccl_tuner]]   (default ring)
# Set after the first comparison, for every overlapping check at once: the scenario's
# device.overlap_slowdown 0.189 (the spec sheet's rule for NCCL beside compute, Lee et al.'s
# mean; not fitted here); overlap_slowdown_effect.py shows each check with and without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
algorithm=${2:-ring}
case $algorithm in
  ring) collective=() ;;
  nccl_tuner) collective=(--set collective.algorithm=nccl_tuner
                          --set collective.memory_bandwidth=1555GBps) ;;
  *) echo "fsdp_mpt.sh: expected ring or nccl_tuner, got $algorithm" >&2; exit 2 ;;
esac
csv=data/validation/mosaicml-mpt-fsdp-a100-roce/throughput.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() {  # MODEL GPUS COLUMN -> the csv cell
  /usr/bin/python3 experiments/validation/csv_cell.py "$csv" "$3" "model=$1" "gpus=$2"
}

echo "| model | GPUs (nodes) | measured tokens/s/GPU | predicted | error |"
echo "|---|---|---|---|---|"
for model in 125m 760m; do
  d=$(field "$model" 8 d_model)
  layers=$(field "$model" 8 n_layers)
  seq=$(field "$model" 8 seq_len)
  mb=$(field "$model" 8 micro_batch)
  /usr/bin/python3 experiments/validation/mpt_profile.py "$model" "$d" "$layers" \
    "$(field "$model" 8 vocab_size)" "$seq" "$(field "$model" 8 parameters)" >"$tmp/$model.json"
  one=$(field "$model" 8 tokens_per_s_per_gpu)
  step=$(/usr/bin/python3 -c "print(f'{$mb * $seq / $one:.6f}')")
  for gpus in 8 16 32 64 128; do
    measured=$(field "$model" "$gpus" tokens_per_s_per_gpu)
    "$bin" run experiments/validation/mpt-fsdp-a100.json --set "model=$tmp/$model.json" \
      --set "batch_size=$mb" --set "device.calibrate.batch_size=$mb" \
      --set "scheme.accumulation_steps=$(field "$model" "$gpus" grad_accum)" \
      --set "device.calibrate.iteration_time=${step}s" \
      --set "scheme.fusion_bytes=$((12 * d * d * 2))" --set "workers.count=$gpus" \
      --set "platform.generate.nodes=$((gpus / 8))" "${collective[@]}" \
      --out "$tmp/$model-$gpus" >/dev/null
    /usr/bin/python3 - "$tmp/$model-$gpus/summary.json" "$model" "$gpus" "$measured" "$seq" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
model, gpus, measured, seq = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
predicted = s["throughput_samples_per_s"] * seq / gpus
tag = " (calibration)" if gpus == 8 else ""
print(f"| {model} | {gpus} ({gpus // 8}){tag} | {measured:.0f} | {predicted:.0f} | "
      f"{100 * (predicted / measured - 1):+.1f} % |")
with open(sys.argv[1] + ".row", "w") as f:
    f.write(f"{model} {gpus} {measured} {predicted}\n")
PY
    cat "$tmp/$model-$gpus/summary.json.row" >>"$tmp/rows"
  done
done
echo
/usr/bin/python3 - "$tmp/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
r = {(m, int(g)): (float(a), float(b)) for m, g, a, b in rows}
fall = lambda m, k: 100 * (r[(m, 128)][k] / r[(m, 8)][k] - 1)
print("Fall from 8 to 128 GPUs: " + "; ".join(
    f"{m} measured {fall(m, 0):+.0f} %, predicted {fall(m, 1):+.0f} %" for m in ("125m", "760m")) +
    ". Median |error| of the 8 predicted rows: %.1f %%." % statistics.median(
        100 * abs(b / a - 1) for (m, g), (a, b) in r.items() if g > 8))
PY
echo "Calibrated on one node (8 GPUs); 16-128 GPUs are predicted."
