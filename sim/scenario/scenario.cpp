#include "sim/scenario/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <tuple>

#include "models/learn/predictor.hpp"
#include "sim/collectives/byteps.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/det_math.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scheme_types.hpp"
#include "sim/scenario/workload_field.hpp"

namespace sgdsim {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
/// The defaults table of fields the scenario layer reads itself; the registered algorithms'
/// options add theirs from their declarations (scenario_defaults). A scheme's options are not in
/// it (an absent `scheme` object is the table's, holding only the keys every type reads): their
/// declarations give their defaults (read_scheme_params).
json own_defaults() {
  return json::parse(R"({
    "name": "",
    "description": "",
    "seed": 1,
    "platform": {
      "technology": "tcp",
      "generate": {
        "topology": "star",
        "node_link": {"bandwidth": "100Gbps", "latency": "1us", "technology": "tcp"},
        "intra_node_link": {"bandwidth": "16GBps", "latency": "1us", "technology": "pcie"},
        "device_speed": "15Tf",
        "nodes_per_leaf": 16,
        "oversubscription": 1
      }
    },
    "network_model": "links",
    "simgrid_cfg": [],
    "gradient_precision": "fp32",
    "device": {"efficiency": 1.0, "io_time_per_sample": "0s"},
    "workers": {"count": 1, "placement": "block"},
    "batch_size": 32,
    "iterations": 20,
    "warmup_iterations": 2,
    "steady_state": 0,
    "workload": {"chakra": [], "optimizer": "sgdsim"},
    "scheme": {"type": "sync", "overlap": "wfbp", "fusion_bytes": "25MB", "first_bucket_bytes": 0},
    "collective": {"algorithm": "ring", "chunk_bytes": 0, "channels": 1, "servers": 0},
    "fidelity": "flow",
    "flow_symmetry": "none",
    "variability": {"compute_jitter": 0.0, "jitter_distribution": "lognormal", "link_noise": 0.0,
                    "stragglers": {"fraction": 0.0, "slowdown": 1.0, "redraw": false}},
    "output": {"timeline": true},
    "training": {"model": {"type": "mlp", "hidden": [256, 128]}, "dataset": "fashion-mnist",
                 "learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.0, "eval_every": 20,
                 "shards": "iid", "lr_schedule": {"type": "constant"},
                 "synthetic": {"dimension": 32, "overlap": 1.5, "label_noise": 0.0}}
  })");
}
}  // namespace

const json& scenario_defaults() {
  // The single place where defaults live: docs/fields.md is made from the same declarations.
  static const json defaults = [] {
    json d = own_defaults();
    for (const DeclaredCollectiveParam& p : collective_params())
      d["collective"][p.param.param.key] = p.param.param.default_value;
    for (const learn::DeclaredPredictorParam& p : learn::predictor_params())
      d["training"][p.param.key] = p.param.default_value;
    return d;
  }();
  return defaults;
}

void apply_override(json& raw, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", "",
                     "expected PATH=VALUE (e.g. workers.count=8), got \"" + assignment + "\"");
  std::string path = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  // Not JSON, or a number out of range ("1e999"): the text as a string.
  json value = parse_json_value(text, "--set " + path).value_or(json(text));
  std::string pointer;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError("--set", "", "empty component in path \"" + path + "\"");
    if (part.find_first_of("/~") != std::string::npos)
      throw InputError(
          "--set", "",
          "path \"" + path + "\": components are separated by '.' and may not contain '/' or '~'");
    pointer += "/" + part;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // Refuse to replace a non-object parent silently: "model.x" when model is a string.
  json::json_pointer ptr(pointer);
  json::json_pointer parent = ptr.parent_pointer();
  while (!parent.empty() && !raw.contains(parent)) parent = parent.parent_pointer();
  if (!raw.at(parent).is_object())
    throw InputError("--set", parent.to_string(),
                     "cannot set \"" + path + "\": " + parent.to_string() + " is " +
                         show_value(raw.at(parent)) + ", not an object");
  raw[ptr] = value;
}

