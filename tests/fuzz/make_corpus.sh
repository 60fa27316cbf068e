#!/usr/bin/env bash
# Builds the seed corpus of every fuzz target from the repository's own files (example and bad
# scenarios, profiles, studies) and small excerpts of data/validation (measured traces and
# logs). Nothing here is committed: the corpus lives in the build folder.
#
# usage: tests/fuzz/make_corpus.sh [OUT_DIR]      (default: build-fuzz/corpus)
# environment: VALIDATION=folder of the measured files (default: data/validation; the trace
#              seeds that need it are skipped when it is missing)
#              SGDSIM=an sgdsim binary; when executable, a real timeline.json seeds
#              fuzz_sgdsim_timeline (default: build/sgdsim)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/build-fuzz/corpus}"
validation="${VALIDATION:-$root/data/validation}"
sgdsim="${SGDSIM:-$root/build/sgdsim}"
py=/usr/bin/python3
mapfile -t targets < <(grep -E '^[a-z_]+$' "$root/tests/fuzz/targets.txt")

rm -rf "$out"
for t in "${targets[@]}"; do mkdir -p "$out/$t"; done
cd "$root"

# Scenarios: the examples, the bad-input corpus (profiles included: they are JSON too), tests' data.
cp experiments/examples/*.json tests/bad_inputs/*.json tests/data/*.json "$out/scenario/"
for f in experiments/validation/*.json; do
  [[ -e "$f" ]] && cp "$f" "$out/scenario/validation-$(basename "$f")"
done

# The run path: the examples on generated platforms without training, made small (at most 4
# workers, 3 iterations) so that they pass the target's resource guard (20,000 activities).
"$py" - "$out/run" experiments/examples/*.json tests/data/*.json <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for f in sys.argv[2:]:
    try:
        s = json.load(open(f))
    except (ValueError, OSError):
        continue
    if not isinstance(s, dict) or "training" in s or "file" in s.get("platform", {}):
        continue
    s["iterations"] = 3
    s.pop("warmup_iterations", None)
    s.pop("steady_state", None)
    w = s.get("workers")
    if isinstance(w, dict) and isinstance(w.get("count"), int):
        w["count"] = min(w["count"], 4)
    (out / pathlib.Path(f).name).write_text(json.dumps(s))
EOF

# The bad-input corpus of the other commands (tests/bad_inputs/check.sh) seeds the importers.
cp tests/bad_inputs/sweeps/*.json "$out/sweep/"
cp tests/bad_inputs/traces/*.json tests/bad_inputs/traces/*.gz "$out/kineto/"
cp tests/data/kineto/*.json "$out/kineto/"  # the per-layer fixture (autograd structure)
cp tests/bad_inputs/traces/*.json "$out/sgdsim_timeline/"
for t in osu nccl_tests bcaffe pipedream; do
  for f in tests/bad_inputs/traces/"${t//_/-}"-*; do [[ -e "$f" ]] && cp "$f" "$out/$t/"; done
done

# Chakra ET: the files the project generates (DP workload, pipeline, malformed ones).
cp experiments/astra_sim/et/dp.0.et tests/data/chakra/*.et tests/bad_inputs/chakra/*.et "$out/chakra/"

# Units: every quantity string of the examples, plus edge cases.
"$py" - "$out/units" experiments/examples/*.json <<'EOF'
import json, re, sys, pathlib
out = pathlib.Path(sys.argv[1])
seen = set()
def walk(v):
    if isinstance(v, dict):
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
    elif isinstance(v, str) and re.fullmatch(r"[-+0-9.eE]+[A-Za-z]+", v):
        seen.add(v)
for f in sys.argv[2:]:
    walk(json.load(open(f)))
seen |= {"25Gbps", "12GBps", "1.5us", "2ms", "1min", "1h", "10ns", "3ps", "64KiB", "100MB",
         "1TiB", "15Tf", "2.2Gf", "211.2GFlops", "1e400Gbps", "1e308Tbps", "-1s", "0B", "0x10B",
         "inf", "nanGbps", ".5s", "5.s", "1e-320s", "1 s", "kB"}
for i, s in enumerate(sorted(seen)):
    (out / f"u{i:03}").write_text(s)
EOF

# Profiles: the shipped ones and the studies'.
cp models/profiles/*.json "$out/profile/"
for f in experiments/studies/profiles/*.json tests/bad_inputs/*profile*.json; do
  [[ -e "$f" ]] && cp "$f" "$out/profile/"
done

# Sweeps: the studies, plus small ones with inline bases (the fuzzer's sweep file sits in a
# scratch folder, so relative bases mostly fail to resolve: those seed the error paths).
cp experiments/studies/*.json "$out/sweep/"
"$py" - "$out/sweep" <<'EOF'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
base = {"model": "mlp", "workers": {"count": 2}, "iterations": 3, "warmup_iterations": 1}
sweeps = [
    {"base": base, "grid": {"workers.count": [2, 4], "scheme.type": ["sync", "pseudo_sync"]}},
    {"base": base, "zip": {"platform.generate.nodes": [2, 4], "workers.count": [2, 4]},
     "repeat": 2, "description": "zip and repeat"},
    {"base": base, "list": [{"scheme.type": "async", "scheme.servers": 2}, {}, {"batch_size": 0}]},
    {"base": "experiments/examples/02-minimal.json", "grid": {"fidelity": ["flow", "analytic"]}},
    {"base": base, "grid": {"workers": [{"count": 2}]}, "list": [{"workers.count": 2}]},
    {"base": base, "grid": {"model.layers": [2]}},
    {"base": base, "grid": {"seed": [1, 2]}, "repeat": 2},
]
for i, s in enumerate(sweeps):
    (out / f"inline-{i}.json").write_text(json.dumps(s))
EOF

# Kineto traces: one profiler step of each HTA trace, thinned to a few hundred events of every
# kind the importer reads (steps, kernels, NCCL kernels, launches, backward ops, metadata).
if [[ -d "$validation/hta" ]]; then
  "$py" - "$out/kineto" "$validation/hta" <<'EOF'
import gzip, json, sys, pathlib
out, hta = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for i, f in enumerate(sorted(hta.rglob("*.json.gz"))):
    if f.stat().st_size > 2_000_000:
        continue
    d = json.load(gzip.open(f))
    ev = d["traceEvents"]
    steps = sorted((e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    if not steps:
        continue
    s = steps[0]
    lo, hi = s["ts"], s["ts"] + s.get("dur", 0)
    quota = {"kernel": 60, "gpu_memcpy": 8, "gpu_memset": 4, "cpu_op": 60, "gpu_user_annotation": 4}
    keep = [e for e in ev if e.get("ph") == "M"] + [s]
    for e in ev:
        if e is s or e.get("ph") != "X" or not (lo <= e.get("ts", -1) < hi):
            continue
        name, cat = str(e.get("name", "")), e.get("cat")
        must = "nccl" in name.lower() or name == "record_param_comms" or (
            name.startswith("autograd::engine::evaluate_function") and quota["cpu_op"] > 50)
        if must or quota.get(cat, 0) > 0:
            keep.append(e)
            if cat in quota:
                quota[cat] -= 1
    doc = {k: v for k, v in d.items() if k != "traceEvents"}
    doc["traceEvents"] = keep
    (out / f"hta-{i}.json").write_text(json.dumps(doc))
    small = dict(doc, traceEvents=keep[:40])
    (out / f"hta-{i}-head.json.gz").write_bytes(gzip.compress(json.dumps(small).encode()))
EOF
fi
cat > "$out/kineto/minimal.json" <<'EOF'
{"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2},
 "deviceProperties": [{"name": "NVIDIA A100"}], "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: ConvBackward0", "pid": 1, "tid": 2, "ts": 1200, "dur": 50},
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1300, "dur": 5, "args": {"Collective name": "allreduce", "In msg nelems": 1024, "dtype": "Float", "Group size": 2}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 1310, "dur": 300},
 {"ph": "X", "cat": "kernel", "name": "volta_sgemm", "pid": 0, "tid": 7, "ts": 1100, "dur": 150},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1050, "dur": 20},
 {"ph": "i", "name": "marker", "pid": 1, "tid": 1, "ts": 1500},
 {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]}
EOF

# sgdsim timelines: a small real one when an sgdsim binary is at hand, and a hand-made one.
if [[ -x "$sgdsim" ]]; then
  tmp="$(mktemp -d)"
  if "$sgdsim" run experiments/examples/02-minimal.json --set iterations=3 --set warmup_iterations=1 \
      --set workers.count=2 --out "$tmp/run" --quiet >/dev/null 2>&1; then
    cp "$tmp/run/timeline.json" "$out/sgdsim_timeline/minimal-run.json"
  fi
  rm -rf "$tmp"
fi
cat > "$out/sgdsim_timeline/two-workers.json" <<'EOF'
{"displayTimeUnit":"ms","otherData":{"scenario":"t","time_unit":"us of simulated time"},"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"worker 0"}},
{"ph":"M","name":"process_name","pid":1,"args":{"name":"worker 1"}},
{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"communication"}},
{"name":"io","cat":"compute","ph":"X","pid":0,"tid":0,"ts":0.000,"dur":1.000,"args":{"iteration":0}},
{"name":"fwd","cat":"compute","ph":"X","pid":0,"tid":0,"ts":1.000,"dur":10.000,"args":{"iteration":0}},
{"name":"fwd","cat":"compute","ph":"X","pid":1,"tid":0,"ts":0.000,"dur":12.000,"args":{"iteration":0}},
{"name":"bwd[0]","cat":"compute","ph":"X","pid":0,"tid":0,"ts":11.000,"dur":1.000,"args":{"iteration":0,"bucket":0}},
{"name":"comm[0]","cat":"communication","ph":"X","pid":0,"tid":1,"ts":12.000,"dur":5.000,"args":{"iteration":0,"bucket":0,"bytes":400.0}},
{"name":"comm[0]","cat":"communication","ph":"X","pid":1,"tid":1,"ts":12.000,"dur":5.000,"args":{"iteration":0,"bucket":0,"bytes":400.0}},
{"name":"update","cat":"compute","ph":"X","pid":0,"tid":0,"ts":17.000,"dur":1.000,"args":{"iteration":0}},
{"name":"update","cat":"compute","ph":"X","pid":1,"tid":0,"ts":17.000,"dur":2.000,"args":{"iteration":0}},
{"name":"predict","cat":"compute","ph":"X","pid":0,"tid":0,"ts":18.000,"dur":1.000,"args":{"iteration":1}},
{"name":"update","cat":"compute","ph":"X","pid":0,"tid":0,"ts":30.000,"dur":1.000,"args":{"iteration":1}},
{"name":"update","cat":"compute","ph":"X","pid":1,"tid":0,"ts":33.000,"dur":1.000,"args":{"iteration":1}}
]}
EOF

# nccl-tests: current (with root column) and old (without) output.
cat > "$out/nccl_tests/all_reduce_perf.log" <<'EOF'
# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  6899 on      node1 device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  6900 on      node2 device  0 [0x1b] NVIDIA H100 80GB HBM3
#
# Collective test starting: all_reduce_perf
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    10.84    0.00    0.00      0    10.42    0.00    0.00      0
        1024           256     float     sum      -1    12.10    0.08    0.08      0    11.95    0.09    0.09      0
     1048576        262144     float     sum      -1    55.10   19.03   19.03      0    54.90   19.10   19.10      0
   134217728      33554432     float     sum      -1   1290.5  104.01  104.01    N/A   1288.1  104.20  104.20    N/A
node1:6899:6899 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Destroy COMPLETE
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 52.005
#
EOF
cat > "$out/nccl_tests/old.log" <<'EOF'
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
     1048576        262144   float     sum    55.1   19.03   28.55  0e+00    54.9   19.10   28.65  0e+00
     4194304       1048576   float     sum   160.2   26.18   39.27  0e+00   159.8   26.25   39.37  0e+00
EOF
printf '# Collective test starting: all_gather_perf\n 8 2 float none 0 9.1 0.00 0.00 0 9.0 0.00 0.00 0\n' \
  >"$out/nccl_tests/allgather.log"

# OSU and B-Caffe logs (a few KB each) and heads of them; PipeDream graphs (small models whole,
# the first lines of the large ones: their edges then name undefined nodes).
if [[ -d "$validation/bcaffe-googlenet" ]]; then
  for f in "$validation"/bcaffe-googlenet/allreduce*.log; do
    cp "$f" "$out/osu/"
    head -n 30 "$f" >"$out/osu/head-$(basename "$f")"
  done
  for f in "$validation"/bcaffe-googlenet/tmp*.log; do
    cp "$f" "$out/bcaffe/"
    head -n 40 "$f" >"$out/bcaffe/head-$(basename "$f")"
  done
fi
printf '# OSU MPI Allreduce Latency Test\n# Size       Avg Latency(us)\n4                       5.21\n1048576               812.33\n' \
  >"$out/osu/plain.log"
printf '4,1024 12.5 10.1 15.2 1000\n4,2048 20.25 18.0 22.9 1000\n' >"$out/osu/nodes-column.log"
printf 'I0101 distributed.cpp:42] [0, 64, 120.5, 300.25]\nI0101 distributed.cpp:42] [1, 64, 0, 0, 1.5]\n' \
  >"$out/bcaffe/tiny.log"
if [[ -d "$validation/pipedream-profiles" ]]; then
  for d in "$validation"/pipedream-profiles/*/; do
    m="$(basename "$d")"
    if [[ $(stat -c %s "$d/graph.txt") -le 16000 ]]; then
      cp "$d/graph.txt" "$out/pipedream/$m.txt"
    else
      head -n 25 "$d/graph.txt" >"$out/pipedream/head-$m.txt"
    fi
  done
