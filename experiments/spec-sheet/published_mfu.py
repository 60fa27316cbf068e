#!/usr/bin/python3
"""The published model FLOPs utilization (MFU) that sgdsim ships, one line per run group.

usage: published_mfu.py   (from the repository root; prints plain text)

MosaicML's llm-foundry benchmark table (A100 40 GB, bf16, FSDP; the rows excerpted in
data/validation/mosaicml-mpt-fsdp-a100-roce/), torchtitan's Llama 2 and Llama 3 runs on 64 A100
80 GB (FSDP2, bf16; data/validation/torchtitan-fsdp-h100/mfu-a100.csv) and KempnerForge's MFU
report (H200, bf16, full activation checkpointing; data/validation/kempnerforge-fsdp-h200/
throughput.csv, the runs without tensor parallelism). docs/spec-sheet.md, "Tensor cores and MFU", prints the output.
"""
import csv

MOSAIC = "data/validation/mosaicml-mpt-fsdp-a100-roce/benchmarks-readme-excerpt.md.txt"
KEMPNER = "data/validation/kempnerforge-fsdp-h200/throughput.csv"
TITAN = "data/validation/torchtitan-fsdp-h100/mfu-a100.csv"


def main():
    rows = [line.split("|") for line in open(MOSAIC) if line.startswith("|  ") and "a100" in line]
    for model in ("125m", "760m"):
        mine = [r for r in rows if r[1].strip() == model]
        mfu = [float(r[5]) for r in mine]
        gpus = sorted(int(r[3]) for r in mine)
        print(f"MosaicML llm-foundry, A100 40 GB, bf16, FSDP, MPT-{model}, sequence 2048: "
              f"MFU {min(mfu):.2f}-{max(mfu):.2f} % on {gpus[0]}-{gpus[-1]} GPUs")
    for r in csv.DictReader(open(TITAN)):
        print(f"torchtitan, A100 80 GB, bf16, FSDP2, {r['model']}, activation checkpointing "
              f"{r['activation_checkpointing']}, {r['gpus']} GPUs: MFU {r['mfu_percent']} %")
    for r in csv.DictReader(open(KEMPNER)):
        if r["parallelism"] == "none" or r["parallelism"].startswith("FSDP="):
            print(f"KempnerForge, H200, bf16, full activation checkpointing, {r['model']} "
                  f"Llama-3-style, sequence {r['seq_len']}, {r['gpus']} GPU(s), "
                  f"{r['parallelism']}: MFU {r['mfu_percent']} %")


if __name__ == "__main__":
    main()