std::string data_dir() {
  if (const char* env = std::getenv("SGDSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path share = exe.parent_path().parent_path() / "share" / "sgdsim";
    if (fs::is_directory(share / "models" / "profiles", ec)) return share.string();
  }
  return SGDSIM_SOURCE_DATA_DIR;
}

std::string resolve_data_path(const std::string& path, const std::string& base_dir,
                              const std::string& file, const std::string& pointer) {
  fs::path p(path);
  std::vector<fs::path> tried;
  if (p.is_absolute()) {
    tried.push_back(p);
  } else {
    tried.push_back(fs::path(base_dir) / p);
    tried.push_back(p);
    tried.push_back(fs::path(data_dir()) / p);
  }
  std::error_code ec;
  for (const auto& t : tried)
    if (fs::is_regular_file(t, ec)) return t.lexically_normal().string();
  for (const auto& t : tried)  // a directory or a device is there, but no file to read
    if (fs::exists(t, ec))
      throw InputError(file, pointer,
                       "\"" + path + "\" is not a regular file (" + t.lexically_normal().string() +
                           " is a " + (fs::is_directory(t, ec) ? "directory" : "special file") +
                           "): expected a file");
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t.lexically_normal().string();
  throw InputError(file, pointer, "file \"" + path + "\" not found (looked at " + where + ")");
}

namespace {

/// Bytes per gradient element: "fp32" (4), "fp16" or "bf16" (2), or a number of bytes.
double read_precision(JsonObject& root) {
  const std::vector<std::string> names = {"fp32", "fp16", "bf16"};
  if (!root.has("gradient_precision")) return root.get_choice("gradient_precision", names), 4.0;
  const json& v = root.raw("gradient_precision");
  if (v.is_number()) return root.get_number("gradient_precision", 0.0, 64.0, true);
  if (v.is_string()) {
    const std::string p = v.get<std::string>();
    if (std::find(names.begin(), names.end(), p) != names.end()) {
      root.get_choice("gradient_precision", names);
      return p == "fp32" ? 4.0 : 2.0;
    }
  }
  root.fail("gradient_precision", "\"fp32\", \"fp16\", \"bf16\" or bytes per parameter (> 0)");
}

/// A transport limit: "none" (0) or a quantity > 0; absent keys keep `value`.
void read_limit(JsonObject& o, const std::string& key, double& value, bool size) {
  if (!o.has(key)) {
    o.record(key, value > 0
                      ? json(size ? fmt::format("{}B", value) : units::format_bandwidth_Bps(value))
                      : json("none"));
    return;
  }
  const json& v = o.raw(key);
  if (v.is_string() && v.get<std::string>() == "none") {
    value = 0;
    o.record(key, v);
    return;
  }
  value = size ? o.get_size_bytes(key) : o.get_bandwidth_Bps(key);
  if (value <= 0) o.fail(key, "\"none\" or a value > 0");
}

/// A link technology and any overrides of its transport defaults (see transport.hpp).
TransportParams read_transport(JsonObject& o) {
  TransportParams t = transport_defaults(o.get_choice("technology", technology_names()));
  if (o.has("overhead"))
    t.overhead_s = o.get_time_s("overhead");
  else
    o.record("overhead", units::format_time_s(t.overhead_s));
  if (o.has("efficiency"))
    t.efficiency = o.get_number("efficiency", 0.0, 1.0, true);
  else
    o.record("efficiency", t.efficiency);
  read_limit(o, "stream_bandwidth", t.stream_bandwidth_Bps, false);
  read_limit(o, "window", t.window_bytes, true);
  return t;
}

/// `sockets` of a tcp node link: the library's streams bound every message between nodes at
/// channels x streams x min(stream_goodput, flow_cap) (docs/nccl-sockets.md), through the
/// per-message limit that `stream_bandwidth` sets.
void read_sockets(JsonObject& o, LinkSpec& l) {
  if (!o.has("sockets")) {
    if (o.has("stream_goodput"))
      o.fail("stream_goodput", "a `sockets` object beside it (the goodput of one of its streams)");
    return;
  }
  if (!uses_sockets(l.transport.technology))
    o.fail("sockets", fmt::format("no `sockets` on a {} link (they need \"technology\": \"tcp\")",
                                  l.transport.technology));
  double goodput_Bps = kDefaultStreamGoodput_Bps;
  if (o.has("stream_goodput"))
    goodput_Bps = o.get_bandwidth_Bps("stream_goodput");
  else
    o.record("stream_goodput", units::format_bandwidth_Bps(goodput_Bps));
  JsonObject so = o.get_object("sockets");
  SocketParams p = socket_defaults(so.get_choice("library", socket_library_names()));
  // NCCL caps threads at 16 and sockets at 64 (it warns and clamps; here they are errors).
  for (const auto& [key, field, min, max] : {std::tuple{"threads", &p.threads, 0, 16},
                                             {"sockets_per_thread", &p.sockets_per_thread, 1, 64},
                                             {"channels", &p.channels, 1, 64}}) {
    if (so.has(key))
      *field = static_cast<int>(so.get_int(key, min, max));
    else
      so.record(key, *field);
  }
  read_limit(so, "flow_cap", p.flow_cap_Bps, false);
  so.finish();
  const double peer_Bps = socket_peer_Bps(p, goodput_Bps);
  double& stream = l.transport.stream_bandwidth_Bps;
  stream = stream > 0 ? std::min(stream, peer_Bps) : peer_Bps;
}

/// `end_to_end_latency` of a node link: the one-way host-to-host latency of a small message
/// between two nodes under one switch (ib_write_lat, osu_latency). A route between two nodes
/// crosses two node links and pays the technology's overhead once, so each link gets
/// (end_to_end_latency - overhead) / 2 (docs/spec-sheet.md).
double latency_from_end_to_end(JsonObject& o, const TransportParams& t) {
  if (o.has("latency"))
    o.fail("end_to_end_latency", "either `latency` (per hop) or `end_to_end_latency`, not both");
  const double e2e_s = o.get_time_s("end_to_end_latency", true);
  if (e2e_s <= t.overhead_s)
    o.fail("end_to_end_latency",
           fmt::format("a time above the {} link's per-message overhead of {:g} us (the route "
                       "pays it once on top of its two node links)",
                       t.technology, t.overhead_s * 1e6));
  return (e2e_s - t.overhead_s) / 2;
}

/// A link object; `sockets` (and `stream_goodput`, `end_to_end_latency`) only on the node
/// link, between nodes.
LinkSpec read_link(JsonObject o, bool node_link) {
  LinkSpec l;
  l.bandwidth_Bps = o.get_bandwidth_Bps("bandwidth");
  l.transport = read_transport(o);
  l.latency_s = node_link && o.has("end_to_end_latency") ? latency_from_end_to_end(o, l.transport)
                                                         : o.get_time_s("latency");
  if (node_link) read_sockets(o, l);
  if (l.transport.overhead_s > 0 && l.latency_s <= 0)
    o.fail("latency",
           fmt::format("a latency > 0 for a {} link (its {} per-message overhead is "
                       "applied as a factor of the route latency)",
                       l.transport.technology, units::format_time_s(l.transport.overhead_s)));
  o.finish();
  return l;
}

/// An array of `count` integers in [1, 2^20] (count 0: any non-empty length) at `key`.
std::vector<int> read_int_list(JsonObject& g, Scenario& s, const std::string& key, size_t count,
                               const std::string& what) {
  const json& v = g.raw(key);
  std::vector<int> out;
  bool ok = v.is_array() && (count == 0 ? !v.empty() : v.size() == count);
  for (size_t i = 0; ok && i < v.size(); ++i) {
    ok = v[i].is_number_integer() && v[i].get<int64_t>() >= 1 && v[i].get<int64_t>() <= (1 << 20);
    if (ok) out.push_back(v[i].get<int>());
  }
  if (!ok) g.fail(key, what);
  s.resolved["platform"]["generate"][key] = v;
  return out;
}

int64_t product(const std::vector<int>& v, size_t n) {
  int64_t x = 1;
  for (size_t i = 0; i < n; ++i) x *= v[i];
  return x;
}

/// torus: its dimensions (default a balanced 3-D grid), whose product is the node count.
void read_torus(JsonObject& g, Scenario& s, GeneratedPlatform& gp) {
  if (g.has("dims")) {
    gp.torus_dims =
        read_int_list(g, s, "dims", 0, "a non-empty array of integers >= 1 such as [4, 4, 4]");
  } else {
    // A balanced 3-D grid: the largest factor <= cube root first.
    int rest = gp.nodes;
    for (int d = 0; d < 2; ++d) {
      int f = 1;
      for (int c = 1; static_cast<int64_t>(c) * c * (d == 0 ? c : 1) <= rest; ++c)
        if (rest % c == 0) f = c;
      gp.torus_dims.push_back(f);
      rest /= f;
    }
    gp.torus_dims.push_back(rest);
    s.resolved["platform"]["generate"]["dims"] = gp.torus_dims;
  }
  if (g.has("nodes") && product(gp.torus_dims, gp.torus_dims.size()) != gp.nodes)
    g.fail("dims", fmt::format("dimensions whose product is nodes ({})", gp.nodes));
  gp.nodes = static_cast<int>(product(gp.torus_dims, gp.torus_dims.size()));
}

/// dragonfly: SimGrid's 7-number shape (required).
void read_dragonfly(JsonObject& g, Scenario& s, GeneratedPlatform& gp) {
  if (!g.has("dragonfly"))
    g.fail("dragonfly",
           "[groups, chassis per group, routers per chassis, nodes per router, "
           "group links, chassis links, router links], e.g. [4, 2, 4, 2, 1, 1, 1]");
  gp.dragonfly = read_int_list(g, s, "dragonfly", 7,
                               "7 integers >= 1: [groups, chassis per group, routers per chassis, "
                               "nodes per router, group links, chassis links, router links]");
  // SimGrid 3.32 attaches group n's global link to router n of a chassis and crashes
  // when a chassis has fewer routers than there are groups.
  if (gp.dragonfly[2] < gp.dragonfly[0])
    g.fail("dragonfly", fmt::format("routers per chassis (3rd number) >= groups (1st number, {}): "
                                    "SimGrid 3.32's dragonfly needs it",
                                    gp.dragonfly[0]));
  if (g.has("nodes") && product(gp.dragonfly, 4) != gp.nodes)
    g.fail("dragonfly",
           fmt::format("a shape whose first four numbers multiply to nodes ({})", gp.nodes));
  gp.nodes = static_cast<int>(product(gp.dragonfly, 4));
}

/// The generated XML routes every pair of nodes (star) or leaves (fat tree) explicitly.
void check_routed_peers(const JsonObject& g, const GeneratedPlatform& gp) {
  constexpr int kMaxRoutedPeers = 1024;
  if (gp.topology == Topology::star && gp.devices_per_node > 1 && gp.nodes > kMaxRoutedPeers)
    throw InputError(g.file(), g.pointer_of("nodes"),
                     fmt::format("expected at most {} nodes for a star of multi-device nodes (use "
                                 "\"fat_tree\" for more), got {}",
                                 kMaxRoutedPeers, gp.nodes));
  if (gp.topology == Topology::fat_tree &&
      (gp.nodes + gp.nodes_per_leaf - 1) / gp.nodes_per_leaf > kMaxRoutedPeers)
    throw InputError(
        g.file(), g.pointer_of("nodes"),
        fmt::format("expected at most {} leaves ({} nodes with nodes_per_leaf {}), got {} nodes",
                    kMaxRoutedPeers, kMaxRoutedPeers * gp.nodes_per_leaf, gp.nodes_per_leaf,
                    gp.nodes));
}

/// `spines` and `ecmp_seed` (fat tree only; absent keys stay out of the resolved scenario).
void read_spines(JsonObject& g, GeneratedPlatform& gp) {
  if (g.has("spines")) gp.spines = static_cast<int>(g.get_int("spines", 1, 1 << 16));
  if (g.has("ecmp_seed")) gp.ecmp_seed = static_cast<uint64_t>(g.get_int("ecmp_seed", 0));
  if ((gp.spines > 1 || g.has("ecmp_seed")) && gp.topology != Topology::fat_tree)
    throw InputError(g.file(), g.pointer_of(g.has("spines") ? "spines" : "ecmp_seed"),
                     fmt::format("expected topology \"fat_tree\" (spines are a fat tree's), got "
                                 "topology \"{}\"",
                                 topology_name(gp.topology)));
  // With ECMP every pair of hosts has a route of its own in the XML.
  constexpr int kMaxEcmpHosts = 512;
  if (gp.spines > 1 && gp.nodes * gp.devices_per_node > kMaxEcmpHosts)
    throw InputError(g.file(), g.pointer_of("spines"),
                     fmt::format("spines > 1 routes every pair of hosts: expected at most {} "
                                 "hosts, got {} nodes x {} devices",
                                 kMaxEcmpHosts, gp.nodes, gp.devices_per_node));
  if (!g.has("ecmp_connections")) return;
  gp.ecmp_connections = static_cast<int>(g.get_int("ecmp_connections", 0, 1024));
  if (gp.ecmp_connections > 0 && gp.spines < 2)
    throw InputError(g.file(), g.pointer_of("ecmp_connections"),
                     fmt::format("expected spines > 1 beside it (connections are hashed onto "
                                 "spines), got spines {}",
                                 gp.spines));
  // A per-connection route lists a spine link once per connection, both ways of every pair.
  constexpr int64_t kMaxConnectionEntries = int64_t{1} << 21;
  const int64_t hosts = int64_t{gp.nodes} * gp.devices_per_node;
  if (hosts * hosts * gp.ecmp_connections > kMaxConnectionEntries)
    throw InputError(g.file(), g.pointer_of("ecmp_connections"),
                     fmt::format("expected hosts x hosts x connections at most {} (each "
                                 "connection is a spine link in a route of every pair), got "
                                 "{} hosts x {} connections",
                                 kMaxConnectionEntries, hosts, gp.ecmp_connections));
}

/// Devices per node and nodes, with their derived defaults: enough nodes for the workers (and
/// `dedicated_nodes` after them), as many devices as workers per node.
void read_node_counts(JsonObject& g, Scenario& s, GeneratedPlatform& gp, int workers,
                      std::optional<int> per_node, int dedicated_nodes) {
  if (g.has("devices_per_node")) {
    gp.devices_per_node = static_cast<int>(g.get_int("devices_per_node", 1, 1 << 20));
  } else {
    gp.devices_per_node = per_node.value_or(1);
    s.resolved["platform"]["generate"]["devices_per_node"] = gp.devices_per_node;
  }
  if (is_simgrid_cluster(gp.topology) && gp.devices_per_node != 1)
    throw InputError(
        g.file(), g.pointer_of("devices_per_node"),
        fmt::format("expected 1 for topology \"{}\" (SimGrid's {} clusters have one "
                    "host per node), got {}",
                    topology_name(gp.topology), topology_name(gp.topology), gp.devices_per_node));
  if (g.has("nodes")) {
    gp.nodes = static_cast<int>(g.get_int("nodes", 1, 1 << 24));
  } else {
    gp.nodes = (workers + gp.devices_per_node - 1) / gp.devices_per_node;
    if (dedicated_nodes != 0) {
      // A dedicated parameter server (byteps) is a node of its own after the workers'.
      const int dpn = per_node.value_or(gp.devices_per_node);
      const int worker_nodes = (s.workers + dpn - 1) / dpn;
      gp.nodes += dedicated_nodes > 0 ? dedicated_nodes : worker_nodes;
    }
  }
}

/// `node`: a preset name or {"preset", "p2p", "gdr"}; its host path sets the intra-node link's
/// bandwidth (the ring's slowest hop) and caps the node link's (the NICs' host path).
void read_node(JsonObject& g, GeneratedPlatform& gp) {
  if (!g.has("node")) return;
  const json& v = g.raw("node");
  if (g.has("intra_node_link") && g.raw("intra_node_link").is_object() &&
      g.raw("intra_node_link").contains("bandwidth"))
    throw InputError(g.file(), g.pointer_of("intra_node_link") + "/bandwidth",
                     "no bandwidth with \"node\" (the node's host path sets it)");
  auto preset = [&](const json& name, const std::string& ptr) {
    try {
      if (name.is_string()) return node_preset(name.get<std::string>());
    } catch (const std::out_of_range&) {
    }
    throw InputError(g.file(), ptr,
                     fmt::format("expected a node preset ({}), got {}",
                                 fmt::join(node_preset_names(), ", "), show_value(name)));
  };
  NodeDescription n;
  if (v.is_object()) {
    JsonObject o(v, g.file(), g.pointer_of("node"));
    n = preset(o.has("preset") ? o.raw("preset") : json(), o.pointer_of("preset"));
    if (o.has("p2p")) n.p2p = o.get_bool("p2p");
    if (o.has("gdr")) n.gdr = o.get_bool("gdr");
    o.finish();
  } else {
    n = preset(v, g.pointer_of("node"));
  }
  if (gp.devices_per_node > static_cast<int>(n.gpus.size()))
    throw InputError(g.file(), g.pointer_of("devices_per_node"),
                     fmt::format("expected at most {} (the GPUs of node \"{}\"), got {}",
                                 n.gpus.size(), n.name, gp.devices_per_node));
  if (gp.devices_per_node > 1) {
    // An achievable DMA rate: the link technology's framing efficiency is already in it.
    gp.intra_node_link.bandwidth_Bps = intra_node_ring_path(n, gp.devices_per_node).rate_Bps;
    gp.intra_node_link.transport.efficiency = 1;
  }
  gp.node_link.bandwidth_Bps =
      std::min(gp.node_link.bandwidth_Bps, nic_path(n, gp.devices_per_node).rate_Bps);
  // The resolved scenario keeps the preset, not the defaults it replaces (a sweep reruns it).
  g.record("node", v);
  g.unrecord("intra_node_link/bandwidth");
  g.unrecord("intra_node_link/efficiency");
}

/// `dedicated_nodes`: nodes after the workers' for dedicated servers (-1: one per worker node).
void read_platform(JsonObject& root, Scenario& s, const std::string& base_dir, int workers,
                   std::optional<int> per_node, int dedicated_nodes) {
  JsonObject p = root.get_object("platform");
  if (p.has("file") && p.has("generate"))
    throw InputError(p.file(), p.pointer(), "give either \"file\" or \"generate\", not both");
  if (p.has("file")) {
    std::string f = p.get_string("file");
    s.platform.file = resolve_data_path(f, base_dir, p.file(), p.pointer_of("file"));
    s.platform.file_transport = transport_defaults(p.get_choice("technology", technology_names()));
    p.finish();
    return;
  }
  JsonObject g = p.get_object("generate");
  GeneratedPlatform gp;
  gp.topology = *topology_named(g.get_choice("topology", topology_names()));
  read_node_counts(g, s, gp, workers, per_node, dedicated_nodes);
  if (gp.topology == Topology::torus) read_torus(g, s, gp);
  if (gp.topology == Topology::dragonfly) read_dragonfly(g, s, gp);
  if (!g.has("nodes")) s.resolved["platform"]["generate"]["nodes"] = gp.nodes;
  gp.node_link = read_link(g.get_object("node_link"), true);
  gp.intra_node_link = read_link(g.get_object("intra_node_link"), false);
  read_node(g, gp);
  gp.device_speed_flops = g.get_speed_flops("device_speed");
  gp.nodes_per_leaf = static_cast<int>(g.get_int("nodes_per_leaf", 1, 1 << 20));
  gp.oversubscription = g.get_number("oversubscription", 1.0, 1e6);
  read_spines(g, gp);
  g.finish();
  check_routed_peers(g, gp);
  // Generated links always carry a technology; this one serves links without (files).
  s.platform.file_transport = transport_defaults(p.get_choice("technology", technology_names()));
  p.finish();
  s.platform.generate = gp;
}

/// Servers on nodes of their own (byteps dedicated) must fit on the generated platform.
void check_server_nodes(JsonObject& co, const Scenario& s, const Collective& c) {
  if (c.server_nodes(s.collective_servers, s.collective_options.server_placement) == 0 ||
      !s.platform.generate)
    return;
  const auto& gp = *s.platform.generate;
  const int nodes = s.workers / std::max(1, s.workers_per_node);
  if (gp.nodes < nodes + s.dedicated_servers())
    throw InputError(co.file(), co.pointer_of("servers"),
                     fmt::format("expected at most {} dedicated servers (platform nodes {} less "
                                 "{} worker nodes; each server takes a node), got {}",
                                 gp.nodes - nodes, gp.nodes, nodes, s.dedicated_servers()));
}

/// The options every registered algorithm declares (Collective::params), each read as its
/// declaration says into s.collective_options; an "auto" step latency (nccl_tuner) keeps
/// NCCL's hwLat of the link class's technology.
void read_collective_params(JsonObject& co, Scenario& s) {
  const auto& gen = s.platform.generate;
  CollectiveGroup& g = s.collective_options;
  g.step_latency_intra_s = nccl_step_latency_s(gen ? gen->intra_node_link.transport.technology
                                                   : s.platform.file_transport.technology);
  g.step_latency_inter_s = nccl_step_latency_s(gen ? gen->node_link.transport.technology
                                                   : s.platform.file_transport.technology);
  for (const DeclaredCollectiveParam& d : collective_params())
    apply_param(g, d.param, read_param(co, d.param.param));
}

/// The algorithm's own checks of its options, its placement needs, and other algorithms'
/// options (only their defaults, a resolved scenario's, are accepted).
void check_collective(JsonObject& co, const Scenario& s) {
  const Collective& c = collective_by_name(s.collective);
  if (std::optional<OptionProblem> problem = c.check(collective_group(s))) {
    const std::string pointer = problem->option == "ranks" ? "/workers/count"
                                : problem->option == "ranks_per_node"
                                    ? "/workers/per_node"
                                    : co.pointer_of(problem->option);
    throw InputError(co.file(), pointer, problem->message);
  }
  check_server_nodes(co, s, c);
  if (c.needs_block_placement() && s.placement != "block")
    throw InputError(co.file(), "/collective/algorithm",
                     "\"" + s.collective +
                         "\" needs workers.placement \"block\" (a node's workers "
                         "must be consecutive ranks)");
  const std::vector<CollectiveParam> mine = c.params();
  for (const DeclaredCollectiveParam& d : collective_params()) {
    const Param& p = d.param.param;
    if (!p.exclusive || std::any_of(mine.begin(), mine.end(),
                                    [&](const CollectiveParam& m) { return m.param.key == p.key; }))
      continue;
    if (co.has(p.key) && co.raw(p.key) != p.default_value)
      co.fail(p.key,
              fmt::format("{} (only algorithm \"{}\" uses it)", p.default_value.dump(), d.owner));
  }
}

/// Hosts the scheme's servers need beyond the workers', from the raw input (its type decides).
int raw_scheme_extra_hosts(const json& raw) {
  if (!raw.contains("scheme") || !raw["scheme"].is_object()) return 0;
  const json& sch = raw["scheme"];
  if (!sch.contains("type") || !sch["type"].is_string()) return 0;
  try {
    const SchemeType& t = scheme_type(sch["type"].get<std::string>());
    return t.raw_extra_hosts ? t.raw_extra_hosts(sch) : 0;
  } catch (const std::out_of_range&) {
    return 0;  // the scheme section reports the unknown type
  }
}

/// Nodes the collective's servers need beyond the workers' (-1: one per worker node).
int raw_collective_server_nodes(const json& raw) {
  if (!raw.contains("collective") || !raw["collective"].is_object()) return 0;
  const json& co = raw["collective"];
  if (!co.contains("algorithm") || !co["algorithm"].is_string()) return 0;
  try {
    const Collective& c = collective_by_name(co["algorithm"].get<std::string>());
    const int servers = co.contains("servers") && co["servers"].is_number_integer()
                            ? std::max(0, co["servers"].get<int>())
                            : 0;
    const std::string placement =
        co.contains("server_placement") && co["server_placement"].is_string()
            ? co["server_placement"].get<std::string>()
            : "colocated";
    return c.server_nodes(servers, placement);
  } catch (const std::out_of_range&) {
    return 0;  // the collective section reports the unknown algorithm
  }
}

/// The type's declared options: each read as declared, or its declared default (recorded).
void read_scheme_params(JsonObject& sc, const SchemeType& type, Scenario& s) {
  for (const SchemeParam& p : type.params) {
    std::optional<ParamValue> v;
    if (sc.has(p.param.key)) {
      v = read_param(sc, p.param);
    } else {
      v = default_param_value(p.param);
      if (!v) throw std::logic_error("scheme option without a default: " + p.param.key);
      sc.record(p.param.key, p.param.default_value);
    }
    s.scheme.params.set(p.param.key, *v);
    if (p.apply) p.apply(s, *v);
  }
}

/// `scheme.compression`: a registered compressor (or "none") and its declared options, each read
/// as declared or its default recorded; an option of another compressor is refused naming it.
void read_compression(JsonObject& sc, const SchemeType& type, Scenario& s) {
  if (!sc.has("compression")) return;
  if (!type.compressible) {
    std::string names;
    for (const std::string& n : compressible_scheme_names())
      names += (names.empty() ? "\"" : ", \"") + n + "\"";
    throw InputError(sc.file(), sc.pointer_of("compression"),
                     "only for a scheme.type that averages gradients by allreduce (" + names +
                         "), not \"" + s.scheme.type + "\"");
  }
  JsonObject c = sc.get_object("compression");
  std::vector<std::string> types = {"none"};
  for (const std::string& n : learn::compressor_names()) types.push_back(n);
  s.scheme.compression.type = c.get_choice("type", types);
  const learn::CompressorKind* kind = s.scheme.compressor();
  for (const learn::DeclaredCompressorParam& d : learn::compressor_params()) {
    const bool own =
        kind != nullptr && std::find(d.owners.begin(), d.owners.end(), kind->id) != d.owners.end();
    if (own || !c.has(d.param.key)) continue;
    std::string owners;
    for (const std::string& o : d.owners) owners += (owners.empty() ? "\"" : ", \"") + o + "\"";
    throw InputError(c.file(), c.pointer_of(d.param.key),
                     "only for scheme.compression.type " + owners + ", not \"" +
                         s.scheme.compression.type + "\"");
  }
  for (const Param& p : kind != nullptr ? kind->params : std::vector<Param>{}) {
    std::optional<ParamValue> v;
    if (c.has(p.key)) {
      v = read_param(c, p);
    } else {
      v = default_param_value(p);
      if (!v) throw std::logic_error("compressor option without a default: " + p.key);
      c.record(p.key, p.default_value);
    }
    s.scheme.compression.values.set(p.key, *v);
  }
  c.finish();
}

/// The `scheme` section: the common keys, then the type's own (a key of another type is an
/// error naming that type).
void read_scheme(JsonObject& root, const json& raw, Scenario& s) {
  JsonObject sc = root.get_object("scheme");
  s.scheme.type = sc.get_choice("type", scheme_type_names());
  s.scheme.overlap = sc.get_choice("overlap", {"wfbp", "none"});
  s.scheme.fusion_bytes = sc.get_size_bytes("fusion_bytes");
  s.scheme.first_bucket_bytes = sc.get_size_bytes("first_bucket_bytes");
  const SchemeType& type = scheme_type(s.scheme.type);
  if (raw.contains("scheme") && raw["scheme"].is_object())
    for (const auto& [key, _] : raw["scheme"].items()) {
      const SchemeType* owner = scheme_type_with_option(key);
      if (owner == nullptr || type.has_option(key)) continue;
      throw InputError(
          sc.file(), sc.pointer_of(key),
          "only for scheme.type \"" + owner->name + "\", not \"" + s.scheme.type + "\"");
    }
  read_scheme_params(sc, type, s);
  read_compression(sc, type, s);
  if (type.check_options) type.check_options(sc, s);
  sc.finish();
}

}  // namespace

CollectiveGroup collective_group(const Scenario& s) {
  CollectiveGroup g = s.collective_options;
  g.ranks = s.workers;
  g.ranks_per_node = s.workers_per_node;
  g.servers = s.collective_servers;
  g.chunk_bytes = s.chunk_bytes;
  g.channels = s.collective_channels;
  return g;
}

double Scenario::tensors_in_flight_bytes() const {
  if (!collective_by_name(collective).overlaps_tensors()) return -1;
  const CollectiveGroup g = collective_group(*this);
  if (g.scheduling_credit == 0) return std::numeric_limits<double>::infinity();
  return g.scheduling_credit * byteps_partition_bound(g);
}

int Scenario::dedicated_servers() const {
  return collective_servers > 0 ? collective_servers : workers / std::max(1, workers_per_node);
}

std::vector<int> TrainingSpec::cnn_sides() const {
  std::vector<int> sides{28};
  for (size_t l = 0; l < channels.size(); ++l) sides.push_back((sides.back() - kernel + 1) / 2);
  return sides;
}

std::string TrainingSpec::layers_name() const {
  std::string name = fmt::format("{}", input_dim());
  if (model == "cnn")
    for (int c : channels) name += fmt::format("-c{}k{}", c, kernel);
  if (model != "softmax")
    for (int h : hidden) name += fmt::format("-{}", h);
  return name + fmt::format("-{}", classes());
}

nlohmann::json training_model_profile(const TrainingSpec& t) {
  json layers = json::array();
  std::vector<int> widths{t.input_dim()};
  if (t.model == "cnn") {
    const std::vector<int> sides = t.cnn_sides();
    int in_c = 1;
    for (size_t l = 0; l < t.channels.size(); ++l) {
      const int out_c = t.channels[l], conv_side = sides[l] - t.kernel + 1;
      const double flops = 2.0 * out_c * in_c * t.kernel * t.kernel * conv_side * conv_side;
      layers.push_back({{"name", fmt::format("conv{}", l + 1)},
                        {"parameters", int64_t{out_c} * (int64_t{in_c} * t.kernel * t.kernel + 1)},
                        {"forward_flops", flops},
                        {"backward_flops", 2 * flops}});
      in_c = out_c;
    }
    widths = {in_c * sides.back() * sides.back()};
  }
  if (t.model != "softmax") widths.insert(widths.end(), t.hidden.begin(), t.hidden.end());
  widths.push_back(t.classes());
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const double flops = 2.0 * widths[l] * widths[l + 1];
    layers.push_back({{"name", fmt::format("dense{}", l + 1)},
                      {"parameters", int64_t{widths[l]} * widths[l + 1] + widths[l + 1]},
                      {"forward_flops", flops},
                      {"backward_flops", 2 * flops}});
  }
  const std::string name = t.model + "-" + t.layers_name();
  return {{"name", name},
          {"source", t.model == "cnn"
                         ? "model: \"same\": derived from training.model (conv and dense layers)"
                         : "model: \"same\": derived from training.model (dense layers)"},
          {"kind", "flops"},
          {"bytes_per_parameter", 4},
          {"layers", layers}};
}

