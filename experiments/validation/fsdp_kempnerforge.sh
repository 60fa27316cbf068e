#!/usr/bin/env bash
# PyTorch FSDP2 throughput of KempnerForge's Llama-3 8B on 1, 2 and 4 H200 of one node, against
# sgdsim calibrated on the 1-GPU run only. Data: data/validation/kempnerforge-fsdp-h200
# (KempnerForge's MFU scaling report of 2026-04-05 and config validation report of 2026-04-06).
#
# Decided before any multi-GPU number was compared (nothing is fitted to 2 GPUs or more):
# - Calibration: the 1-GPU row only (run 01: no FSDP, micro-batch 2 x 4096 tokens, 4
#   micro-batches per step, torch.compile, full activation checkpointing). Its tokens per second
#   give the compute of one micro-batch (device.calibrate), optimizer step included (about 1 %
#   of the step by a pass over the bf16 states; sgdsim adds 4 FLOPs per parameter). The compute
#   scales linearly with the micro-batch (the 4-GPU run uses 4 sequences).
# - Model: llama_profile.py from the benchmark's model flags (8,030,261,248 parameters, the
#   report's 8.03B); one FSDP unit per block (fusion_bytes = a block's bf16 bytes), the token
#   embedding and the output head one unit each (KempnerForge's apply_fsdp2 wraps each block and
#   the root holds the rest).
# - FSDP as KempnerForge and FSDP2 set it: fully_shard per block, reshard_after_forward True,
#   FSDP2's default prefetching (implicit in forward: the next unit's all-gather runs beside the
#   current unit's forward, i.e. forward_prefetch; explicit one unit ahead in backward,
#   backward_pre). Parameters bf16; gradients reduce-scattered in fp32 once per step
#   (set_requires_gradient_sync(False) on the other micro-batches): one simulated iteration is
#   the run's step, its micro-batches (scheme.accumulation_steps) each all-gathering twice in
#   bf16, the last one reduce-scattering in fp32 (accumulation_sync "last", reduce_precision
#   "fp32"), then the optimizer step.
# - Platform: one node of 4 H200 SXM with NVLink (H200 datasheet: 900 GB/s both directions,
#   18 links per Hopper GPU). The board's wiring is not in the sources: taken as fully connected
#   (18 links / 3 peers), a ring hop gets one pair's 6 links: 150 GB/s of line rate (25 GB/s a
#   link), of which NCCL's kernels get its Hopper figure of 20.6 GB/s a link (SM90_NVLINK_BW,
#   src/graph/topo.h): the `nvlink` efficiency 0.824, 123.6 GB/s. NCCL rings, analytic fidelity.
# Second table (not bound): the 32-GPU FSDP run of the other report (8 nodes, NDR 400 Gb/s
# InfiniBand, non-blocking), whose micro-batch (4) and accumulation (4) differ from the
# calibration's, with one 400 Gb/s port per node (the reports' figure) and with four.
# usage: experiments/validation/fsdp_kempnerforge.sh [sgdsim]
# Set after the first comparison, for every overlapping check at once: the scenario's
# device.overlap_slowdown 0.189 (the spec sheet's rule for NCCL beside compute, Lee et al.'s
# mean; not fitted here); overlap_slowdown_effect.py shows each check with and without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
csv=data/validation/kempnerforge-fsdp-h200/throughput.csv
scenario=experiments/validation/kempnerforge-fsdp-h200.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() {  # REPORT RUN COLUMN -> the csv cell
  /usr/bin/python3 experiments/validation/csv_cell.py "$csv" "$3" "report=$1" "run=$2"
}

mfu=mfu_scaling_2026-04-05
seq=$(field $mfu 01 seq_len)
/usr/bin/python3 experiments/validation/llama_profile.py 7b 4096 32 32 8 14336 128256 "$seq" \
  >"$tmp/profile.json"
block_bytes=$(((2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096) * 2))
cal_mb=$(field $mfu 01 micro_batch)
cal_time=$(/usr/bin/python3 -c "print(f'{$cal_mb * $seq / $(field $mfu 01 tokens_per_s):.6f}')")

predict() {  # REPORT RUN LABEL [--set ...] -> one table row
  local report=$1 run=$2 label=$3
  shift 3
  local gpus nodes mb per_node
  gpus=$(field "$report" "$run" gpus)
  nodes=$(field "$report" "$run" nodes)
  mb=$(field "$report" "$run" micro_batch)
  acc=$(field "$report" "$run" grad_accum)
  per_node=$((gpus / nodes))
  "$bin" run "$scenario" --set "model=$tmp/profile.json" --set "batch_size=$mb" \
    --set "scheme.accumulation_steps=$acc" \
    --set "device.calibrate.batch_size=$cal_mb" --set "device.calibrate.iteration_time=${cal_time}s" \
    --set "scheme.fusion_bytes=$block_bytes" --set "workers.count=$gpus" \
    --set "workers.per_node=$per_node" --set "platform.generate.nodes=$nodes" \
    --set "platform.generate.devices_per_node=$per_node" "$@" --out "$tmp/run" >/dev/null
  /usr/bin/python3 - "$tmp/run/summary.json" "$label" "$gpus" "$nodes" "$mb" \
    "$acc" "$(field "$report" "$run" tokens_per_s)" "$seq" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
label, gpus, nodes, mb, acc = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
measured = float(sys.argv[7]) / gpus
predicted = s["throughput_samples_per_s"] * int(sys.argv[8]) / gpus
print(f"| {label} | {gpus} ({nodes}) | {mb} x {acc} | {measured:.0f} | {predicted:.0f} | "
      f"{100 * (predicted / measured - 1):+.1f} % |")
PY
}

echo "| run | GPUs (nodes) | micro-batch x accumulation | measured tokens/s/GPU | predicted | error |"
echo "|---|---|---|---|---|---|"
predict $mfu 01 "01, 1 GPU (calibration)"
predict $mfu 02 "02, FSDP=2"
predict $mfu 04 "04, FSDP=4"
echo
echo "Calibrated on 1 GPU; 2 and 4 GPUs (one node, NVLink) are predicted."
echo
echo "| run (config validation report) | GPUs (nodes) | micro-batch x accumulation | measured tokens/s/GPU | predicted | error |"
echo "|---|---|---|---|---|---|"
cv=config_validation_2026-04-06
predict $cv 7b.toml "7b.toml, FSDP=4"
predict $cv 7b_32gpu_fsdp.toml "7b_32gpu_fsdp.toml, FSDP=32, 1 x 400 Gb/s per node"
predict $cv 7b_32gpu_fsdp.toml "7b_32gpu_fsdp.toml, FSDP=32, 4 x 400 Gb/s per node" \
  --set platform.generate.node_link.bandwidth=1600Gbps
echo
echo "Other report, micro-batches of 8 and 4 sequences: not like for like with the calibration."
