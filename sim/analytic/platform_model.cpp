#include "sim/analytic/platform_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {

namespace {
/// A full-duplex link carrying its transport as properties (read back by the engine through
/// read_link_properties, the writer's counterpart in transport.cpp).
std::string link_xml(const std::string& id, double bw, double lat, const TransportParams& t) {
  return fmt::format(
      "<link id=\"{}\" bandwidth=\"{}\" latency=\"{}\" sharing_policy=\"SPLITDUPLEX\">{}</link>\n",
      id, units::format_bandwidth_Bps(bw), units::format_time_s(lat), link_properties_xml(t));
}
std::string ctn(const std::string& id, bool up) {
  return fmt::format("<link_ctn id=\"{}\" direction=\"{}\"/>", id, up ? "UP" : "DOWN");
}
}  // namespace

PlatformModel::PlatformModel(GeneratedPlatform spec) : spec_(std::move(spec)) {
  if (spec_.topology == Topology::star) spec_.nodes_per_leaf = spec_.nodes;
  spec_.nodes_per_leaf = std::max(1, std::min(spec_.nodes_per_leaf, spec_.nodes));
}

std::string PlatformModel::host_name(int index) const {
  int node = index / spec_.devices_per_node;
  int dev = index % spec_.devices_per_node;
  return spec_.devices_per_node == 1 ? fmt::format("node-{}", node)
                                     : fmt::format("node-{}-dev-{}", node, dev);
}

double PlatformModel::uplink_bandwidth_Bps() const {
  return spec_.node_link.bandwidth_Bps * spec_.nodes_per_leaf / spec_.oversubscription;
}

bool PlatformModel::ecmp() const {
  return spec_.topology == Topology::fat_tree && spec_.spines > 1 &&
         spec_.nodes > spec_.nodes_per_leaf;
}

int PlatformModel::spine_of(int from, int to) const {
  if (leaf_of(from) == leaf_of(to)) return -1;
  return ecmp() ? ecmp_spine(spec_.ecmp_seed, from, to, spec_.spines) : 0;
}

namespace {
/// SplitMix64's finalizer: every input bit flips about half the output bits.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

int ecmp_spine(uint64_t seed, int host_a, int host_b, int spines) {
  const auto lo = static_cast<uint64_t>(std::min(host_a, host_b));
  const auto hi = static_cast<uint64_t>(std::max(host_a, host_b));
  // A switch's hash of the flow's fields, seeded: one mixing round per field.
  uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ULL);
  z = mix64(z ^ (lo * 0xD6E8FEB86659FD93ULL));
  z = mix64(z ^ (hi * 0xA0761D6478BD642FULL));
  return static_cast<int>(z % static_cast<uint64_t>(spines));
}

int ecmp_connection_spine(uint64_t seed, int from, int to, int connection, int spines) {
  // The ordered pair and the connection (its source port): one mixing round per field, on a
  // stream apart from the per-pair hash's.
  uint64_t z = mix64(seed + 0x632BE59BD9B4E019ULL);
  z = mix64(z ^ (static_cast<uint64_t>(from) * 0xD6E8FEB86659FD93ULL));
  z = mix64(z ^ (static_cast<uint64_t>(to) * 0xA0761D6478BD642FULL));
  z = mix64(z ^ (static_cast<uint64_t>(connection) * 0xE7037ED1A0B428DBULL));
  return static_cast<int>(z % static_cast<uint64_t>(spines));
}

std::vector<int> ecmp_connection_counts(uint64_t seed, int from, int to, int connections,
                                        int spines) {
  std::vector<int> counts(static_cast<size_t>(spines), 0);
  for (int c = 0; c < connections; ++c)
    ++counts[static_cast<size_t>(ecmp_connection_spine(seed, from, to, c, spines))];
  return counts;
}