namespace {

/// Checks the workers against the generated platform and records workers.per_node.
void read_worker_layout(Scenario& s, std::optional<int> per_node, const std::string& file) {
  if (s.platform.generate) {
    const auto& gp = *s.platform.generate;
    s.workers_per_node = per_node.value_or(gp.devices_per_node);
    if (s.workers_per_node > gp.devices_per_node)
      throw InputError(file, "/workers/per_node",
                       fmt::format("expected at most {} (devices per node of the platform), got {}",
                                   gp.devices_per_node, s.workers_per_node));
    int64_t capacity = static_cast<int64_t>(gp.nodes) * s.workers_per_node;
    if (s.workers > capacity)
      throw InputError(file, "/workers/count",
                       fmt::format("expected at most {} ({} nodes x {} workers per node), got {}",
                                   capacity, gp.nodes, s.workers_per_node, s.workers));
  } else {
    s.workers_per_node = per_node.value_or(1);
  }
  s.resolved["workers"]["per_node"] = s.workers_per_node;
}

/// ECMP collisions are contention (flow fidelity only); a random placement draws nodes of a
/// generated platform.
void check_scale_mechanisms(const Scenario& s, const std::string& file) {
  const auto& gp = s.platform.generate;
  if (gp && gp->spines > 1 && s.fidelity == Fidelity::analytic)
    throw InputError(file, "/platform/generate/spines",
                     fmt::format("spines {} (ECMP hash collisions on the spine links) needs "
                                 "fidelity \"flow\": analytic fidelity times each collective "
                                 "contention-free, got fidelity \"analytic\"",
                                 gp->spines));
  if (!gp && s.placement == "random")
    throw InputError(file, "/workers/placement",
                     "expected \"block\" or \"cyclic\" with a platform file (\"random\" "
                     "draws nodes of a generated platform), got \"random\"");
}

/// Network model, gradient precision and SimGrid options.
void read_network(JsonObject& root, Scenario& s, const std::string& file) {
  s.network_model = *network_model_named(root.get_choice("network_model", network_model_names()));
  s.gradient_bytes_per_parameter = read_precision(root);
  s.simgrid_cfg = root.get_string_list("simgrid_cfg");
  for (size_t i = 0; i < s.simgrid_cfg.size(); ++i) {
    const std::string& o = s.simgrid_cfg[i];
    const size_t colon = o.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.size())
      throw InputError(file, root.pointer_of("simgrid_cfg") + "/" + std::to_string(i),
                       "expected a SimGrid option NAME:VALUE (e.g. \"network/TCP-gamma:0\"), "
                       "got \"" +
                           o + "\"");
  }
}

