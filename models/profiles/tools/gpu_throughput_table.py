#!/usr/bin/python3
"""device.calibrate values from published single-GPU training throughput.

Reads data/calibration/gpu-training-throughput/throughput.csv (rows typed from the README
excerpts and transcriptions beside it; SOURCES.md in data/calibration/) and prints, per GPU x
model x precision x batch, the `device.calibrate` a scenario sets: `iteration_time` =
batch_per_gpu / samples_per_s (3 significant digits; the measured batch time where the source
gives one) and `batch_size` = batch_per_gpu, with the sgdsim `model` to
use. The rate of the largest GPU count of the same table, when published, is shown per GPU next
to it. Before printing, every row is checked against its excerpt: a line of the excerpt must hold
the row's GPU count (or node count, or GPU name) in its first cell and the row's number in
another; a row whose notes name a column (`column 'NAME'`) must have its number in that column
of the `## TABLE` section its `table` names and, when the notes name a `global batch in 'TABLE'`
section, batch_per_gpu x gpus in the same row and column there. A row that is not found stops
the script (exit 1), so the table cannot drift from the sources.

What it leaves out: any scaling from one GPU model to another (none is published with these
data); rows are what the sources measured, with their framework, container and data pipeline.

usage: gpu_throughput_table.py [--root DIR] [--set-args SOURCE_ID GPU MEMORY_GB PRECISION]
  --set-args  print the `sgdsim run --set` arguments of that source's 1-GPU row instead
  --selftest  check that a changed number, a number moved to another column and a changed
              batch in a scratch copy of the CSV are each caught (exit 1 if not)
Standard library only, deterministic.
"""
import argparse
import csv
import math
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA = "data/calibration/gpu-training-throughput"

# Published model name -> sgdsim model (docs/profiles.md, docs/transformer-profiles.md).
SGDSIM_MODEL = {"ResNet-50 v1.5": "resnet50", "ResNet-50 v1": "resnet50", "ResNet-50": "resnet50",
                "BERT-large": "bert_large_v100", "BERT-base": "bert_base_v100",
                "Inception-v3": "inception_v3", "VGG-16": "vgg16", "AlexNet": "alexnet",
                "Inception-v1": "googlenet", "ResNet-152": "resnet152"}
GPU_ORDER = ["H100", "A100", "V100", "A40", "RTX A6000", "A10", "RTX 4090", "RTX 3090",
             "RTX 2080 Ti", "P100", "M60", "K80", "GTX 1080 Ti", "Titan X (Pascal)", "GTX 1080",
             "Titan X (Maxwell)"]
PRECISION_ORDER = ["fp32", "tf32", "amp"]


def sig3(x):
    """x with 3 significant digits, never in exponent form."""
    digits = 2 - int(math.floor(math.log10(x)))
    return f"{round(x, digits):.{max(0, digits)}f}"


def cells(line):
    """The stripped cells of a Markdown table line, bold markers and units removed."""
    parts = [c.strip().strip("*").replace(" img/s", "").strip() for c in line.split("|")]
    return [c for c in parts if c != ""]


def section(lines, heading):
    """The lines of an excerpt under `## heading`, up to the next heading."""
    out, inside = [], False
    for ln in lines:
        if ln.startswith("#"):
            inside = ln == f"## {heading}"
        elif inside:
            out.append(ln)
    return out


def cell(lines, heading, lead, column):
    """The cell of the table under `## heading` in the row led by `lead` and the column headed
    `column`; None when there is no such cell."""
    rows = [c for c in map(cells, section(lines, heading)) if c]
    if not rows or column not in rows[0]:
        return None
    i = rows[0].index(column)
    return next((c[i] for c in rows[1:] if c[0] == lead and len(c) > i), None)


def found_in_column(row, lines, column):
    """Whether the row's number is in its column of its table, and (when the notes name a batch
    table) batch_per_gpu x gpus in the same row and column of that table."""
    lead = re.search(r"table row '([^']+)'", row["notes"]).group(1)
    if cell(lines, row["table"], lead, column) != row["samples_per_s"]:
        return False
    batch = re.search(r"global batch in '([^']+)'", row["notes"])
    total = int(row["batch_per_gpu"]) * int(row["gpus"])
    return not batch or cell(lines, batch.group(1), lead, column) == str(total)


def found(row, lines):
    """Whether the row's number stands in a line of its excerpt, led by its GPU count (or by
    the table row that `notes` names; in the column it names, when it names one)."""
    column = re.search(r"column '([^']+)'", row["notes"])
    if column:
        return found_in_column(row, lines, column.group(1))
    if row["batch_time_ms"]:
        m = re.search(r"GPU row '([^']+)', cuDNN ([\d.]+)", row["notes"])
        lead, value, col = m.group(1), row["batch_time_ms"], 4
        return any(len(c) == 5 and c[0] == lead and c[1] == m.group(2) and c[col] == value
                   for c in map(cells, lines))
    named = re.search(r"table row '([^']+)'", row["notes"])
    lead = named.group(1) if named else "1" if "(1 node)" in row["table"] else row["gpus"]
    return any(c and c[0] == lead and row["samples_per_s"] in c[1:] for c in map(cells, lines))