RouteCost PlatformModel::route(int from, int to) const {
  if (is_simgrid_cluster(spec_.topology))
    throw std::invalid_argument("no analytic route model for topology " +
                                topology_name(spec_.topology));
  RouteCost c{0, 1e300, {}};
  if (from == to) return c;
  std::vector<const TransportParams*> transports;
  std::vector<double> bandwidths;
  auto add = [&](const LinkSpec& l) {
    c.latency_s += l.latency_s;
    c.bandwidth_Bps = std::min(c.bandwidth_Bps, l.bandwidth_Bps);
    transports.push_back(&l.transport);
    bandwidths.push_back(l.bandwidth_Bps);
  };
  auto done = [&] {
    c.transport = combine_route(transports, bandwidths, c.latency_s);
    return c;
  };
  const int dpn = spec_.devices_per_node;
  const int node_a = from / dpn, node_b = to / dpn;
  if (dpn > 1) {
    add(spec_.intra_node_link);
    add(spec_.intra_node_link);
  }
  if (node_a == node_b) return done();
  add(spec_.node_link);
  add(spec_.node_link);
  const LinkSpec stream{spec_.node_link.transport.stream_bandwidth_Bps, 0.0, TransportParams{}};
  if (stream.bandwidth_Bps > 0) {
    add(stream);
    add(stream);
  }
  const LinkSpec up{spine_link_bandwidth_Bps(), spec_.node_link.latency_s,
                    spec_.node_link.transport};
  if (node_a / spec_.nodes_per_leaf != node_b / spec_.nodes_per_leaf) {
    add(up);
    add(up);
  }
  return done();
}

namespace {

/// Writes a generated platform's XML, one part per method.
class PlatformXml {
 public:
  PlatformXml(const PlatformModel& pm, bool routes_only, int ghost_nodes = 0,
              bool first_leaf_only = false)
      : routes_only_(routes_only),
        pm_(pm),
        ghost_nodes_(ghost_nodes),
        first_leaf_only_(first_leaf_only),
        s_(pm.spec()),
        dpn_(s_.devices_per_node),
        leaves_((s_.nodes + s_.nodes_per_leaf - 1) / s_.nodes_per_leaf),
        tree_(leaves_ > 1),
        // A pair's channels run at once, each a message through this link: each gets its share
        // (on one connection per pair they go in order instead, each at the whole limit).
        stream_Bps_(s_.node_link.transport.stream_bandwidth_Bps /
                    (s_.node_link.transport.connection_per_pair
                         ? 1
                         : std::max(1, s_.stream_sharing_messages))) {}

  std::string xml() const {
    const std::string out = header();
    if (is_simgrid_cluster(s_.topology)) return out + cluster_topology();
    if (s_.topology == Topology::star && dpn_ == 1 && stream_Bps_ <= 0)
      // A star of single-device nodes is SimGrid's flat cluster: private links, no backbone.
      // Asked for routes only, each node's private link is one SHARED link, not a SPLITDUPLEX
      // pair: a route crosses the same bandwidths and latencies (the sender's link, then the
      // receiver's), and SimGrid builds half the links (262,144 nodes: about 1 s, 240 MB less).
      return out +
             fmt::format(
                 "<!-- SimGrid cluster links carry no properties: they are {} links (as a "
                 "file, give the scenario \"platform\": {{\"technology\": \"{}\"}}) -->\n",
                 s_.node_link.transport.technology, s_.node_link.transport.technology) +
             "<cluster id=\"star\" " + cluster_attrs(routes_only_ ? "SHARED" : "SPLITDUPLEX") +
             "/>\n</platform>\n";
    if (!tree_)
      return out + "<zone id=\"world\" routing=\"Full\">\n" + leaf_body(0, "  ", ghost_zone()) +
             ghost_route() + "</zone>\n</platform>\n";
    if (pm_.ecmp()) return out + ecmp_fabric() + "</platform>\n";
    return out + fat_tree() + "</platform>\n";
  }

