#!/usr/bin/python3
"""The shipped LLM profiles' FLOPs per sequence against the count MFU uses.

usage: profile_mfu_flops.py   (from the repository root; prints plain text)

For gpt2_xl and the Llama profiles: the profile's forward + backward FLOPs per sample (one
sequence) over 6 N S + 12 L d S^2 (N parameters, S the sequence length, L layers, d_model),
the model FLOPs of published MFU figures. The dimensions are those the profiles were generated
from (models/profiles/tools/make_profiles.py, TRANSFORMERS); docs/spec-sheet.md prints this.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, os.path.join("models", "profiles", "tools"))
from make_profiles import TRANSFORMERS  # noqa: E402 (the generator's own configurations)

NAMES = ["gpt2_xl", "llama2_7b", "llama2_13b", "llama2_70b", "llama3_8b"]


def main():
    for name in NAMES:
        c = TRANSFORMERS[name]
        layers = json.load(open(os.path.join("models", "profiles", name + ".json")))["layers"]
        n = sum(layer["parameters"] for layer in layers)
        flops = sum(layer["forward_flops"] + layer["backward_flops"] for layer in layers)
        s, mfu = c["seq"], 6 * n * c["seq"] + 12 * c["layers"] * c["hidden"] * c["seq"] ** 2
        print(f"{name}: {flops / 1e12:.1f} TFLOP per sequence of {s} tokens, "
              f"{flops / mfu:.3f} x the MFU count")


if __name__ == "__main__":
    main()
