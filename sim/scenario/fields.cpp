#include "sim/scenario/fields.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <sstream>

#include "models/learn/compressor.hpp"
#include "models/learn/predictor.hpp"
#include "sim/collectives/byteps.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/network_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scheme_types.hpp"
#include "sim/scenario/transport.hpp"

namespace sgdsim {

using nlohmann::json;

namespace field_schema {
namespace {
// A number and a unit; sim/core/units parses them, with the messages for wrong ones.
constexpr const char* kQuantity = R"(^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?[A-Za-z]+$)";
json quantity(const std::string& what) {
  return {{"type", "string"}, {"pattern", kQuantity}, {"description", what}};
}
}  // namespace

json text(bool allow_empty) {
  json j = {{"type", "string"}};
  if (!allow_empty) j["minLength"] = 1;
  return j;
}
json integer(int64_t min, int64_t max) {
  json j = {{"type", "integer"}, {"minimum", min}};
  if (max != INT64_MAX) j["maximum"] = max;
  return j;
}
json number(double min, double max) {
  json j = {{"type", "number"}, {"minimum", min}};
  if (max < 1e300) j["maximum"] = max;
  return j;
}
json positive() {
  return {{"type", "number"}, {"exclusiveMinimum", 0}};
}
json zero() {
  return {{"const", 0}};
}
json boolean() {
  return {{"type", "boolean"}};
}
json choice(const std::vector<std::string>& choices) {
  return {{"enum", choices}};
}
json size() {
  return one_of({quantity("a size such as \"25MB\" or \"64KiB\""), integer(0)});
}
json time() {
  return quantity("a time such as \"1.5us\"");
}
json bandwidth() {
  return quantity("a bandwidth such as \"25Gbps\" (bits/s) or \"12GBps\" (bytes/s)");
}
json speed() {
  return quantity("a speed such as \"15Tf\" (FLOP/s)");
}
json integer_list() {
  return {{"type", "array"}, {"items", {{"type", "integer"}}}};
}
json string_list() {
  return {{"type", "array"}, {"items", {{"type", "string"}}}};
}
json object() {
  return {{"type", "object"}};
}
json open_object() {
  return {{"type", "object"}, {"additionalProperties", true}};
}
json one_of(const std::vector<json>& schemas) {
  return {{"anyOf", schemas}};
}
}  // namespace field_schema

FieldDecl param_field(const Param& p, const std::string& section, const std::string& table) {
  using namespace field_schema;
  json schema;
  switch (p.type) {
    case ParamType::integer:
      schema = integer(static_cast<int64_t>(p.min),
                       p.max < 9e18 ? static_cast<int64_t>(p.max) : INT64_MAX);
      break;
    case ParamType::number:
      schema = number(p.min, p.max);
      if (p.min_exclusive) {
        schema.erase("minimum");
        schema["exclusiveMinimum"] = p.min;
      }
      if (!p.choices.empty()) schema = one_of({choice(p.choices), schema});
      break;
    case ParamType::size:
      schema = size();
      break;
    case ParamType::time:
      schema = p.choices.empty() ? time() : one_of({choice(p.choices), time()});
      break;
    case ParamType::bandwidth:
      schema = p.zero_off ? one_of({zero(), bandwidth()}) : bandwidth();
      break;
    case ParamType::choice:
      schema = choice(p.choices);
      break;
    case ParamType::text:
      schema = text();
      break;
    case ParamType::boolean:
      schema = boolean();
      break;
  }
  // Scheme options are not in the defaults table (scenario_defaults): their declared default.
  if (!p.default_value.is_null()) schema["default"] = p.default_value;
  return {section + p.key, schema, p.default_markdown(), p.meaning(), table};
}

namespace {

using namespace field_schema;

/// The keys of a link object (generated platforms' node_link and intra_node_link).
void add_link_fields(std::vector<FieldDecl>& f, const std::string& link) {
  const std::string p = "/platform/generate/" + link + "/";
  f.push_back({p + "bandwidth", bandwidth(), "", "per direction", ""});
  f.push_back({p + "latency", time(), "", "per hop", ""});
  f.push_back({p + "technology", choice(technology_names()), "", "see Link technologies", ""});
  f.push_back({p + "overhead", time(), "", "the technology's per-message overhead", ""});
  f.push_back({p + "efficiency", number(0, 1), "", "payload / link rate", ""});
  f.push_back({p + "window", one_of({choice({"none"}), size()}), "", "TCP window", ""});
  f.push_back({p + "stream_bandwidth", one_of({choice({"none"}), bandwidth()}), "",
               "per-stream goodput limit (a collective's channels share it)", ""});
}

/// The socket model of a tcp node link (docs/nccl-sockets.md).
void add_socket_fields(std::vector<FieldDecl>& f) {
  const std::string p = "/platform/generate/node_link/";
  f.push_back({p + "end_to_end_latency", time(), "absent (`latency` per hop)",
               "instead of `latency`: one-way host-to-host latency of a small message between "
               "two nodes under one switch (ib_write_lat, osu_latency 8 B); each node link gets "
               "(end_to_end_latency - the technology's overhead) / 2 (docs/spec-sheet.md)",
               ""});
  f.push_back({p + "stream_goodput", bandwidth(), "`\"10Gbps\"` (with `sockets`)",
               "goodput of one TCP stream (CPU and kernel copy); only with `sockets`", ""});
  f.push_back({p + "sockets", object(), "absent (no stream limit)",
               "tcp only: the library's streams cap every message between nodes at channels x "
               "threads x sockets_per_thread x min(stream_goodput, flow_cap)",
               ""});
  f.push_back(
      {p + "sockets/library", choice(socket_library_names()), "",
       "nccl (1 stream), nccl-aws (2 x 8), nccl-gcp (4 x 1), gloo, mpi, ps-lite, grpc (1 stream)",
       ""});
  f.push_back({p + "sockets/threads", integer(0, 16), "the library's",
               "NCCL_SOCKET_NTHREADS (0 = the main thread, one socket; at most 16)", ""});
  f.push_back({p + "sockets/sockets_per_thread", integer(1, 64), "the library's",
               "NCCL_NSOCKS_PERTHREAD (threads x sockets at most 64)", ""});
  f.push_back({p + "sockets/channels", integer(1, 64), "2 (nccl*), 1 (gloo, mpi)",
               "connections per NIC and peer", ""});
  f.push_back({p + "sockets/flow_cap", one_of({choice({"none"}), bandwidth()}),
               "10Gbps (nccl-aws), else none", "the network's cap on one TCP flow", ""});
}

/// The keys of a node described from its spec sheet (docs/host-path.md, "Describing a board").
void add_board_fields(std::vector<FieldDecl>& f) {
  const std::string p = "/platform/generate/node/";
  f.push_back({p + "gpus", integer(1, 1024), "", "GPUs of the node", ""});
  f.push_back({p + "pcie_gen", integer(1, 6), "", "the GPUs' PCIe generation", ""});
  f.push_back({p + "pcie_lanes", integer(1, 32), "`16`", "the GPUs' PCIe width", ""});
  f.push_back({p + "gpus_per_switch", integer(0), "`0` (root ports)", "GPUs per PCIe switch", ""});
  f.push_back({p + "sockets", integer(1, 8), "`1`", "CPUs (GPUs spread evenly in order)", ""});
  f.push_back({p + "cpu", choice({"intel", "amd", "arm"}), "", "the CPUs' vendor", ""});
  f.push_back({p + "host_memory_bandwidth", bandwidth(), "", "one socket's peak DRAM rate", ""});
  f.push_back({p + "socket_link_bandwidth", bandwidth(), "", "between sockets", ""});
  f.push_back({p + "nvlink_bandwidth", bandwidth(), "none", "a GPU's NVLink ring rate", ""});
  f.push_back({p + "nvls", boolean(), "`false`", "NVSwitch with NVLink SHARP", ""});
  f.push_back({p + "nics", integer(0, 1024), "`1`", "network adapters", ""});
  f.push_back({p + "nic_bandwidth", bandwidth(), "",
               "one NIC's line rate (with a preset: its NICs at this rate instead)", ""});
  f.push_back({p + "nic_pcie_gen", integer(1, 6), "`pcie_gen`", "the NICs' PCIe generation", ""});
  f.push_back({p + "nic_pcie_lanes", integer(1, 32), "`16`", "the NICs' PCIe width", ""});
  f.push_back({p + "nics_per_switch", integer(0), "`0` (root ports)", "NICs per PCIe switch", ""});
}

/// Keys of objects that the tables describe as a whole.
void add_nested_fields(std::vector<FieldDecl>& f) {
  add_link_fields(f, "node_link");
  add_socket_fields(f);
  add_link_fields(f, "intra_node_link");
  f.push_back(
      {"/platform/generate/node/preset", choice(node_preset_names()), "", "node preset", ""});
  f.push_back({"/platform/generate/node/p2p", boolean(), "", "P2P allowed", ""});
  f.push_back({"/platform/generate/node/gdr", boolean(), "", "GPUDirect RDMA on", ""});
  add_board_fields(f);
  f.push_back({"/device/calibrate/iteration_time", time(), "", "measured forward + backward", ""});
  f.push_back({"/device/calibrate/batch_size", integer(1), "", "batch of that measurement", ""});
  f.push_back(
      {"/device/calibrate/includes_optimizer", boolean(), "", "time holds the optimizer", ""});
  f.push_back(
      {"/variability/stragglers/fraction", number(0, 1), "", "fraction of slow workers", ""});
  f.push_back({"/variability/stragglers/slowdown", positive(), "", "compute time factor", ""});
  f.push_back({"/variability/stragglers/redraw", boolean(), "", "pick anew every iteration", ""});
  f.push_back({"/training/lr_schedule/type", choice({"constant", "step", "warmup"}), "", "", ""});
  f.push_back(
      {"/training/lr_schedule/every", integer(1), "", "step: iterations between decays", ""});
  f.push_back({"/training/lr_schedule/factor", positive(), "", "step: decay factor", ""});
  f.push_back({"/training/lr_schedule/iterations", integer(1), "", "warmup: ramp length", ""});
}

/// Run identity and the platform.
std::vector<FieldDecl> platform_fields() {
  return {
      {"/name", text(), R"doc(file name without `.json`)doc",
       R"doc(run name (default output folder `results/<name>`))doc", "scenario"},
      {"/description", text(true), R"doc(`""`)doc", R"doc(free text)doc", "scenario"},
      {"/seed", integer(0), R"doc(`1`)doc",
       R"doc(seed of every random choice (jitter, stragglers))doc", "scenario"},
      {"/platform/generate/topology", choice(topology_names()), R"doc(`"star"`)doc",
       R"doc(`star`: every node has a private full-duplex link to one switch (a ring is contention-free); `fat_tree`: nodes under leaf switches, leaves under one core; `torus`, `dragonfly`: SimGrid's own cluster topologies (one device per node))doc",
       "scenario"},
      {"/platform/generate/nodes", integer(1), R"doc(enough for the workers)doc",
       R"doc(number of nodes)doc", "scenario"},
      {"/platform/generate/devices_per_node", integer(1), R"doc(`workers.per_node`, else 1)doc",
       R"doc(devices (SimGrid hosts) per node)doc", "scenario"},
      {"/platform/generate/node_link", object(),
       R"doc(`{"bandwidth": "100Gbps", "latency": "1us", "technology": "tcp"}`)doc",
       R"doc(node NIC to its switch, per direction; `latency` is per hop (a route between two nodes under one switch crosses two), or give `end_to_end_latency`, a measured host-to-host small-message latency, instead (see From a spec sheet to a scenario); `technology` says what the link is (see Link technologies), and `overhead`, `efficiency`, `window`, `stream_bandwidth` override that technology's defaults)doc",
       "scenario"},
      {"/platform/generate/intra_node_link", object(),
       R"doc(`{"bandwidth": "16GBps", "latency": "1us", "technology": "pcie"}`)doc",
       R"doc(device to the node's internal switch (PCIe/NVLink), per direction, with the same transport keys)doc",
       "scenario"},
      {"/platform/generate/node", one_of({choice(node_preset_names()), object()}),
       R"doc(absent (links as given))doc",
       R"doc(a node preset (the table of docs/host-path.md, Presets: DGX and HGX boards, AWS, Azure and Google Cloud instances, generic PCIe servers) or `{"preset", "p2p", "gdr", "nic_bandwidth"}` (a server with the preset's host path and NICs of another rate), or a board described from its spec sheet (`{"gpus", "pcie_gen", "cpu", "host_memory_bandwidth", "nic_bandwidth", ...}`, docs/host-path.md, Describing a board): the transport NCCL picks inside the node sets `intra_node_link.bandwidth` (then not given) to the ring's slowest hop and caps `node_link.bandwidth` at the NICs' host path; a `node_link.bandwidth` given above the NICs' line rate together is an error; see docs/host-path.md)doc",
       "scenario"},
      {"/platform/generate/device_speed", speed(), R"doc(`"15Tf"`)doc",
       R"doc(peak speed of one device)doc", "scenario"},
      {"/platform/generate/nodes_per_leaf", integer(1), R"doc(`16`)doc",
       R"doc(fat tree: nodes under one leaf switch)doc", "scenario"},
      {"/platform/generate/oversubscription", positive(), R"doc(`1`)doc",
       R"doc(fat tree: a leaf uplink carries `nodes_per_leaf x node bandwidth / oversubscription`)doc",
       "scenario"},
      {"/platform/generate/spines", integer(1), R"doc(`1`)doc",
       R"doc(fat tree: spine switches; with more than 1 a leaf's uplink is one link per spine (each `1/spines` of it) and every route between hosts under different leaves takes the spine a seeded ECMP hash of the host pair picks (per host pair, both ways: SimGrid's routes are per pair); flow fidelity only, at most 512 hosts; see What changes with scale)doc",
       "scenario"},
      {"/platform/generate/ecmp_seed", integer(0), R"doc(`1`)doc",
       R"doc(fat tree with `spines` > 1: seed of the ECMP hash (another seed is another set of hash functions in the switches))doc",
       "scenario"},
      {"/platform/generate/ecmp_connections", integer(0, 1024), R"doc(`0`)doc",
       R"doc(fat tree with `spines` > 1: `0` hashes each host pair onto one spine; N hashes each of N connections per ordered host pair onto a spine by itself (NCCL's TCP sockets or QPs: a 5-tuple each), a message split equally over them, so a pair runs at N x its slowest connection's share; at most 2^21 hosts x hosts x connections; see What changes with scale)doc",
       "scenario"},
      {"/platform/generate/dims", integer_list(), R"doc(balanced 3-D grid)doc",
       R"doc(torus: size of each dimension, e.g. `[4, 4, 4]` (product = nodes))doc", "scenario"},
      {"/platform/generate/dragonfly", integer_list(), R"doc(required for dragonfly)doc",
       R"doc(`[groups, chassis per group, routers per chassis, nodes per router, group links, chassis links, router links]` (SimGrid's layout; SimGrid 3.32 needs routers per chassis >= groups))doc",
       "scenario"},
      {"/platform/file", text(), R"doc(—)doc",
       R"doc(a SimGrid XML platform instead of `generate`; workers use its first hosts in declaration order; links say what they are with `<prop id="technology" value="rdma"/>`)doc",
       "scenario"},
      {"/platform/technology", choice(technology_names()), R"doc(`"tcp"`)doc",
       R"doc(platform files: the technology of links without a `technology` property)doc",
       "scenario"}};
}

/// Network model, SimGrid options and gradient precision.
std::vector<FieldDecl> network_fields() {
  return {
      {"/network_model", choice(network_model_names()), R"doc(`"links"`)doc",
       R"doc(`links` = every link's technology decides what a message pays (see Link technologies); `default` = SimGrid LV08 on every link (TCP-calibrated: latency x13.01, bandwidth x0.97, cross-traffic; what sgdsim used before link technologies, kept for old scenarios that name it); `ideal` = CM02 without cross-traffic or TCP window, exact to the alpha-beta model; `smpi` = SimGrid's SMPI model (size-dependent latency and bandwidth factors calibrated on MPI))doc",
       "scenario"},
      {"/simgrid_cfg", string_list(), R"doc(`[]`)doc",
       R"doc(SimGrid options as `"name:value"` strings, e.g. `["network/model:CM02"]`, applied after `network_model`'s; `--cfg` (run, sweep) adds to them, and `scenario.resolved.json` records the whole list, so rerunning it needs no `--cfg`. An unknown option or bad value exits 2 with SimGrid's message; `tracing/uncategorized` is refused (SimGrid 3.32's Paje tracing aborts on sgdsim's platforms))doc",
       "scenario"},
      {"/gradient_precision", one_of({choice({"fp32", "fp16", "bf16"}), positive()}),
       R"doc(`"fp32"`)doc",
       R"doc(bytes per gradient element on the wire, for every collective and parameter-server message: `fp32` (4), `fp16` or `bf16` (2), or a number; profiles state fp32 gradients and are scaled by it)doc",
       "scenario"}};
}

/// Model, device, workers, iterations and the scheme's common keys.
std::vector<FieldDecl> workload_fields() {
  return {
      {"/model", one_of({text(), open_object()}), R"doc(required (unless `workload.chakra`))doc",
       R"doc(a profile name (`"resnet50"` = `models/profiles/resnet50.json`), a profile path, an inline profile object, or `"same"`: the network the `training` section trains, as a FLOPs profile (dense layers: 2 in x out FLOPs per sample forward, twice that backward))doc",
       "scenario"},
      {"/workload/chakra", one_of({text(), string_list()}),
       R"doc(`[]` (none: the workload is `model`))doc",
       R"doc(per-rank Chakra ET files instead of a profile: a prefix `"dir/name"` (files `dir/name.0.et`, `dir/name.1.et`, ..., Chakra's naming) or a list, rank 0 first; one file per worker; `model` must then be absent (see Chakra execution traces and ASTRA-sim))doc",
       "scenario"},
      {"/workload/optimizer", choice({"sgdsim", "trace"}), R"doc(`"sgdsim"`)doc",
       R"doc(Chakra workloads: `sgdsim` adds sgdsim's optimizer step (4 FLOPs per parameter, parameters = the allreduces' bytes / `gradient_precision`) as for profiles, which also sizes pseudo_sync's predict and async's apply; `trace`: the traces hold their optimizer step, the update takes no time)doc",
       "scenario"},
      {"/device/efficiency", positive(), R"doc(`1.0`)doc",
       R"doc(fraction of the device speed that FLOP-based profiles and the optimizer step achieve)doc",
       "scenario"},
      {"/device/speed", speed(), R"doc(platform's `device_speed`)doc",
       R"doc(required with a platform file)doc", "scenario"},
      {"/device/calibrate", object(), R"doc(—)doc",
       R"doc(`{"iteration_time": "252.9ms", "batch_size": 64}`: scale per-layer compute so one worker's forward + backward at that batch takes that time; `"includes_optimizer": true` (default `false`) when the time is a whole training step, as a published time per mini-batch (batch / samples per second) is: the optimizer step's time (`device.optimizer`, or 4 FLOPs per parameter) is taken off it first)doc",
       "scenario"},
      {"/device/optimizer", choice({"sgd", "adam", "adamw_loop", "adam_amp"}),
       R"doc(absent (4 FLOPs per parameter at the device's speed))doc",
       R"doc(the optimizer step as a pass over memory after the last gradient: parameters x bytes per parameter / `memory_bandwidth`; `sgd` (momentum, fp32) 20 B, `adam` (fp32, fused) 28 B, `adamw_loop` (fp32, PyTorch's `torch.optim.AdamW` tensor by tensor: `foreach` off, its default before PyTorch 2.0) 88 B, `adam_amp` (fp16 gradients and model copy, fp32 master weights, unfused) 40 B (see docs/transformer-profiles.md))doc",
       "scenario"},
      {"/device/memory_bandwidth", bandwidth(), R"doc(required with `optimizer`)doc",
       R"doc(the device's memory bandwidth, e.g. `"900GBps"` (V100 SXM2 HBM2 datasheet))doc",
       "scenario"},
      {"/device/memory", size(), R"doc(absent (not checked))doc",
       R"doc(device memory per GPU, e.g. `"80GB"`: a run whose peak (model states by the ZeRO paper's count, gathered units, buffers; summary.json `memory`) exceeds it exits 2)doc",
       "scenario"},
      {"/device/memory_overflow", choice({"error", "flag"}), R"doc(`"error"`)doc",
       R"doc(with `memory`: `error` (exit 2 with the numbers) or `flag` (run, summary.json `memory.fits` false))doc",
       "scenario"},
      {"/device/overlap_slowdown", number(0, 10), R"doc(`0` (no slowdown))doc",
       R"doc(while any collective of the training is under way, every worker's compute runs 1 + this times slower (NCCL's kernels beside it take SMs and memory bandwidth: Lee et al. 2025 measured 18.9 % on average, 40 % at most, on 4 A100, H100, MI250 and MI210; see docs/iteration-model.md); a platform file's worker hosts declare the slowed speed as a second pstate, speed="S,S/(1+this)")doc",
       "scenario"},
      {"/device/io_time_per_sample", time(), R"doc(`"0s"`)doc",
       R"doc(input pipeline time per sample; > 0 adds an `io` task before each forward pass)doc",
       "scenario"},
      {"/workers/count", integer(1), R"doc(`1`)doc", R"doc(data-parallel workers)doc", "scenario"},
      {"/workers/per_node", integer(1), R"doc(platform's `devices_per_node`, else 1)doc",
       R"doc(workers placed on one node (with a platform file, set it for `hierarchical`: it says which consecutive ranks share a node))doc",
       "scenario"},
      {"/workers/placement", choice({"block", "cyclic", "random"}), R"doc(`"block"`)doc",
       R"doc(`block` fills a node before the next; `cyclic` deals workers round-robin over the nodes in use; `random` fills nodes as `block` does on a random choice and order of the generated platform's nodes drawn from `seed` (a batch scheduler's allocation across leaves; see What changes with scale))doc",
       "scenario"},
      {"/batch_size", integer(1), R"doc(`32`)doc", R"doc(per-worker mini-batch)doc", "scenario"},
      {"/iterations", integer(1), R"doc(`20`)doc", R"doc(iterations simulated)doc", "scenario"},
      {"/warmup_iterations", integer(0), R"doc(`2`)doc",
       R"doc(leading iterations left out of the steady-state statistics (must be < `iterations`))doc",
       "scenario"},
      {"/scheme/type", choice(scheme_type_names()), R"doc(`"sync"`)doc",
       R"doc(`sync`, `async`, `pseudo_sync`, `ssp`, `local_sgd` (see Schemes))doc", "scenario"},
      {"/scheme/overlap", choice({"wfbp", "none"}), R"doc(`"wfbp"`)doc",
       R"doc(`wfbp`: a bucket's allreduce starts when its layers' gradients are ready; `none`: the same buckets' allreduces start after the whole backward pass)doc",
       "scenario"}};
}

/// Fusion and the collective section's own keys (those of several algorithms or the engine's).
std::vector<FieldDecl> collective_fields() {
  return {
      {"/scheme/fusion_bytes", size(), R"doc(`"25MB"`)doc",
       R"doc(tensor fusion: layers are grouped in backward order until a bucket holds at least this many bytes; `0` = one bucket per layer with parameters; a model-sized value = one collective)doc",
       "scenario"},
      {"/scheme/first_bucket_bytes", size(), R"doc(`0`)doc",
       R"doc(the first bucket (the last layers, whose allreduce starts first) closes at this many bytes instead of `fusion_bytes`; `0` = `fusion_bytes`. PyTorch DDP: `"1MiB"` (`dist._DEFAULT_FIRST_BUCKET_BYTES`) with `fusion_bytes` `"25MiB"` (`bucket_cap_mb=25`))doc",
       "scenario"},
      {"/collective/algorithm", choice(collective_names_and_aliases()), R"doc(`"ring"`)doc",
       R"doc(`ring`, `recursive_halving_doubling` (alias `rhd`), `recursive_doubling`, `tree`, `hierarchical`, `ps`, `byteps`, `auto` (MPI libraries' rule), `double_binary_tree`, `nccl` (NCCL's tuner rule; needs a generated platform), `nccl_tuner` (NCCL's tuner latency model paid once, then the ring's messages) (see Collectives))doc",
       "scenario"},
      {"/collective/servers", integer(0), R"doc(`0`)doc",
       R"doc(`ps`: server shards, on the first S workers (0 = one per worker); `byteps`: co-located, 0 or the number of worker nodes (one server per node); dedicated, the number of server hosts (0 = one per worker node))doc",
       "scenario"},
      {"/collective/reduction_speed", bandwidth(), R"doc(absent (reductions take no time))doc",
       R"doc(reduction throughput, e.g. `"50GBps"`: each received chunk is reduced on the receiver before it is forwarded (the gamma term))doc",
       "scenario"},
      {"/collective/chunk_bytes", size(), R"doc(`0`)doc",
       R"doc(NCCL-style pipelining chunk (`0` or at least 1 KiB): `ring`, `double_binary_tree`, `hierarchical` (its leaders' algorithm; with `chain` the whole hierarchy) and `nccl` send each message as pieces of at most 2 chunks (see Collectives); `0` = messages whole)doc",
       "scenario"},
      {"/collective/nccl_version", text(), R"doc(absent)doc",
       R"doc(an NCCL version, `"2.3"` to `"2.28"` (`"2.18.3"` and `"2.18.3-1"` too): `chunk_bytes` and `channels` then default to that NCCL's ring allreduce, 2 MiB chunks (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 x ALLREDUCE_CHUNKSTEPS 4; on 2.3 the buffer's two slices) and 2 channels (one ring per NIC, doubled; NCCL 2.4 doubles only on several nodes with NVLink, else 1; 2.3 never, 1); algorithms NCCL did not have yet are refused (2.3: no tree, so not `nccl`, `nccl_tuner` or `double_binary_tree`; `nvls` from 2.17) (see From a spec sheet to a scenario))doc",
       "scenario"},
      {"/collective/channels", integer(1, 64), R"doc(`1`)doc",
       R"doc(NCCL channels (1 to 64): the algorithm runs as this many concurrent copies on the same ranks and links, each on 1/channels of the buffer)doc",
       "scenario"}};
}

/// Fidelity, steady state, variability and outputs.
std::vector<FieldDecl> run_fields() {
  return {
      {"/fidelity", choice(fidelity_names()), R"doc(`"flow"`)doc",
       R"doc(`flow`: every message of every collective is timed by SimGrid's flow-level sharing (contention, topology; a SimGrid communication, or SimGrid's formula where its route is private: `flow_private_routes`); `analytic`: each collective is one timed activity lasting its formula, with alpha and beta from the platform's routes, and so is each parameter-server push and pull (alpha + bytes x beta of its route) (cheap at 10,000+ workers; no contention; run by sgdsim's own scheduler, see Collectives, network models and fidelity))doc",
       "scenario"},
      {"/flow_symmetry", choice(flow_symmetry_names()), R"doc(`"none"`)doc",
       R"doc(`rotation`: at `flow` fidelity, simulate only one block's messages, each standing for its images in every block; exact (tested equal to `none`) when rotating the ranks by a block maps the platform and every collective onto itself. Blocks: on a generated star of one-GPU nodes a rank (routes r -> r+1 of identical links, none shared; no cross traffic, no `reduction_speed`), on a generated star of multi-GPU nodes a node and on a generated fat tree (no ECMP spines) a leaf, whose routes the generator makes alike (cross traffic allowed; workers filling whole blocks in order; no `link_noise`, no `reduction_speed`); every collective's messages must rotate with the blocks (rank by rank: `ring`, `nccl_tuner`; by nodes or leaves also `hierarchical` and `nccl`); otherwise the run stops with an error saying why. Cuts a collective's SimGrid activities by the number of blocks (see Networks and fidelity))doc",
       "scenario"},
      {"/flow_private_routes", choice({"auto", "closed_form", "simgrid"}), R"doc(`"simgrid"`)doc",
       R"doc(at `flow` fidelity, a message whose route's links carry messages of its own (source, destination) pair only is timed by SimGrid's own formula for it (latency, then the pair's equal share of the route's narrowest link) instead of being a SimGrid communication; when another pair's message needs one of its links the pair's messages become SimGrid communications with what is left of them. The same times as every message on SimGrid to rounding (tested to 1e-9; byte-identical on rings of a star), but messages ending at the same instant may be taken in another order, which changes the sample path of schemes that draw in event order (`adpsgd`'s peers). `closed_form`: where it applies (network models `links` and `ideal`, no cross traffic, `flow_symmetry` `none`), an error elsewhere; `auto`: where it applies, every message on SimGrid elsewhere; `simgrid`: every message a SimGrid communication. `summary.json`'s `closed_form` counts the messages ended in closed form and those handed over (see Networks and fidelity))doc",
       "scenario"},
      {"/steady_state", integer(0), R"doc(`0` (off))doc",
       R"doc(K >= 2: end the run once K consecutive iterations after the warm-up took the same time (to 1e-9 relative); `summary.json`'s `iterations` is then the iterations simulated and `steady_state` says so. Inactive (the run goes on, `steady_state.active` false) with `compute_jitter`, redrawn stragglers or `training`, which make iterations differ or depend on their count; fixed stragglers and link noise repeat every iteration and keep it)doc",
       "scenario"},
      {"/variability/compute_jitter", number(0), R"doc(`0`)doc",
       R"doc(coefficient of variation of a mean-one factor on every compute task)doc", "scenario"},
      {"/variability/jitter_distribution", choice({"lognormal", "normal", "uniform"}),
       R"doc(`"lognormal"`)doc", R"doc(`lognormal`, `normal` (truncated at 0.05) or `uniform`)doc",
       "scenario"},
      {"/variability/stragglers", object(),
       R"doc(`{"fraction": 0, "slowdown": 1, "redraw": false}`)doc",
       R"doc(`round(fraction x workers)` workers, chosen by the seed, compute `slowdown` times slower; `redraw` picks them anew every iteration)doc",
       "scenario"},
      {"/variability/link_noise", number(0), R"doc(`0`)doc",
       R"doc(coefficient of variation of a log-normal (mean 1) factor on every link's bandwidth, drawn once per link from the seed)doc",
       "scenario"},
      {"/background", object(), R"doc(absent (no other jobs))doc",
       R"doc(other jobs' traffic on the same network: `jobs` chains of the scenario's collective (algorithm, chunks, channels) over every worker's rank, each operation of `bytes` followed by `gap` of idle time, job j starting at j x `offset`, repeated until the training ends; they share links with the training's messages (fidelity `flow`, `flow_symmetry` `none`, 2 workers or more) and are in no output but through the training's times and `summary.json`'s `activities` (see What changes with scale))doc",
       "scenario"},
      {"/background/jobs", integer(1, 1024), R"doc(`1`)doc", R"doc(concurrent other jobs)doc",
       "scenario"},
      {"/background/bytes", size(), R"doc(required)doc",
       R"doc(size of each of their operations, > 0)doc", "scenario"},
      {"/background/gap", time(), R"doc(`"0s"`)doc",
       R"doc(idle time between a job's operations (its compute, for another training job))doc",
       "scenario"},
      {"/background/offset", time(), R"doc(`"0s"`)doc",
       R"doc(job j's first operation starts at j x `offset`)doc", "scenario"},
      {"/output/timeline", boolean(), R"doc(`true`)doc", R"doc(write `timeline.json`)doc",
       "scenario"}};
}

/// The training section (the training table of docs/fields.md).
std::vector<FieldDecl> training_fields() {
  return {
      {"/training/model/type", choice({"mlp", "softmax", "cnn"}), R"doc(`"mlp"`)doc",
       R"doc(`mlp` (ReLU, softmax cross-entropy), `softmax` (regression) or `cnn` (LeNet-style, Fashion-MNIST only))doc",
       "training"},
      {"/training/model/hidden", integer_list(), R"doc(`[256, 128]` (`cnn`: `[64]`))doc",
       R"doc(hidden layer widths (for `cnn`, dense layers after the conv layers))doc", "training"},
      {"/training/model/channels", integer_list(), R"doc(`[8, 16]`)doc",
       R"doc(`cnn`: 1 to 3 conv layers, each a valid `kernel` x `kernel` convolution (stride 1), ReLU and 2x2 max-pooling; the output channels of each)doc",
       "training"},
      {"/training/model/kernel", integer(1, 9), R"doc(`5`)doc",
       R"doc(`cnn`: kernel side, 1 to 9; 28x28 images allow two layers of kernel 5 (28 -> 24 -> 12 -> 8 -> 4))doc",
       "training"},
      {"/training/dataset", choice({"fashion-mnist", "synthetic"}), R"doc(`"fashion-mnist"`)doc",
       R"doc(Debian's `dataset-fashion-mnist` (60,000 train / 10,000 test; a missing file names the package), or `synthetic` (seeded Gaussian mixture, 10 classes; `training.synthetic` sets its difficulty))doc",
       "training"},
      {"/training/learning_rate", number(0), R"doc(`0.05`)doc",
       R"doc(SGD step size lr (`v = m v + g + wd w; w -= lr v`))doc", "training"},
      {"/training/momentum", number(0), R"doc(`0.9`)doc", R"doc(SGD momentum m (0 = plain SGD))doc",
       "training"},
      {"/training/weight_decay", number(0), R"doc(`0`)doc", R"doc(L2 weight decay wd)doc",
       "training"},
      {"/training/eval_every", integer(1), R"doc(`20`)doc",
       R"doc(test loss and accuracy every this many iterations (and at the end))doc", "training"},
      {"/training/target_accuracy", number(0, 1), R"doc(none)doc",
       R"doc(once reached, no further iteration starts; `time_to_target_s` in `summary.json`)doc",
       "training"},
      // Here the predictors' declared options (models/learn/predictors) go.
      {"", json(), "", "", ""},
      {"/training/synthetic/dimension", integer(1, 4096), R"doc(`32`)doc",
       R"doc(`synthetic`: features per sample, 1 to 4096)doc", "training"},
      {"/training/synthetic/overlap", number(0, 100), R"doc(`1.5`)doc",
       R"doc(`synthetic`: within-class standard deviation, 0 to 100, against class centers drawn with standard deviation 2 (larger overlaps the classes more))doc",
       "training"},
      {"/training/synthetic/label_noise", number(0, 1), R"doc(`0`)doc",
       R"doc(`synthetic`: fraction of labels redrawn uniformly among the classes, 0 to 1 (train and test alike, so a noise q caps test accuracy near 1 - 0.9 q))doc",
       "training"},
      {"/training/shards", choice({"iid", "by_label"}), R"doc(`"iid"`)doc",
       R"doc(`iid` (seeded permutation dealt round-robin) or `by_label` (sorted by label, contiguous blocks: each worker sees few classes))doc",
       "training"},
      {"/training/lr_schedule", object(), R"doc(`{"type": "constant"}`)doc",
       R"doc(`{"type": "step", "every": K, "factor": f}` or `{"type": "warmup", "iterations": W}` (Goyal et al.: ramp linearly to `learning_rate x workers`, the linear scaling rule))doc",
       "training"}};
}

/// `scheme.compression` and every registered compressor's options (models/learn/compressors),
/// each row naming the compressors that read it.
std::vector<FieldDecl> compression_fields() {
  using namespace field_schema;
  std::vector<std::string> types = {"none"};
  for (const std::string& n : learn::compressor_names()) types.push_back(n);
  std::string schemes;
  for (const std::string& n : compressible_scheme_names())
    schemes += (schemes.empty() ? "`" : ", `") + n + "`";
  std::vector<FieldDecl> f = {
      {"/scheme/compression", object(), R"doc(none)doc",
       schemes + " only: gradient compression, `{\"type\": \"topk\", \"ratio\": 0.01}` (see "
                 "Compression); absent: allreduce of the whole gradient",
       "scenario"},
      {"/scheme/compression/type", choice(types), R"doc(`"none"`)doc",
       "the compressor: `none` or a registered one (see Gradient compression)", "scenario"}};
  for (const learn::DeclaredCompressorParam& p : learn::compressor_params()) {
    FieldDecl field = param_field(p.param, "/scheme/compression/");
    std::string owners;
    for (const std::string& o : p.owners) owners += (owners.empty() ? "`" : ", `") + o + "`";
    field.doc = owners + ": " + field.doc;
    f.push_back(std::move(field));
  }
  return f;
}

}  // namespace

std::vector<FieldDecl> scenario_fields() {
  std::vector<FieldDecl> f;
  auto add = [&f](const std::vector<FieldDecl>& more) {
    f.insert(f.end(), more.begin(), more.end());
  };
  add(platform_fields());
  add(network_fields());
  add(workload_fields());
  // Each scheme declares its own options (sim/schemes), listed after the common keys; one
  // declared by several schemes is listed once, naming them.
  std::set<std::string> scheme_keys;
  for (const std::string& type : scheme_type_names())
    for (const SchemeParam& p : scheme_type(type).params) {
      if (!scheme_keys.insert(p.param.key).second) continue;
      FieldDecl field = param_field(p.param, "/scheme/");
      const std::vector<std::string> owners = scheme_types_with_option(p.param.key);
      if (owners.size() > 1) {
        std::string names;
        for (const std::string& o : owners) names += (names.empty() ? "`" : ", `") + o + "`";
        field.doc = names + ": " + field.doc;
      }
      f.push_back(std::move(field));
    }
  add(compression_fields());
  add(collective_fields());
  // Each algorithm declares its own options (sim/collectives), listed after the common keys.
  for (const DeclaredCollectiveParam& d : collective_params())
    f.push_back(param_field(d.param.param, "/collective/"));
  add(run_fields());
  for (const FieldDecl& d : training_fields()) {
    if (!d.pointer.empty()) {
      f.push_back(d);
      continue;
    }
    // Each predictor declares its own options (models/learn/predictors), in the training
    // table where the predictor fields stood, each row naming the predictors that read it.
    for (const learn::DeclaredPredictorParam& p : learn::predictor_params()) {
      FieldDecl field = param_field(p.param, "/training/", "training");
      std::string owners;
      for (const std::string& o : p.owners) owners += (owners.empty() ? "`" : ", `") + o + "`";
      field.doc = owners + ": " + field.doc;
      f.push_back(std::move(field));
    }
  }
  add_nested_fields(f);
  return f;
}

namespace {

/// The schema node of `pointer`, creating the objects on its way.
json& node_at(json& root, const std::string& pointer) {
  json* node = &root;
  std::stringstream parts(pointer.substr(1));
  std::string part;
  while (std::getline(parts, part, '/')) {
    json& n = *node;
    if (!n.contains("properties")) {
      // A union (a preset's name or an object) keeps its own types: "properties" and
      // "additionalProperties" constrain only its object branch.
      if (!n.contains("anyOf")) n["type"] = "object";
      n["additionalProperties"] = false;
      n["properties"] = json::object();
    }
    node = &n["properties"][part];
  }
  return *node;
}

}  // namespace

json scenario_schema() {
  json schema = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"title", "sgdsim scenario"},
      {"description", "A scenario of sgdsim " SGDSIM_VERSION
                      " (field reference: docs/fields.md). Generated by `sgdsim schema`."}};
  const json& defaults = scenario_defaults();
  for (const FieldDecl& d : scenario_fields()) {
    json& n = node_at(schema, d.pointer);
    const json keep = n;  // properties already added by its children
    n = d.schema;
    if (keep.contains("properties")) {
      n["properties"] = keep["properties"];
      n["additionalProperties"] = false;
    } else if (n.value("type", "") == "object" && !n.contains("additionalProperties")) {
      n["additionalProperties"] = false;
      n["properties"] = json::object();
    }
    if (!d.doc.empty()) n["description"] = d.doc;
    const json::json_pointer p(d.pointer);
    if (defaults.contains(p)) n["default"] = defaults.at(p);
  }
  // A scenario names a profile (model) or Chakra traces (workload.chakra).
  schema["anyOf"] = json::array({{{"required", {"model"}}}, {{"required", {"workload"}}}});
  return schema;
}

std::string field_table_markdown(const std::string& table) {
  std::string out = "| field | default | meaning |\n|---|---|---|\n";
  for (const FieldDecl& d : scenario_fields()) {
    if (d.table != table) continue;
    std::string name = d.pointer.substr(1);
    for (char& c : name)
      if (c == '/') c = '.';
    out += fmt::format("| `{}` | {} | {} |\n", name, d.default_text, d.doc);
  }
  return out;
}

}  // namespace sgdsim
