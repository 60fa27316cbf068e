#!/usr/bin/env python3
"""Turns B-Caffe's per-parameter-blob GoogLeNet log (tmpNcomm.log) into an sgdsim profile.

Lines look like `... distributed.cpp:112] [param_id, size_elements, compute_us, allreduce_us(, merged_us)]`;
the file holds a warm-up block of zeros, then the measured block (the last 128 lines). A layer owns
two consecutive blobs (weights, bias) that repeat the layer's backward time. Forward times are not
in the log, so the profile's forward times are 0: it describes the backward pass and gradients only.
Source: shyhuai/B-Caffe logdata/, commit 1e8a70d8 (BSD-2-Clause), see data/validation/SOURCES.md.
usage: bcaffe_profile.py LOG OUT.json
"""
import json
import re
import sys

BLOB = re.compile(r"\]\s*\[(\d+),\s*(\d+),\s*([0-9.eE+-]+),\s*([0-9.eE+-]+)(?:,\s*[0-9.eE+-]+)?\]\s*$")


def main(log_path, out_path):
    blobs = []
    with open(log_path) as f:
        for line in f:
            m = BLOB.search(line)
            if m:
                blobs.append((int(m[1]), int(m[2]), float(m[3]), float(m[4])))
    blobs = blobs[-128:]
    if len(blobs) != 128 or [b[0] for b in blobs] != list(range(128)):
        sys.exit(f"{log_path}: expected 128 parameter blobs numbered 0..127 at the end")
    layers = []
    for i in range(0, 128, 2):
        w, b = blobs[i], blobs[i + 1]
        layers.append({"name": f"layer{i // 2} (blobs {w[0]},{b[0]})", "parameters": w[1] + b[1],
                       "forward_ms": 0.0, "backward_ms": round(w[2] / 1000.0, 6)})
    profile = {"name": "googlenet-bcaffe", "source": f"B-Caffe log {log_path.split('/')[-1]} (shyhuai/B-Caffe logdata/, commit 1e8a70d8, BSD-2-Clause)",
               "notes": "Backward time per layer measured on a K80; forward times are not in the log (0 here). Parameter counts include B-Caffe's padding to multiples of 64.",
               "kind": "measured", "batch_size": 1, "bytes_per_parameter": 4, "layers": layers}
    with open(out_path, "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