 private:
  std::string header() const {
    return fmt::format(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<!-- Generated by sgdsim: topology={} nodes={} devices_per_node={} node_link={}/{} "
        "intra_node_link={}/{} device_speed={}{} -->\n<platform version=\"4.1\">\n",
        topology_name(s_.topology), s_.nodes, dpn_,
        units::format_bandwidth_Bps(s_.node_link.bandwidth_Bps),
        units::format_time_s(s_.node_link.latency_s),
        units::format_bandwidth_Bps(s_.intra_node_link.bandwidth_Bps),
        units::format_time_s(s_.intra_node_link.latency_s),
        units::format_speed_flops(s_.device_speed_flops),
        tree_ ? fmt::format(" nodes_per_leaf={} oversubscription={}", s_.nodes_per_leaf,
                            s_.oversubscription) +
                    (pm_.ecmp() ? fmt::format(" spines={} ecmp_seed={}", s_.spines, s_.ecmp_seed)
                                : "")
              : "");
  }

  /// A device host's speed attribute: its speed, and with device.overlap_slowdown a second
  /// pstate at speed / (1 + slowdown), the one the runners switch to while a collective runs.
  std::string speed() const {
    const double flops = s_.device_speed_flops;
    if (s_.overlap_slowdown <= 0) return units::format_speed_flops(flops);
    return units::format_speed_flops(flops) + "," +
           units::format_speed_flops(flops / (1 + s_.overlap_slowdown));
  }

  std::string cluster_attrs(const char* sharing_policy = "SPLITDUPLEX") const {
    return fmt::format(
        "prefix=\"node-\" suffix=\"\" radical=\"0-{}\" speed=\"{}\" bw=\"{}\" lat=\"{}\" "
        "sharing_policy=\"{}\"",
        s_.nodes - 1, speed(), units::format_bandwidth_Bps(s_.node_link.bandwidth_Bps),
        units::format_time_s(s_.node_link.latency_s), sharing_policy);
  }

  /// SimGrid's own cluster topologies: one host per node, routing computed by SimGrid.
  std::string cluster_topology() const {
    std::string params;
    if (s_.topology == Topology::torus) {
      for (size_t i = 0; i < s_.torus_dims.size(); ++i) {
        if (i > 0) params += ',';
        params += std::to_string(s_.torus_dims[i]);
      }
    } else {
      const auto& d = s_.dragonfly;
      params = fmt::format("{},{};{},{};{},{};{}", d[0], d[4], d[1], d[5], d[2], d[6], d[3]);
    }
    return fmt::format("<cluster id=\"{}\" topology=\"{}\" topo_parameters=\"{}\" {}/>\n",
                       topology_name(s_.topology),
                       s_.topology == Topology::torus ? "TORUS" : "DRAGONFLY", params,
                       cluster_attrs()) +
           "</platform>\n";
  }

  /// A node's messages leave through its NIC link and, with a per-stream limit, a FATPIPE
  /// link (each message capped at the stream goodput, none shared) on the node's side.
  std::string nic(int node, bool up) const {
    const std::string stream =
        stream_Bps_ > 0 ? fmt::format("<link_ctn id=\"node-{}-stream\"/>", node) : "";
    const std::string link = ctn(fmt::format("node-{}-link", node), up);
    return up ? link + stream : stream + link;
  }

  std::string gateway(int node) const {
    return dpn_ == 1 ? pm_.host_name(node) : fmt::format("node-{}-nic", node);
  }

  /// A node is a zone: its devices reach the node's NIC router over the intra-node link.
  std::string node_zone(int node, const std::string& indent) const {
    std::string z = fmt::format("{}<zone id=\"node-{}-zone\" routing=\"Full\">\n", indent, node);
    for (int d = 0; d < dpn_; ++d)
      z += fmt::format("{}  <host id=\"{}\" speed=\"{}\"/>\n", indent,
                       pm_.host_name(node * dpn_ + d), speed());
    if (dpn_ > 1) z += node_links(node, indent);
    return z + indent + "</zone>\n";
  }

