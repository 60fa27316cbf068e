#pragma once
/// Generated platforms (star, fat tree; nodes x devices with an intra-node link) as SimGrid
/// XML, plus their contention-free route costs. This file does not include SimGrid.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Latency and bottleneck bandwidth of a route between two hosts.
struct RouteCost {
  double latency_s = 0;      ///< sum of link latencies
  double bandwidth_Bps = 0;  ///< smallest link bandwidth
  RouteTransport transport;  ///< what a message pays on top under network_model "links"
  /// Contention-free time of a message of `bytes` under "links".
  double links_time_s(double bytes) const {
    return message_time_s(transport, latency_s, bandwidth_Bps, bytes);
  }
  /// Alpha-beta of the route under "links": latency plus overhead, and the message's rate.
  AlphaBeta links_alpha_beta() const {
    double rate = bandwidth_Bps * transport.efficiency;
    if (transport.rate_bound_Bps > 0) rate = std::min(rate, transport.rate_bound_Bps);
    return {latency_s + transport.overhead_s, 1.0 / rate, 0.0};
  }
};

/// A platform generated from a GeneratedPlatform description.
class PlatformModel {
 public:
  /// Builds the model; hosts are numbered node-major (node 0 devices first).
  explicit PlatformModel(GeneratedPlatform spec);
  /// SimGrid XML (DTD 4.1) of the platform. `routes_only`: for a run that asks SimGrid for
  /// its route costs and nothing else (the same alpha-beta between every two hosts, fewer
  /// links: a flat star's nodes get one SHARED link each instead of a SPLITDUPLEX pair).
  std::string xml(bool routes_only = false) const;
  /// Number of hosts (devices).
  int num_hosts() const { return spec_.nodes * spec_.devices_per_node; }
  /// SimGrid name of host `index`.
  std::string host_name(int index) const;
  /// Route cost between two hosts on an idle network.
  RouteCost route(int from, int to) const;
  /// The description it was built from.
  const GeneratedPlatform& spec() const { return spec_; }
  /// Bandwidth of a leaf switch's uplink (fat tree): all its spine links together.
  double uplink_bandwidth_Bps() const;
  /// Bandwidth of one of a leaf's links to one spine (the uplink over `spines`).
  double spine_link_bandwidth_Bps() const { return uplink_bandwidth_Bps() / spec_.spines; }
  /// Whether routes between leaves pick one of several spines by ECMP hash (spines > 1).
  bool ecmp() const;
  /// Leaf switch of host `index`.
  int leaf_of(int index) const { return index / spec_.devices_per_node / spec_.nodes_per_leaf; }
  /// Spine the route between hosts `from` and `to` takes; -1 if it stays under one leaf.
  int spine_of(int from, int to) const;
  /// Nodes in one block of the rotation symmetry the generator builds in, for flow_symmetry
  /// "rotation" with ghost receivers: 1 for a star of multi-device nodes, nodes_per_leaf for
  /// a fat tree of two or more leaves without ECMP; 0 elsewhere (SimGrid's own clusters,
  /// hashed spines, a star of single-device nodes, which rotates rank by rank).
  int rotation_block_nodes() const;
  /// The XML plus ghost receivers for rotations by `block_nodes` nodes: ghost j stands for
  /// device j of the first block receiving in any other block, and the route from the first
  /// block to it crosses the first block's images of the links the real route crosses.
  /// With `first_leaf_only` (a fat tree whose other leaves only compute, following the first
  /// leaf's workers): the first leaf, its uplink and the ghosts, the other hosts without routes.
  std::string xml_with_ghosts(int block_nodes, bool first_leaf_only = false) const;
  /// Ranks in one such block (rotation_block_nodes x devices per node; 0 without blocks).
  int rotation_block_ranks() const { return rotation_block_nodes() * spec_.devices_per_node; }
  /// SimGrid name of ghost receiver `j` (xml_with_ghosts).
  static std::string ghost_host_name(int j) { return "ghost-" + std::to_string(j); }

 private:
  GeneratedPlatform spec_;
};

/// A star platform for `sgdsim collective`: `ranks` hosts whose host-to-host route has
/// exactly `latency_s` and `bandwidth_Bps` (each private link carries half the latency).
GeneratedPlatform star_for_alpha_beta(int ranks, double bandwidth_Bps, double latency_s);

/// ECMP's choice among `spines` equal-cost uplinks for the pair of hosts {a, b}: a seeded
/// hash of the unordered pair (the same spine both ways), uniform over the spines.
int ecmp_spine(uint64_t seed, int host_a, int host_b, int spines);

/// ECMP's choice for connection `connection` from host `from` to host `to` (per-connection
/// hashing, `ecmp_connections` > 0): a seeded hash of the ordered pair and the connection,
/// as a switch hashes each TCP socket's or QP's own 5-tuple, uniform over the spines.
int ecmp_connection_spine(uint64_t seed, int from, int to, int connection, int spines);

/// Connections per spine of the route from `from` to `to` under per-connection hashing:
/// element k counts the `connections` hashed onto spine k.
std::vector<int> ecmp_connection_counts(uint64_t seed, int from, int to, int connections,
                                        int spines);

/// Host index of `worker` on a generated platform (block: fill a node first; cyclic: round robin).
int worker_host_index(int worker, int workers, int workers_per_node, int devices_per_node,
                      const std::string& placement);

/// Host index of every worker: block and cyclic as worker_host_index; "random" fills nodes
/// as block does, on a seeded random choice and order of the platform's `nodes` nodes (the
/// first of a Fisher-Yates permutation on `seed`), as a batch scheduler's allocation gives.
std::vector<int> worker_host_indices(int workers, int workers_per_node, int devices_per_node,
                                     const std::string& placement, int nodes, uint64_t seed);

}  // namespace sgdsim