/// The model: a profile name or path, an inline profile, "same" (returns true: derived from
/// training.model later), or none with workload.chakra.
bool read_model(JsonObject& root, Scenario& s, const std::string& base_dir,
                const std::string& file) {
  bool model_same = false;
  if (!s.chakra_files.empty()) {
    if (root.has("model"))
      root.fail("model", "no model with workload.chakra (the ET files are the workload)");
  } else {
    if (!root.has("model"))
      root.fail("model",
                "a profile path such as \"models/profiles/resnet50.json\", a profile name such as "
                "\"resnet50\", or an inline profile object");
    const json& model = root.raw("model");
    if (model.is_string() && model.get<std::string>() == "same") {
      model_same = true;  // the profile is derived from training.model once that is parsed
      s.resolved["model"] = "same";
    } else if (model.is_string()) {
      std::string m = root.get_string("model");
      if (m.find('/') == std::string::npos && m.find(".json") == std::string::npos)
        m = "models/profiles/" + m + ".json";
      s.model_path = resolve_data_path(m, base_dir, file, "/model");
    } else if (model.is_object()) {
      s.model_inline = model;
      s.resolved["model"] = model;
    } else {
      root.fail("model", "a profile path, a profile name or an inline profile object");
    }
  }
  return model_same;
}