  std::string node_links(int node, const std::string& indent) const {
    std::string z = fmt::format("{}  <router id=\"{}\"/>\n", indent, gateway(node));
    auto dev_link = [&](int d) { return fmt::format("node-{}-dev-{}-link", node, d); };
    for (int d = 0; d < dpn_; ++d)
      z += indent + "  " +
           link_xml(dev_link(d), s_.intra_node_link.bandwidth_Bps, s_.intra_node_link.latency_s,
                    s_.intra_node_link.transport);
    for (int d = 0; d < dpn_; ++d)
      z += fmt::format("{}  <route src=\"{}\" dst=\"{}\">{}</route>\n", indent,
                       pm_.host_name(node * dpn_ + d), gateway(node), ctn(dev_link(d), true));
    for (int a = 0; a < dpn_; ++a)
      for (int b = a + 1; b < dpn_; ++b)
        z += fmt::format("{}  <route src=\"{}\" dst=\"{}\">{}{}</route>\n", indent,
                         pm_.host_name(node * dpn_ + a), pm_.host_name(node * dpn_ + b),
                         ctn(dev_link(a), true), ctn(dev_link(b), false));
    return z;
  }

  /// A leaf groups nodes around one switch; every node has its own full-duplex link.
  /// `before_routes` goes between the leaf's links and its routes (SimGrid's DTD: zones and
  /// links first).
  std::string leaf_body(int leaf, const std::string& indent,
                        const std::string& before_routes = "") const {
    const int lo = leaf * s_.nodes_per_leaf, hi = std::min(s_.nodes, lo + s_.nodes_per_leaf);
    std::string z;
    for (int n = lo; n < hi; ++n) z += node_zone(n, indent);
    if (tree_)
      z += fmt::format(
          "{}<zone id=\"leaf-{}-switch\" routing=\"Full\">\n{}  <router "
          "id=\"leaf-{}\"/>\n{}</zone>\n",
          indent, leaf, indent, leaf, indent);
    for (int n = lo; n < hi; ++n) {
      z += indent + link_xml(fmt::format("node-{}-link", n), s_.node_link.bandwidth_Bps,
                             s_.node_link.latency_s, s_.node_link.transport);
      if (stream_Bps_ > 0)
        z += fmt::format(
            "{}<link id=\"node-{}-stream\" bandwidth=\"{}\" latency=\"0s\" "
            "sharing_policy=\"FATPIPE\"><prop id=\"technology\" value=\"custom\"/></link>\n",
            indent, n, units::format_bandwidth_Bps(stream_Bps_));
    }
    return z + before_routes + leaf_routes(leaf, lo, hi, indent);
  }

  std::string leaf_routes(int leaf, int lo, int hi, const std::string& indent) const {
    std::string z;
    for (int a = lo; a < hi; ++a)
      for (int b = a + 1; b < hi; ++b)
        z += fmt::format(
            "{}<zoneRoute src=\"node-{}-zone\" dst=\"node-{}-zone\" gw_src=\"{}\" "
            "gw_dst=\"{}\">{}{}</zoneRoute>\n",
            indent, a, b, gateway(a), gateway(b), nic(a, true), nic(b, false));
    if (tree_)
      for (int n = lo; n < hi; ++n)
        z += fmt::format(
            "{}<zoneRoute src=\"node-{}-zone\" dst=\"leaf-{}-switch\" gw_src=\"{}\" "
            "gw_dst=\"leaf-{}\">{}</zoneRoute>\n",
            indent, n, leaf, gateway(n), leaf, nic(n, true));
    return z;
  }

