#!/usr/bin/python3
"""What device.overlap_slowdown changes on the training checks that overlap NCCL collectives with
compute: each check's table as the docs hold it (its scenario sets the spec sheet's 0.189; the
docs check holds those tables equal to a fresh run, so they are read, not run again) and each
script run again with the slowdown set to 0, the predicted rows' errors summarised.

usage: overlap_slowdown_effect.py [SGDSIM]   (default build/sgdsim; prints a Markdown table)

A row's error is the first "error" column of its script's Markdown tables (the prediction
against the measurement, as the script prints it, rounded to 0.1 %); calibration rows are left
out, the scripts' diagnostic rows (no overlap, other calibrations) kept. For each
check: the median and the largest |error|, and the mean signed error (> 0: too fast).
"""
import os
import statistics
import subprocess
import sys
import tempfile

CHECKS = [  # name, then each command of its script ("BIN": the sgdsim binary)
    ("FlagPerf GPT-2 medium and ResNet-50, 8 and 16 A100 (DDP)",
     ["experiments/validation/flagperf_a100.sh", "BIN", "gpt2"],
     ["experiments/validation/flagperf_a100.sh", "BIN", "resnet50"]),
    ("Horovod 2017, 16 and 64 Pascal GPUs (TCP and RDMA)",
     ["/usr/bin/python3", "experiments/validation/horovod_2017.py", "BIN"]),
    ("KempnerForge FSDP, Llama-3 8B on 2-32 H200",
     ["experiments/validation/fsdp_kempnerforge.sh", "BIN"]),
    ("MosaicML MPT FSDP, 16-128 A100 (RoCE)", ["experiments/validation/fsdp_mpt.sh", "BIN"]),
    ("torchtitan FSDP, Llama 3.1 8B on 128 H100",
     ["experiments/validation/fsdp_torchtitan.sh", "BIN"]),
]


def errors(output):
    """The first "error" column of each Markdown table in `output`, calibration rows left out."""
    found, column = [], None
    for line in output.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if column is None:
            column = cells.index("error") if "error" in cells else -1
            continue
        if column < 0 or cells[0].startswith("---") or "calibration" in line:
            continue
        value = cells[column].replace("%", "").strip()
        try:
            found.append(float(value))
        except ValueError:
            pass
    return found


def run(binary, commands):
    out = ""
    for cmd in commands:
        argv = [binary if a == "BIN" else a for a in cmd]
        out += subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return out


def documented(commands):
    """The docs' blocks of `commands` (as the docs write them, with build/sgdsim)."""
    out = ""
    for cmd in commands:
        shown = " ".join("build/sgdsim" if a == "BIN" else a for a in cmd)
        out += subprocess.run(["/usr/bin/python3", "tests/repo/docs_check.py", "--print", shown],
                              capture_output=True, text=True, check=True).stdout
    return out


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim")
    print("| check | predicted rows | median \\|error\\| without / with | largest \\|error\\| "
          "without / with | mean error without / with |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        # sgdsim that runs every scenario with the slowdown off (a later --set wins).
        off = os.path.join(tmp, "sgdsim-no-slowdown")
        with open(off, "w") as f:
            f.write(f'#!/bin/sh\nif [ "$1" = run ]; then exec "{binary}" "$@" '
                    f'--set device.overlap_slowdown=0; fi\nexec "{binary}" "$@"\n')
        os.chmod(off, 0o755)
        for name, *commands in CHECKS:
            a, b = errors(run(off, commands)), errors(documented(commands))
            med = [statistics.median(abs(e) for e in x) for x in (a, b)]
            top = [max(abs(e) for e in x) for x in (a, b)]
            mean = [statistics.mean(x) for x in (a, b)]
            print(f"| {name} | {len(b)} | {med[0]:.1f} / {med[1]:.1f} % | {top[0]:.1f} / "
                  f"{top[1]:.1f} % | {mean[0]:+.1f} / {mean[1]:+.1f} % |")


if __name__ == "__main__":
    main()