void read_device(JsonObject& root, Scenario& s) {
  JsonObject d = root.get_object("device");
  s.device.efficiency = d.get_number("efficiency", 0.0, 1.0, true);
  if (d.has("speed")) s.device.speed_flops = d.get_speed_flops("speed");
  s.device.io_time_per_sample_s = d.get_time_s("io_time_per_sample");
  if (d.has("memory_bandwidth"))
    s.device.memory_bandwidth_Bps = d.get_bandwidth_Bps("memory_bandwidth");
  if (d.has("optimizer")) {
    s.device.optimizer = d.get_choice("optimizer", {"sgd", "adam", "adam_amp"});
    if (s.device.memory_bandwidth_Bps <= 0)
      d.fail("memory_bandwidth",
             "a bandwidth such as \"900GBps\" (the device's memory bandwidth) with "
             "device.optimizer");
  }
  if (d.has("memory")) {
    s.device.memory_bytes = d.get_size_bytes("memory");
    if (s.device.memory_bytes <= 0) d.fail("memory", "a size > 0 such as \"80GB\"");
  }
  if (d.has("memory_overflow")) {
    s.device.memory_overflow = d.get_choice("memory_overflow", {"error", "flag"});
    if (s.device.memory_bytes <= 0)
      d.fail("memory", "a size such as \"80GB\" with memory_overflow");
  }
  if (d.has("calibrate")) {
    JsonObject c = d.get_object("calibrate");
    s.device.calibrate_iteration_time_s = c.get_time_s("iteration_time", true);
    s.device.calibrate_batch_size = static_cast<int>(c.get_int("batch_size", 1, 1 << 24));
    c.finish();
  }
  d.finish();
}