  /// Leaves hang off one core; a leaf uplink carries nodes_per_leaf node links divided by
  /// the oversubscription (a fluid stand-in for the spine layer's parallel links).
  std::string fat_tree() const {
    if (first_leaf_only_) return first_leaf_tree();
    std::string out = "<zone id=\"world\" routing=\"Full\">\n";
    for (int l = 0; l < leaves_; ++l) {
      out += fmt::format("  <zone id=\"leaf-{}-zone\" routing=\"Full\">\n", l);
      out += leaf_body(l, "    ");
      out += "  </zone>\n";
    }
    for (int l = 0; l < leaves_; ++l)
      out += "  " + link_xml(fmt::format("leaf-{}-uplink", l), pm_.uplink_bandwidth_Bps(),
                             s_.node_link.latency_s, s_.node_link.transport);
    out += ghost_zone();
    for (int a = 0; a < leaves_; ++a)
      for (int b = a + 1; b < leaves_; ++b)
        out += fmt::format(
            "  <zoneRoute src=\"leaf-{}-zone\" dst=\"leaf-{}-zone\" gw_src=\"leaf-{}\" "
            "gw_dst=\"leaf-{}\">{}{}</zoneRoute>\n",
            a, b, a, b, ctn(fmt::format("leaf-{}-uplink", a), true),
            ctn(fmt::format("leaf-{}-uplink", b), false));
    return out + ghost_route() + "</zone>\n";
  }

  /// The fat tree as the first leaf and its ghosts see it: that leaf, its uplink, the ghosts,
  /// and the other leaves' hosts in a zone without links or routes (their compute follows the
  /// first leaf's; nothing is sent from or to them).
  std::string first_leaf_tree() const {
    std::string out =
        "<zone id=\"world\" routing=\"Full\">\n  <zone id=\"leaf-0-zone\" routing=\"Full\">\n";
    out += leaf_body(0, "    ") + "  </zone>\n  <zone id=\"other-leaves\" routing=\"None\">\n";
    for (int h = s_.nodes_per_leaf * dpn_; h < pm_.num_hosts(); ++h)
      out += fmt::format("    <host id=\"{}\" speed=\"{}\"/>\n", pm_.host_name(h), speed());
    out += "  </zone>\n  " + link_xml("leaf-0-uplink", pm_.uplink_bandwidth_Bps(),
                                      s_.node_link.latency_s, s_.node_link.transport);
    return out + ghost_zone() + ghost_route() + "</zone>\n";
  }

  /// Ghost receivers (PlatformModel::xml_with_ghosts), none without a block: a zone of their
  /// own in the world zone, reached from the first block's zone over its way out (the first
  /// node's NIC on a star, the first leaf's uplink on a fat tree) and back in (the same
  /// uplink's other direction: the image of the receiving leaf's), then the receiving node's
  /// (stream and NIC) and device's links of the first block. Every link counts: LV08 weighs a
  /// flow's share by weight-S / bandwidth summed over its route's links.
  std::string ghost_zone() const {
    if (ghost_nodes_ <= 0) return "";
    const int m = ghost_nodes_ * dpn_;
    std::string z = "  <zone id=\"ghosts\" routing=\"Full\">\n    <router id=\"ghost-router\"/>\n";
    for (int j = 0; j < m; ++j)
      z += fmt::format("    <host id=\"{}\" speed=\"{}\"/>\n", PlatformModel::ghost_host_name(j),
                       speed());
    for (int j = 0; j < m; ++j) {
      const int node = j / dpn_;
      std::string links = nic(node, false);
      if (dpn_ > 1) links += ctn(fmt::format("node-{}-dev-{}-link", node, j % dpn_), false);
      z += fmt::format("    <route src=\"ghost-router\" dst=\"{}\">{}</route>\n",
                       PlatformModel::ghost_host_name(j), links);
    }
    return z + "  </zone>\n";
  }

  /// The route from the first block's zone to the ghosts' (after the world zone's links).
  std::string ghost_route() const {
    if (ghost_nodes_ <= 0) return "";
    if (tree_)
      return fmt::format(
          "  <zoneRoute src=\"leaf-0-zone\" dst=\"ghosts\" gw_src=\"leaf-0\" "
          "gw_dst=\"ghost-router\">{}{}</zoneRoute>\n",
          ctn("leaf-0-uplink", true), ctn("leaf-0-uplink", false));
    return fmt::format(
        "  <zoneRoute src=\"node-0-zone\" dst=\"ghosts\" gw_src=\"{}\" "
        "gw_dst=\"ghost-router\">{}</zoneRoute>\n",
        gateway(0), nic(0, true));
  }

