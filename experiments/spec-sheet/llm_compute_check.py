#!/usr/bin/python3
"""How far the spec sheet alone gets for an LLM's compute on A100: torchtitan's Llama runs on
64 A100 80 GB predicted with an MFU carried from another source and model.

usage: llm_compute_check.py [SGDSIM]   (default build/sgdsim; prints a Markdown table)

For each row of data/validation/torchtitan-fsdp-h100/mfu-a100.csv, one GPU of the shipped
profile (llama2_13b, llama2_70b, llama3_8b, llama3_70b is not shipped: skipped) at the row's
local batch runs with device.speed 312 TFLOP/s (the A100 datasheet's dense bf16 peak) and
device.efficiency = MosaicML's MPT-760m MFU on 8 A100 (52.89 %, the largest model of its
table, data/validation/mosaicml-mpt-fsdp-a100-roce), no network: the compute the spec-sheet
mapping gives. Its tokens per second against the row's measured tokens per second per GPU
(which include whatever communication the 64-GPU run exposed and the activation
checkpointing's recompute).

Then the same mapping carried to another GPU: torchtitan's 8-GPU rows on H100 (one Grand Teton
host, data/validation/torchtitan-fsdp-h100/throughput.csv, eager and torch.compile), one GPU of
llama3_8b at device.speed 989 TFLOP/s (the H100 SXM datasheet's dense bf16 peak) with the
A100's MFU above and with KempnerForge's 1-GPU H200 MFU (data/validation/kempnerforge-fsdp-h200).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROWS = "data/validation/torchtitan-fsdp-h100/mfu-a100.csv"
H100 = "data/validation/torchtitan-fsdp-h100/throughput.csv"
KEMPNER = "data/validation/kempnerforge-fsdp-h200/throughput.csv"
MOSAIC = "data/validation/mosaicml-mpt-fsdp-a100-roce/benchmarks-readme-excerpt.md.txt"
PROFILE = {"llama2-13b": ("llama2_13b", 4096), "llama2-70b": ("llama2_70b", 4096),
           "llama3-8b": ("llama3_8b", 8192)}


def mosaic_mfu():
    """MFU of MPT-760m on 8 GPUs, as a fraction."""
    for line in open(MOSAIC):
        c = [x.strip() for x in line.split("|")]
        if line.startswith("|  ") and c[1] == "760m" and c[3] == "8":
            return float(c[5]) / 100
    sys.exit("llm_compute_check.py: no MPT-760m 8-GPU row in " + MOSAIC)


def kempner_mfu():
    """KempnerForge's 1-GPU MFU on H200, as a fraction."""
    for r in csv.DictReader(open(KEMPNER)):
        if r["gpus"] == "1":
            return float(r["mfu_percent"]) / 100
    sys.exit("llm_compute_check.py: no 1-GPU row in " + KEMPNER)


def predicted(binary, tmp, model, batch, efficiency, speed="312Tf"):
    out = os.path.join(tmp, "run")
    subprocess.run([binary, "run", "experiments/examples/02-minimal.json", "--quiet", "--overwrite",
                    "--out", out, "--set", f"model={model}", "--set", f"batch_size={batch}",
                    "--set", "workers.count=1", "--set", "iterations=2",
                    "--set", "warmup_iterations=1", "--set", f"device.speed=\"{speed}\"",
                    "--set", f"device.efficiency={efficiency}"], check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["throughput_samples_per_s"]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    mfu = mosaic_mfu()
    print(f"device.efficiency {mfu:.4f} (MPT-760m, 8 A100), device.speed 312 TFLOP/s")
    print()
    print("| model | activation checkpointing | batch | measured tokens/s/GPU (MFU) | predicted | error |")
    print("|---|---|---|---|---|---|")
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in csv.DictReader(open(ROWS)):
            if r["model"] not in PROFILE:
                continue
            model, seq = PROFILE[r["model"]]
            p = predicted(binary, tmp, model, int(r["local_batch"]), mfu) * seq
            m = float(r["tokens_per_s_per_gpu"])
            errors.append(100 * (p / m - 1))
            print(f"| `{model}` | {r['activation_checkpointing']} | {r['local_batch']} | "
                  f"{m:.0f} ({r['mfu_percent']} %) | {p:.0f} | {errors[-1]:+.1f} % |")
        print()
        print(f"{len(errors)} rows: from {min(errors):+.1f} to {max(errors):+.1f} %.")
        print()
        print("Carried to H100 (989 TFLOP/s), torchtitan's 8-GPU rows:")
        print()
        print("| techniques | measured tokens/s/GPU (its efficiency) | with the A100's MFU | error "
              "| with H200's (KempnerForge, 1 GPU) | error |")
        print("|---|---|---|---|---|---|")
        other = kempner_mfu()
        for r in csv.DictReader(open(H100)):
            if r["gpus"] != "8" or "Float8" in r["techniques"]:
                continue
            m = float(r["tokens_per_s_per_gpu"])
            batch, seq = int(r["local_batch"]), int(r["seq_len"])
            a = predicted(binary, tmp, "llama3_8b", batch, mfu, "989Tf") * seq
            k = predicted(binary, tmp, "llama3_8b", batch, other, "989Tf") * seq
            # The efficiency that gives the measured rate (the simulated step is all compute).
            print(f"| {r['techniques']} | {m:.0f} ({m / a * mfu:.2f}) | {a:.0f} | "
                  f"{100 * (a / m - 1):+.1f} % | "
                  f"{k:.0f} ({100 * other:.1f} %) | {100 * (k / m - 1):+.1f} % |")


if __name__ == "__main__":
    main()
