#include "sim/scenario/platform_field.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/node_field.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

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
void read_sockets(JsonObject& o, LinkSpec& l, std::optional<SocketSpec>* sockets) {
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
  SocketSpec spec{socket_defaults(so.get_choice("library", socket_library_names())), goodput_Bps,
                  l.transport.stream_bandwidth_Bps, so.has("channels")};
  SocketParams& p = spec.params;
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
  l.transport.stream_bandwidth_Bps = socket_stream_cap_Bps(spec);
  l.transport.connection_per_pair = one_connection_per_pair(p);
  *sockets = spec;
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
/// link, between nodes: `sockets` non-null, where its sockets go.
LinkSpec read_link(JsonObject o, std::optional<SocketSpec>* sockets = nullptr) {
  const bool node_link = sockets != nullptr;
  LinkSpec l;
  l.bandwidth_Bps = o.get_bandwidth_Bps("bandwidth");
  l.transport = read_transport(o);
  l.latency_s = node_link && o.has("end_to_end_latency") ? latency_from_end_to_end(o, l.transport)
                                                         : o.get_time_s("latency");
  if (node_link) read_sockets(o, l, sockets);
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

/// `node`: a preset name, {"preset", "p2p", "gdr"} or a board description; its host path sets
/// the intra-node link's bandwidth (the ring's slowest hop) and caps the node link's (the NICs'
/// host path).
void read_node(JsonObject& g, GeneratedPlatform& gp) {
  if (!g.has("node")) return;
  const json& v = g.raw("node");
  if (g.has("intra_node_link") && g.raw("intra_node_link").is_object() &&
      g.raw("intra_node_link").contains("bandwidth"))
    throw InputError(g.file(), g.pointer_of("intra_node_link") + "/bandwidth",
                     "no bandwidth with \"node\" (the node's host path sets it)");
  const NodeDescription n = read_node_description(v, g.file(), g.pointer_of("node"));
  if (gp.devices_per_node > static_cast<int>(n.gpus.size()))
    throw InputError(g.file(), g.pointer_of("devices_per_node"),
                     fmt::format("expected at most {} (the GPUs of node \"{}\"), got {}",
                                 n.gpus.size(), n.name, gp.devices_per_node));
  if (gp.devices_per_node > 1) {
    // An achievable DMA rate: the link technology's framing efficiency is already in it.
    const HostPath ring = intra_node_ring_path(n, gp.devices_per_node);
    gp.intra_node_link.bandwidth_Bps = ring.rate_Bps;
    gp.intra_node_link.transport.efficiency = 1;
    gp.intra_ring_nvlink = ring.transport == HostTransport::p2p_nvlink;
    gp.intra_nvls_Bps = nvls_link_Bps(n, ring);
  }
  if (g.has("node_link") && g.raw("node_link").is_object() &&
      g.raw("node_link").contains("bandwidth"))
    check_within_nic_line_rate(gp.node_link.bandwidth_Bps, n, g.file(),
                               g.pointer_of("node_link") + "/bandwidth");
  gp.node_link.bandwidth_Bps =
      std::min(gp.node_link.bandwidth_Bps, nic_path(n, gp.devices_per_node).rate_Bps);
  // The resolved scenario keeps the preset, not the defaults it replaces (a sweep reruns it).
  g.record("node", v);
  g.unrecord("intra_node_link/bandwidth");
  g.unrecord("intra_node_link/efficiency");
}

}  // namespace

void read_platform_field(JsonObject& root, Scenario& s, const std::string& base_dir, int workers,
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
  gp.node_link = read_link(g.get_object("node_link"), &gp.node_sockets);
  gp.intra_node_link = read_link(g.get_object("intra_node_link"));
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

}  // namespace sgdsim