  /// Leaves under `spines` spine switches, one zone of hosts with a route per pair of hosts:
  /// SimGrid's Full routing is per pair of netpoints, so ECMP can pick a spine per host pair
  /// only when the hosts themselves are the netpoints. A pair's messages all take one spine,
  /// both ways (per host pair), unless `ecmp_connections` hashes connections (connection_route).
  std::string ecmp_fabric() const {
    std::string out = "<zone id=\"world\" routing=\"Full\">\n";
    const int hosts = pm_.num_hosts();
    for (int h = 0; h < hosts; ++h)
      out += fmt::format("  <host id=\"{}\" speed=\"{}\"/>\n", pm_.host_name(h), speed());
    if (dpn_ > 1)
      for (int h = 0; h < hosts; ++h)
        out += "  " + link_xml(host_dev_link(h), s_.intra_node_link.bandwidth_Bps,
                               s_.intra_node_link.latency_s, s_.intra_node_link.transport);
    for (int n = 0; n < s_.nodes; ++n) {
      out += "  " + link_xml(fmt::format("node-{}-link", n), s_.node_link.bandwidth_Bps,
                             s_.node_link.latency_s, s_.node_link.transport);
      if (stream_Bps_ > 0)
        out += fmt::format(
            "  <link id=\"node-{}-stream\" bandwidth=\"{}\" latency=\"0s\" "
            "sharing_policy=\"FATPIPE\"><prop id=\"technology\" value=\"custom\"/></link>\n",
            n, units::format_bandwidth_Bps(stream_Bps_));
    }
    // Per connection: a spine link is listed once per connection of a route hashed onto it,
    // so it carries N x its rate (N connections of the same rate) and 1/N of its latency.
    const int conns = std::max(1, s_.ecmp_connections);
    for (int l = 0; l < leaves_; ++l)
      for (int k = 0; k < s_.spines; ++k)
        out += "  " + link_xml(spine_link(l, k), pm_.spine_link_bandwidth_Bps() * conns,
                               s_.node_link.latency_s / conns, s_.node_link.transport);
    for (int a = 0; a < hosts; ++a)
      for (int b = a + 1; b < hosts; ++b) {
        if (s_.ecmp_connections > 0 && pm_.spine_of(a, b) >= 0) {
          out += connection_route(a, b) + connection_route(b, a);
          continue;
        }
        const int na = a / dpn_, nb = b / dpn_;
        std::string links = dpn_ > 1 ? ctn(host_dev_link(a), true) : "";
        if (na != nb) {
          links += nic(na, true);
          if (const int k = pm_.spine_of(a, b); k >= 0)
            links += ctn(spine_link(pm_.leaf_of(a), k), true) +
                     ctn(spine_link(pm_.leaf_of(b), k), false);
          links += nic(nb, false);
        }
        if (dpn_ > 1) links += ctn(host_dev_link(b), false);
        out += fmt::format("  <route src=\"{}\" dst=\"{}\">{}</route>\n", pm_.host_name(a),
                           pm_.host_name(b), links);
      }
    return out + "</zone>\n";
  }

  /// The route from `from` to `to` (under different leaves) with per-connection hashing: each
  /// spine link as often as connections hash onto it. SimGrid's max-min sharing then gives the
  /// pair's flow N x the rate of its slowest connection, as NCCL's equal split over its sockets
  /// does (NVIDIA/nccl-tests#83: "the minimum speed of the sockets multiplied by the number of
  /// sockets"); one direction only (a connection's 5-tuple is hashed from its sender's side).
  std::string connection_route(int from, int to) const {
    const std::vector<int> counts =
        ecmp_connection_counts(s_.ecmp_seed, from, to, s_.ecmp_connections, s_.spines);
    std::string links = dpn_ > 1 ? ctn(host_dev_link(from), true) : "";
    links += nic(from / dpn_, true);
    for (int side = 0; side < 2; ++side)
      for (int k = 0; k < s_.spines; ++k)
        for (int c = 0; c < counts[static_cast<size_t>(k)]; ++c)
          links += side == 0 ? ctn(spine_link(pm_.leaf_of(from), k), true)
                             : ctn(spine_link(pm_.leaf_of(to), k), false);
    links += nic(to / dpn_, false);
    if (dpn_ > 1) links += ctn(host_dev_link(to), false);
    return fmt::format("  <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">{}</route>\n",
                       pm_.host_name(from), pm_.host_name(to), links);
  }