/// Batch size, iterations, warm-up and the steady-state stop.
void read_iterations(JsonObject& root, Scenario& s, const std::string& file) {
  const json& defaults = scenario_defaults();
  s.batch_size = static_cast<int>(root.get_int("batch_size", 1, 1 << 24));
  s.iterations = static_cast<int>(root.get_int("iterations", 1, 100'000'000));
  if (root.has("warmup_iterations")) {
    s.warmup_iterations = static_cast<int>(root.get_int("warmup_iterations", 0, 100'000'000));
  } else {
    // The default warm-up never exceeds what a short run can spare.
    s.warmup_iterations = std::min(defaults["warmup_iterations"].get<int>(), s.iterations - 1);
    s.resolved["warmup_iterations"] = s.warmup_iterations;
  }
  if (s.warmup_iterations >= s.iterations)
    throw InputError(file, "/warmup_iterations",
                     fmt::format("expected an integer < iterations ({}), got {}", s.iterations,
                                 s.warmup_iterations));

  s.steady_state = static_cast<int>(root.get_int("steady_state", 0, 100'000'000));
  if (s.steady_state == 1)
    throw InputError(file, "/steady_state",
                     "expected 0 (off) or an integer >= 2 (iterations of equal time that end the "
                     "run), got 1");
}

