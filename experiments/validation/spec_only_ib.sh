#!/usr/bin/env bash
# From the spec sheet alone, nothing calibrated: the shipped Azure ND A100 v4 nccl-tests logs
# (data/calibration/nccl-tests-echo-azure-a100-ib: 2 to 16 nodes of 8 A100, one 200 Gb/s HDR
# InfiniBand NIC per GPU) predicted by `sgdsim collective` on the node preset nd96asr-v4 as the
# spec-sheet page maps the cluster: the preset's host path, `rdma` node links of 8 x 200 Gb/s,
# NVLink inside the node, a ring (NCCL's algorithm across 3+ nodes), the network model `links`,
# 3 us between nodes (above the 1 us inside a node). Prints, per log of 2+ nodes, the median
# |error| of the predicted allreduce time over the sizes >= 1 MB, and the bus bandwidth of the
# 1 GiB allreduce, measured and predicted.
# usage: experiments/validation/spec_only_ib.sh [path/to/sgdsim [echo|ndmv4]] (default: both tables)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/sgdsim}
part=${2:-both}
ib=data/calibration/nccl-tests-echo-azure-a100-ib
echo_table() {
echo "| GPUs (nodes) | median error, >= 1 MB | measured busbw, 1 GiB | predicted busbw, 1 GiB |"
echo "|---|---|---|---|"
for gpus in 16 32 64 128; do
  /usr/bin/python3 - "$bin" "$ib/nccl_$gpus.log" "$gpus" <<'PY'
import json, re, statistics, subprocess, sys
bin, log, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = {}
for line in open(log):
    m = re.match(r"^(?:\[[0-9,]+\]<stdout>:)?\s+(\d+)\s+\d+\s+float\s+sum\s+([0-9.]+)\s", line)
    if m and int(m.group(1)) >= 1_000_000:
        rows[int(m.group(1))] = float(m.group(2)) * 1e-6
def predicted_s(size):
    out = subprocess.run([bin, "collective", "--algorithm", "ring", "--ranks", str(gpus),
                          "--devices-per-node", "8", "--node", "nd96asr-v4", "--technology",
                          "rdma", "--intra-technology", "nvlink", "--bandwidth", "1600Gbps",
                          "--latency", "3us", "--network-model", "links", "--bytes", str(size),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["time_s"]
pred = {size: predicted_s(size) for size in rows}
err = statistics.median(abs(pred[s] / rows[s] - 1) for s in rows)
busbw = lambda size, t: size / t * 2 * (gpus - 1) / gpus / 1e9
g = 1 << 30
print(f"| {gpus} ({gpus // 8}) | {100 * err:.1f} % | {busbw(g, rows[g]):.1f} GB/s | "
      f"{busbw(g, pred[g]):.1f} GB/s |")
PY
done
}
# Microsoft's own runs on Azure NDm A100 v4 (the ND A100 v4 network with A100 80 GB) with the
# NCCL settings Azure recommends (data/validation/mscclpp-ndmv4-nccl): the same mapping on the
# preset nd96amsr-a100-v4, each row's operation as a ring, the NICs of the GPUs used (one per GPU).
ndmv4_table() {
echo "| VMs x GPUs | operation | size | measured busbw | predicted busbw | error |"
echo "|---|---|---|---|---|---|"
/usr/bin/python3 - "$bin" data/validation/mscclpp-ndmv4-nccl/busbw.csv <<'PY'
import csv, json, subprocess, sys
bin, table = sys.argv[1], sys.argv[2]
for x in csv.DictReader(open(table)):
    nodes, dpn, size = int(x["nodes"]), int(x["gpus_per_node"]), int(x["message_bytes"])
    ranks, op = nodes * dpn, x["operation"].replace("all_", "all")
    out = subprocess.run([bin, "collective", "--algorithm", "ring", "--operation", op,
                          "--ranks", str(ranks), "--devices-per-node", str(dpn), "--node",
                          "nd96amsr-a100-v4", "--technology", "rdma", "--intra-technology",
                          "nvlink", "--bandwidth", f"{dpn * 200}Gbps", "--latency", "3us",
                          "--network-model", "links", "--bytes", str(size), "--json"],
                         check=True, capture_output=True, text=True).stdout
    t = json.loads(out)["time_s"]
    # nccl-tests' bus bandwidth: allreduce 2(n-1)/n, allgather (n-1)/n of size / time.
    factor = (2 if op == "allreduce" else 1) * (ranks - 1) / ranks
    pred, meas = size / t * factor / 1e9, float(x["busbw_GBps"])
    print(f"| {nodes} x {dpn} | {x['operation']} | {size >> 30} GiB | {meas:g} GB/s | "
          f"{pred:.1f} GB/s | {100 * (pred / meas - 1):+.1f} % |")
PY
}
case $part in
  echo) echo_table ;;
  ndmv4) ndmv4_table ;;
  both) echo_table; echo; ndmv4_table ;;
  *) echo "spec_only_ib.sh: expected echo, ndmv4 or nothing, got $part" >&2; exit 2 ;;
esac