  std::string host_dev_link(int h) const {
    return fmt::format("node-{}-dev-{}-link", h / dpn_, h % dpn_);
  }
  static std::string spine_link(int leaf, int spine) {
    return fmt::format("leaf-{}-spine-{}-link", leaf, spine);
  }

  bool routes_only_;  // for a run that asks SimGrid for route costs only
  const PlatformModel& pm_;
  int ghost_nodes_;       // nodes in a block of the rotation symmetry (ghost receivers); 0: none
  bool first_leaf_only_;  // fat tree: the first leaf only, the others' hosts without routes
  const GeneratedPlatform& s_;
  int dpn_, leaves_;
  bool tree_;
  double stream_Bps_;
};

}  // namespace

std::string PlatformModel::xml(bool routes_only) const {
  return PlatformXml(*this, routes_only).xml();
}

int PlatformModel::rotation_block_nodes() const {
  if (spec_.topology == Topology::star) return spec_.devices_per_node > 1 ? 1 : 0;
  const bool leaves = spec_.nodes >= 2 * spec_.nodes_per_leaf;
  return spec_.topology == Topology::fat_tree && leaves && !ecmp() ? spec_.nodes_per_leaf : 0;
}

std::string PlatformModel::xml_with_ghosts(int block_nodes, bool first_leaf_only) const {
  return PlatformXml(*this, false, block_nodes, first_leaf_only).xml();
}

GeneratedPlatform star_for_alpha_beta(int ranks, double bandwidth_Bps, double latency_s) {
  GeneratedPlatform g;
  g.topology = Topology::star;
  g.nodes = ranks;
  g.devices_per_node = 1;
  g.node_link = {bandwidth_Bps, latency_s / 2, {}};
  g.intra_node_link = {bandwidth_Bps, 0, {}};
  g.device_speed_flops = 1e12;
  g.nodes_per_leaf = ranks;
  return g;
}

std::vector<int> worker_host_indices(int workers, int workers_per_node, int devices_per_node,
                                     const std::string& placement, int nodes, uint64_t seed) {
  std::vector<int> hosts;
  hosts.reserve(static_cast<size_t>(workers));
  if (placement != "random") {
    for (int w = 0; w < workers; ++w)
      hosts.push_back(worker_host_index(w, workers, workers_per_node, devices_per_node, placement));
    return hosts;
  }
  const int nodes_used = (workers + workers_per_node - 1) / workers_per_node;
  if (nodes < nodes_used)
    throw std::invalid_argument("random placement: fewer nodes than the workers need");
  std::vector<int> order(static_cast<size_t>(nodes));
  for (int n = 0; n < nodes; ++n) order[static_cast<size_t>(n)] = n;
  Rng rng(seed, 0x706c6163ULL);  // a stream of its own ("plac"): jitter's draws stay as they were
  for (int i = nodes - 1; i > 0; --i) {
    const auto j = static_cast<int>(rng.next_u64() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  for (int w = 0; w < workers; ++w)
    hosts.push_back(order[static_cast<size_t>(w / workers_per_node)] * devices_per_node +
                    w % workers_per_node);
  return hosts;
}

int worker_host_index(int worker, int workers, int workers_per_node, int devices_per_node,
                      const std::string& placement) {
  int nodes_used = (workers + workers_per_node - 1) / workers_per_node;
  int node = placement == "cyclic" ? worker % nodes_used : worker / workers_per_node;
  int slot = placement == "cyclic" ? worker / nodes_used : worker % workers_per_node;
  return node * devices_per_node + slot;
}

}  // namespace sgdsim