/// The minor version of `nccl_version` ("2.4", "2.18.3" or "2.18.3-1").
int nccl_minor(JsonObject& co) {
  const std::string v = co.get_string("nccl_version");
  const std::string expected =
      fmt::format("an NCCL version 2.{} to 2.{} such as \"2.4\" or \"2.18.3\"", kNcclOldestMinor,
                  kNcclNewestMinor);
  if (v.rfind("2.", 0) != 0) co.fail("nccl_version", expected);
  size_t end = 2;
  while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end]))) ++end;
  const std::string rest = v.substr(end);
  const bool tail_ok =
      rest.empty() ||
      (rest[0] == '.' && rest.find_first_not_of("0123456789.-", 1) == std::string::npos);
  if (end == 2 || end > 4 || !tail_ok) co.fail("nccl_version", expected);
  const int minor = std::stoi(v.substr(2, end - 2));
  if (minor < kNcclOldestMinor || minor > kNcclNewestMinor) co.fail("nccl_version", expected);
  return minor;
}

/// `chunk_bytes` and `channels`; with `nccl_version` their defaults are that NCCL's ring
/// chunk and channels (docs/spec-sheet.md), else 0 (messages whole) and 1.
void read_pipelining(JsonObject& co, Scenario& s) {
  if (co.has("nccl_version")) {
    const auto& gen = s.platform.generate;
    const bool nvlink =
        gen && gen->devices_per_node > 1 && is_nvlink(gen->intra_node_link.transport.technology);
    const bool multi_node = s.workers > std::max(1, s.workers_per_node);
    const NcclRingDefaults d = nccl_ring_defaults(nccl_minor(co), multi_node && nvlink);
    if (!co.has("chunk_bytes")) co.record("chunk_bytes", static_cast<int64_t>(d.chunk_bytes));
    if (!co.has("channels")) co.record("channels", d.channels);
    s.chunk_bytes = co.has("chunk_bytes") ? co.get_size_bytes("chunk_bytes") : d.chunk_bytes;
    s.collective_channels =
        co.has("channels") ? static_cast<int>(co.get_int("channels", 1, 64)) : d.channels;
    return;
  }
  s.chunk_bytes = co.get_size_bytes("chunk_bytes");
  s.collective_channels = static_cast<int>(co.get_int("channels", 1, 64));
}

void read_collective(JsonObject& root, Scenario& s) {
  JsonObject co = root.get_object("collective");
  s.collective =
      canonical_collective_name(co.get_choice("algorithm", collective_names_and_aliases()));
  s.collective_servers = static_cast<int>(co.get_int("servers", 0, 1 << 24));
  if (co.has("reduction_speed")) s.reduction_Bps = co.get_bandwidth_Bps("reduction_speed");
  read_pipelining(co, s);
  // Pipelining multiplies messages (SimGrid 3.32 slows with many in flight); NCCL's chunks
  // range from 32 KiB (trees on small messages) to 2 MiB (rings), so below 1 KiB is a mistake.
  if (s.chunk_bytes != 0 && s.chunk_bytes < 1024) co.fail("chunk_bytes", "0 or at least 1 KiB");
  read_collective_params(co, s);
  check_collective(co, s);
  co.finish();
}

void read_variability(JsonObject& root, Scenario& s, const std::string& file) {
  JsonObject v = root.get_object("variability");
  s.variability.compute_jitter_cv = v.get_number("compute_jitter", 0.0, 10.0);
  s.variability.jitter_distribution =
      v.get_choice("jitter_distribution", {"lognormal", "normal", "uniform"});
  if (s.variability.jitter_distribution == "uniform" &&
      s.variability.compute_jitter_cv > 1 / std::sqrt(3.0))
    throw InputError(
        file, "/variability/compute_jitter",
        fmt::format("expected at most {:.4f} for a uniform jitter (factors stay > 0), got {}",
                    1 / std::sqrt(3.0), s.variability.compute_jitter_cv));
  s.variability.link_noise_cv = v.get_number("link_noise", 0.0, 10.0);
  JsonObject st = v.get_object("stragglers");
  s.variability.straggler_fraction = st.get_number("fraction", 0.0, 1.0);
  s.variability.straggler_slowdown = st.get_number("slowdown", 1.0, 1e6);
  s.variability.straggler_redraw = st.get_bool("redraw");
  st.finish();
  v.finish();
}

/// training.model: the proxy network's type and layers.
void read_training_model(JsonObject& t, Scenario& s) {
  const json& defaults = scenario_defaults();
  TrainingSpec& tr = s.training;
  JsonObject m = t.get_object("model");
  tr.model = m.get_choice("type", {"mlp", "softmax", "cnn"});
  // An array of integers in [1, max] (its default when absent), recorded as resolved.
  auto int_array = [&](const std::string& key, const json& fallback, int64_t max, size_t most,
                       const std::string& expected) {
    const json& v = m.has(key) ? m.raw(key) : fallback;
    bool ok = v.is_array() && v.size() <= most;
    for (const auto& x : v)
      ok = ok && x.is_number_integer() && x.get<int64_t>() >= 1 && x.get<int64_t>() <= max;
    if (!ok) m.fail(key, expected);
    std::vector<int> out;
    for (const auto& x : v) out.push_back(x.get<int>());
    s.resolved["training"]["model"][key] = v;
    return out;
  };
  if (tr.model == "mlp")
    tr.hidden = int_array("hidden", defaults.at(json::json_pointer("/training/model/hidden")),
                          65536, 64, "an array of layer widths >= 1 such as [256, 128]");
  if (tr.model == "cnn") {
    const std::string expected =
        "an array of 1 to 3 conv channel counts in [1, 256] such as [8, 16]";
    tr.channels = int_array("channels", json::array({8, 16}), 256, 3, expected);
    if (tr.channels.empty()) m.fail("channels", expected);
    tr.kernel = static_cast<int>(m.has("kernel") ? m.get_int("kernel", 1, 9) : 5);
    s.resolved["training"]["model"]["kernel"] = tr.kernel;
    tr.hidden = int_array("hidden", json::array({64}), 65536, 64,
                          "an array of layer widths >= 1 such as [64]");
    // 28x28 images: each conv (valid, stride 1) and 2x2 pool must leave at least one pixel.
    const std::vector<int> sides = tr.cnn_sides();
    for (size_t l = 0; l < tr.channels.size(); ++l)
      if (sides[l] < tr.kernel + 1)
        m.fail("channels", fmt::format("at most {} conv layers with kernel {} (conv layer {} "
                                       "would get {}x{} inputs from 28x28 images)",
                                       l, tr.kernel, l + 1, sides[l], sides[l]));
  }
  m.finish();
}

