#!/usr/bin/python3
"""Horovod's ResNet-50 on 2 to 8 AWS p3.16xlarge instances in July 2018 (horovod/horovod#396),
predicted from the one-instance rate.

usage: horovod_k8s_p3.py [SGDSIM]   (default build/sgdsim; prints a Markdown table)

Model, stated before it runs: the issue (copy and CSV in data/validation/horovod-k8s-p3-2018/)
gives images/s of tf_cnn_benchmarks' ResNet-50 with TensorFlow 1.8 and Horovod on 1, 2, 4 and 8
p3.16xlarge (8 V100 on NVLink, 25 Gb/s Ethernet), run on Kubernetes. Mapped as
docs/spec-sheet.md maps words to fields:
- the node preset p3.16xlarge, its 25 Gb/s as TCP with NCCL's sockets (`nccl`), 5 us a hop;
- tf_cnn_benchmarks' default batch for ResNet-50, 64 a GPU (no batch is stated;
  models/resnet_model.py, default_batch_sizes), the compute from the one-instance rate (64
  images x 8 GPUs / 2697.29 images/s, device.calibrate), 1.189 times slower beside NCCL;
- Horovod of 2018: overlap wfbp, 64 MiB fusion buffers (docs/spec-sheet.md, Frameworks);
- NCCL 2.2 (CUDA 9.0 in mid-2018; closed source), read as 2.3, the earliest whose source is
  public: one ring per NIC, so one connection, one socket, one TCP flow between two instances;
- AWS's cap on one flow: 5 Gb/s outside a cluster placement group (the reading: the author's
  later runs gained 13 % from a placement group), 10 Gb/s inside one (shown beside it).
Kubenet's overlay (10 % in the author's later runs) is not modelled. Nothing is taken from the
multi-instance rows.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

DATA = "data/validation/horovod-k8s-p3-2018/throughput.csv"
SCENARIO = "experiments/validation/horovod-k8s-p3.json"
# reading -> (NCCL version, flow cap)
READINGS = {"NCCL 2.3, 5 Gb/s flow cap": ("2.3", "5Gbps"),
            "NCCL 2.3, 10 Gb/s (placement group)": ("2.3", "10Gbps"),
            "NCCL 2.4 (2 rings), 5 Gb/s": ("2.4", "5Gbps")}


def predicted(binary, tmp, instances, version, cap):
    """images/s on `instances` p3.16xlarge with NCCL `version` and the flow cap `cap`."""
    out = os.path.join(tmp, "run")
    subprocess.run([binary, "run", SCENARIO, "--quiet", "--out", out,
                    "--set", f"workers.count={8 * instances}",
                    "--set", f"platform.generate.nodes={instances}",
                    "--set", f"collective.nccl_version=\"{version}\"",
                    "--set", f"platform.generate.node_link.sockets.flow_cap={cap}"],
                   check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["throughput_samples_per_s"]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/sgdsim"
    rows = [r for r in csv.DictReader(open(DATA))
            if r["instance"] == "p3.16xlarge" and int(r["instances"]) > 1]
    print("| instances (GPUs) | measured images/s | " +
          " | ".join(f"{name} | error" for name in READINGS) + " |")
    print("|---|---|" + "---|---|" * len(READINGS))
    errors = {name: [] for name in READINGS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            m = float(r["images_per_s"])
            cells = []
            for name, (version, cap) in READINGS.items():
                p = predicted(binary, tmp, int(r["instances"]), version, cap)
                errors[name].append(100 * (p / m - 1))
                cells.append(f"{p:,.0f} | {errors[name][-1]:+.1f} %")
            print(f"| {r['instances']} ({r['gpus']}) | {m:,.0f} | " + " | ".join(cells) + " |")
    print()
    for name, e in errors.items():
        print(f"- {name}: median |error| {statistics.median(abs(x) for x in e):.1f} %, "
              f"from {min(e):+.1f} to {max(e):+.1f} %.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