def load(root):
    rows = list(csv.DictReader(open(os.path.join(root, DATA, "throughput.csv"))))
    missing = []
    for r in rows:
        lines = open(os.path.join(root, DATA, r["excerpt"]), encoding="utf-8").read().splitlines()
        if not found(r, lines):
            missing.append(f"{r['source_id']}: {r['gpu']} {r['model']} {r['precision']} "
                           f"gpus {r['gpus']} {r['samples_per_s']} (batch {r['batch_per_gpu']}) "
                           f"not in {r['excerpt']}")
    if missing:
        sys.exit("\n".join(missing))
    return rows


def key(r):
    """Rows of one published measurement: same GPU, model, software, precision, data, batch."""
    return (r["gpu"], r["gpu_memory_gb"], r["form_factor"], r["system"], r["model"],
            r["framework"], r["software"], r["precision"], r["data"], r["task"], r["seq_len"],
            r["batch_per_gpu"], r["table"])


def order(k):
    gpu, mem, form, system, model, fw, sw, prec, data, task, seq, batch, _ = k
    return (list(SGDSIM_MODEL).index(model), GPU_ORDER.index(gpu), -int(mem), form, system, fw,
            sw, task, int(seq or 0), PRECISION_ORDER.index(prec), data, int(batch))


def line(k, group):
    gpu, mem, form, system, model, fw, sw, prec, data, task, seq, batch, _ = k
    one = [r for r in group if r["gpus"] == "1"]
    node = max((r for r in group if r["gpus"] != "1"), key=lambda r: int(r["gpus"]), default=None)
    src = group[0]["source_id"]
    if one and one[0]["batch_time_ms"]:
        ms, rate = float(one[0]["batch_time_ms"]), one[0]["samples_per_s"]
        note = ""
    elif one:
        rate = one[0]["samples_per_s"]
        ms, note = int(batch) / float(rate) * 1e3, ""
    else:
        per_gpu = float(node["samples_per_s"]) / int(node["gpus"])
        rate, ms, note = "-", int(batch) / per_gpu * 1e3, " (node)"
    if node:
        per_gpu = float(node["samples_per_s"]) / int(node["gpus"])
        scaled = f"{node['gpus']}: {per_gpu:.1f}"
        scaled += f" ({100 * per_gpu / float(rate):.0f} %)" if one else ""
    else:
        scaled = "-"
    what = task + (f" {seq}" if seq else "")
    return (f"| {gpu} {mem} GB {form} | {system} | {model} | `{SGDSIM_MODEL[model]}` | {fw} | "
            f"{prec} | {data} | {what} | {rate} | {scaled} | {sig3(ms)} ms{note} | {batch} | {src} |")


def set_args(rows, source_id, gpu, memory_gb, precision):
    """The --set arguments of the first 1-GPU row of that source, GPU and precision."""
    for r in rows:
        if (r["source_id"], r["gpu"], r["gpu_memory_gb"], r["precision"], r["gpus"]) == \
                (source_id, gpu, memory_gb, precision, "1"):
            ms = float(r["batch_time_ms"] or int(r["batch_per_gpu"]) / float(r["samples_per_s"]) * 1e3)
            out = [f"--set model={SGDSIM_MODEL[r['model']]}", f"--set batch_size={r['batch_per_gpu']}",
                   f"--set device.calibrate.iteration_time={sig3(ms)}ms",
                   f"--set device.calibrate.batch_size={r['batch_per_gpu']}"]
            return " ".join(out)
    sys.exit(f"no 1-GPU row of {source_id} for {gpu} {memory_gb} GB {precision}")


def mutations(rows):
    """Changed copies of the CSV rows, each with one number that its excerpt does not hold: any
    row's rate, a column-checked row's rate moved to another column of its table row, and that
    row's batch."""
    yield "a changed number", 0, "samples_per_s", "0.123456"
    i, r = next((i, r) for i, r in enumerate(rows) if "column 'resnet50'" in r["notes"])
    sibling = r["notes"].replace("'resnet50'", "'bert_base_squad'")
    other = next(o for o in rows if o["notes"] == sibling and o["gpus"] == r["gpus"]
                 and o["excerpt"] == r["excerpt"])
    yield "a number of another column", i, "samples_per_s", other["samples_per_s"]
    yield "a changed batch", i, "batch_per_gpu", str(2 * int(r["batch_per_gpu"]))


def selftest(root):
    """Each mutated CSV stops load(): the check can fail."""
    rows = list(csv.DictReader(open(os.path.join(root, DATA, "throughput.csv"))))
    for what, i, field, value in mutations(rows):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(root, DATA), os.path.join(tmp, DATA))
            changed = [dict(r) for r in rows]
            changed[i][field] = value
            with open(os.path.join(tmp, DATA, "throughput.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
                w.writeheader()
                w.writerows(changed)
            try:
                load(tmp)
            except SystemExit as e:
                print(f"selftest: {what} caught: {e}")
                continue
        sys.exit(f"selftest: {what} was not caught")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--set-args", nargs=4, metavar=("SOURCE_ID", "GPU", "MEMORY_GB", "PRECISION"))
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        selftest(args.root)
        return
    rows = load(args.root)
    if args.set_args:
        print(set_args(rows, *args.set_args))
        return
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    for k, group in groups.items():
        counts = [r["gpus"] for r in group]
        if len(set(counts)) != len(counts):
            sys.exit(f"two rows with the same GPU count in one measurement: {k}")
    print("| GPU | system | published model | `model` | framework | precision | data | task, "
          "sequence | samples/s, 1 GPU | GPUs: samples/s per GPU on the node (% of 1 GPU) | "
          "`iteration_time` | `batch_size` | source |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(groups, key=order):
        print(line(k, groups[k]))


if __name__ == "__main__":
    main()