/// The training section: the math run alongside the simulation.
void read_training(JsonObject& root, Scenario& s, const std::string& file) {
  JsonObject t = root.get_object("training");
  TrainingSpec& tr = s.training;
  tr.enabled = true;
  read_training_model(t, s);
  tr.dataset = t.get_choice("dataset", {"fashion-mnist", "synthetic"});
  if (tr.model == "cnn" && tr.dataset != "fashion-mnist")
    throw InputError(file, "/training/model/type",
                     "expected mlp or softmax with dataset \"synthetic\" (cnn needs the 28x28 "
                     "images of fashion-mnist), got \"cnn\"");
  tr.learning_rate = t.get_number("learning_rate", 0.0, 100.0, true);
  tr.momentum = t.get_number("momentum", 0.0, 0.9999);
  tr.weight_decay = t.get_number("weight_decay", 0.0, 1.0);
  tr.eval_every = static_cast<int>(t.get_int("eval_every", 1, 1 << 24));
  if (t.has("target_accuracy"))
    tr.target_accuracy = t.get_number("target_accuracy", 0.0, 1.0, true);
  // Every registered predictor's options, whichever predictor runs (a resolved scenario lists
  // them all, as it lists every algorithm's collective options).
  for (const learn::DeclaredPredictorParam& d : learn::predictor_params())
    tr.predictor_values.set(d.param.key, read_param(t, d.param));
  tr.shards = t.get_choice("shards", {"iid", "by_label"});
  JsonObject lr = t.get_object("lr_schedule");
  tr.lr_schedule = lr.get_choice("type", {"constant", "step", "warmup"});
  if (tr.lr_schedule == "step") {
    tr.lr_step_every = static_cast<int>(lr.get_int("every", 1, 1 << 24));
    tr.lr_step_factor = lr.get_number("factor", 0.0, 1.0, true);
  }
  if (tr.lr_schedule == "warmup")
    tr.warmup_iterations = static_cast<int>(lr.get_int("iterations", 1, 1 << 24));
  lr.finish();
  JsonObject syn = t.get_object("synthetic");
  tr.synthetic_dimension = static_cast<int>(syn.get_int("dimension", 1, 4096));
  tr.synthetic_overlap = syn.get_number("overlap", 0.0, 100.0);
  tr.synthetic_label_noise = syn.get_number("label_noise", 0.0, 1.0);
  syn.finish();
  t.finish();
}

}  // namespace

namespace {

constexpr const char* kSafeName =
    "a file name: no \"/\", no control character, not \".\" or \"..\", at most 255 bytes";

/// Whether `name` can be a folder inside results/ without leaving it or breaking a listing.
bool safe_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (unsigned char c : name)
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

Scenario parse_scenario(const json& raw, const std::string& file) {
  Scenario s;
  s.source_file = file;
  const json& defaults = scenario_defaults();
  s.resolved = json::object();
  JsonObject root(raw, file, "", &defaults, &s.resolved);
  std::string base_dir = fs::path(file).parent_path().string();
  if (base_dir.empty()) base_dir = ".";

  s.name = root.get_string("name", true);
  if (!s.name.empty() && !safe_file_name(s.name))
    root.fail("name", kSafeName);  // it names the default output folder results/<name>
  if (s.name.empty()) {
    s.name = fs::path(file).stem().string();
    if (!safe_file_name(s.name))
      throw InputError(file, "/name",
                       std::string("no \"name\", and the file's name \"") + s.name +
                           "\" is no safe folder name: give a \"name\" (" + kSafeName + ")");
    s.resolved["name"] = s.name;
  }
  s.description = root.get_string("description", true);
  s.seed = static_cast<uint64_t>(root.get_int("seed", 0));

  // Workers first: the generated platform's defaults derive from them.
  JsonObject w = root.get_object("workers");
  s.workers = static_cast<int>(w.get_int("count", 1, 1 << 24));
  std::optional<int> per_node;
  if (w.has("per_node")) per_node = static_cast<int>(w.get_int("per_node", 1, 1 << 20));
  s.placement = w.get_choice("placement", {"block", "cyclic", "random"});
  w.finish();

  // Dedicated servers need hosts of their own: size a generated platform for them.
  const int extra_hosts = raw_scheme_extra_hosts(raw);
  const int dedicated_nodes = raw_collective_server_nodes(raw);
  read_platform(root, s, base_dir, s.workers + extra_hosts, per_node, dedicated_nodes);
  read_worker_layout(s, per_node, file);
  read_network(root, s, file);
  read_workload_field(root, s, base_dir);
  const bool model_same = read_model(root, s, base_dir, file);
  read_device(root, s);
  read_iterations(root, s, file);
  read_scheme(root, raw, s);
  read_collective(root, s);
  s.fidelity = *fidelity_named(root.get_choice("fidelity", fidelity_names()));
  s.flow_symmetry = *flow_symmetry_named(root.get_choice("flow_symmetry", flow_symmetry_names()));
  check_scale_mechanisms(s, file);
  read_variability(root, s, file);
  if (root.has("training")) read_training(root, s, file);
  if (model_same) {
    if (!s.training.enabled)
      root.fail("model",
                "a profile (\"same\" needs a training section: it times the trained model)");
    s.model_inline = training_model_profile(s.training);
  }
  JsonObject out = root.get_object("output");
  s.output_timeline = out.get_bool("timeline");
  out.finish();
  root.finish();
  return s;
}

double TrainingSpec::learning_rate_at(int iteration, int workers) const {
  if (lr_schedule == "step")
    return learning_rate * detmath::pow_int(lr_step_factor, iteration / lr_step_every);
  if (lr_schedule == "warmup") {
    // Goyal et al.: the target rate scales with the workers; reach it linearly.
    const double target = learning_rate * workers;
    const double f = std::min(1.0, static_cast<double>(iteration) / warmup_iterations);
    return learning_rate + (target - learning_rate) * f;
  }
  return learning_rate;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  json raw = parse_json_file(file);
  if (!raw.is_object())
    throw InputError(file, "/", "expected a JSON object, got " + show_value(raw));
  for (const auto& o : overrides) apply_override(raw, o);
  return parse_scenario(raw, file);
}

}  // namespace sgdsim