fi
cat > "$out/pipedream/tiny.txt" <<'EOF'
node1 -- Input0 -- forward_compute_time=0.000, backward_compute_time=0.000, activation_size=602112.0, parameter_size=0.000
node2 -- Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2)) -- forward_compute_time=1.234, backward_compute_time=2.5, activation_size=100.0, parameter_size=93184.000
node3 -- Linear(in_features=4096, out_features=1000, bias=True) -- forward_compute_time=0.5, backward_compute_time=1.0, activation_size=128000.0, parameter_size=16388000.000
	node1 -- node2
	node2 -- node3
EOF

# Platforms: the shipped files under 64 KB (tianhe2-512.xml, 1.4 MB, and dgx-a100-pod.xml,
# 180 KB, would make every mutation that long: libFuzzer takes the longest seed as its length
# limit), the bad-input XML cases, generated platforms of every topology when an sgdsim binary
# is at hand, and hand-written files for what those lack (Floyd and None zones, bypass routes,
# torus/dragonfly/fat-tree clusters, entities, properties).
for f in platforms/*.xml platforms/examples/*.xml tests/bad_inputs/*.xml; do
  [[ $(stat -c %s "$f") -le 65536 ]] && cp "$f" "$out/platform/$(basename "$f")"
done
if [[ -x "$sgdsim" ]]; then
  i=0
  for opts in "--nodes 4" "--nodes 4 --devices-per-node 2" \
      "--topology fat_tree --nodes 6 --nodes-per-leaf 2 --devices-per-node 2" \
      "--nodes 3 --devices-per-node 2 --node-technology rdma --intra-technology nvlink"; do
    # shellcheck disable=SC2086
    "$sgdsim" platform $opts >"$out/platform/generated-$i.xml" 2>/dev/null ||
      rm -f "$out/platform/generated-$i.xml"
    i=$((i + 1))
  done
fi
cat > "$out/platform/floyd.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config><prop id="network/model" value="CM02"/></config>
  <zone id="w" routing="Floyd">
    <host id="a" speed="1Gf,500Mf" core="2"><prop id="x" value="&lt;&amp;&#65;&#x42;"/></host>
    <host id="b" speed="1e9f"/>
    <host id="c" speed="2gigaflops"/>
    <router id="r"/>
    <link id="l1" bandwidth="1.25GBps" latency="50us"/>
    <link id="l2" bandwidth="10Gbps" latency="0.5ms" sharing_policy="SPLITDUPLEX">
      <prop id="technology" value="rdma"/><prop id="overhead" value="2us"/>
      <prop id="efficiency" value="0.9"/><prop id="window" value="6MiB"/>
    </link>
    <link id="l3" bandwidth="1KiBps" latency="1s" sharing_policy="FATPIPE"/>
    <route src="a" dst="r"><link_ctn id="l1"/></route>
    <route src="r" dst="b" symmetrical="NO"><link_ctn id="l2" direction="UP"/></route>
    <route src="b" dst="r" symmetrical="NO"><link_ctn id="l2" direction="DOWN"/></route>
    <route src="c" dst="r"><link_ctn id="l3"/></route>
  </zone>
</platform>
EOF
cat > "$out/platform/clusters.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="c1" prefix="c1-" suffix=".x" radical="0-3,7" speed="1Gf" bw="125MBps" lat="50us"
             bb_bw="2.25GBps" bb_lat="500us" router_id="gw1"/>
    <cluster id="c2" prefix="c2-" suffix="" radical="0-1" speed="1Gf" bw="1Gbps" lat="1us"/>
    <cluster id="t" prefix="t-" suffix="" radical="0-7" speed="1Gf" bw="1Gbps" lat="1us"
             topology="TORUS" topo_parameters="2,2,2"/>
    <link id="bb" bandwidth="10Gbps" latency="1us"/>
    <zoneRoute src="c1" dst="c2" gw_src="gw1" gw_dst="c2-c2_router"><link_ctn id="bb"/></zoneRoute>
    <zoneRoute src="c1" dst="t" gw_src="gw1" gw_dst="t-0"><link_ctn id="bb"/></zoneRoute>
    <zoneRoute src="c2" dst="t" gw_src="c2-c2_router" gw_dst="t-0"><link_ctn id="bb"/></zoneRoute>
  </zone>
</platform>
EOF
cat > "$out/platform/topologies.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="d" prefix="d-" suffix="" radical="0-15" speed="1Gf" bw="1Gbps" lat="1us"
           topology="DRAGONFLY" topo_parameters="2,1;2,1;2,1;2"/>
</platform>
EOF
cat > "$out/platform/fat-tree.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="f" prefix="f-" suffix="" radical="0-15" speed="1Gf" bw="1Gbps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2"/>
</platform>
EOF
cat > "$out/platform/none-and-bypass.xml" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Dijkstra">
    <zone id="n" routing="None"><host id="h0" speed="1f"/><host id="h1" speed="1f"/></zone>
    <zone id="m" routing="Full"><host id="h2" speed="1f"/><router id="m-r"/>
      <link id="m-l" bandwidth="1Bps" latency="0"/><route src="h2" dst="m-r"><link_ctn id="m-l"/></route></zone>
    <link id="x" bandwidth="1Bps" latency="0"/>
    <zoneRoute src="n" dst="m" gw_src="h0" gw_dst="m-r"><link_ctn id="x"/></zoneRoute>
    <bypassZoneRoute src="n" dst="m" gw_src="h1" gw_dst="m-r"><link_ctn id="x"/></bypassZoneRoute>
  </zone>
</platform>
EOF

for t in "${targets[@]}"; do
  printf '%-16s %4d seeds %8s\n' "$t" "$(ls "$out/$t" | wc -l)" "$(du -sh "$out/$t" | cut -f1)"
done
