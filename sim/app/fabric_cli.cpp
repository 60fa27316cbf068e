// `sgdsim collective` on a fat tree with spines and ECMP, and rank placement: the options
// and their checks; the platform itself is sim/analytic's generator.
#include "sim/app/fabric_cli.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "sim/analytic/platform_model.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/numbers.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {

void apply_fabric_options(const Args& a, GeneratedPlatform& g, int worker_nodes) {
  // The collective command generates stars and fat trees only (torus and dragonfly take
  // their dimensions from a scenario).
  const std::string name = a.get("--topology").value_or(topology_name(Topology::star));
  const std::optional<Topology> topology = topology_named(name);
  if (topology != Topology::star && topology != Topology::fat_tree)
    throw InputError("usage: --topology: expected star or fat_tree, got \"" + name + "\"");
  if (topology == Topology::star) {
    for (const char* o : {"--nodes", "--nodes-per-leaf", "--oversubscription", "--spines",
                          "--ecmp-seed", "--ecmp-connections"})
      if (a.has(o)) throw InputError(std::string("usage: ") + o + " needs --topology fat_tree");
    return;
  }
  g.topology = Topology::fat_tree;
  g.nodes = static_cast<int>(int_option(a, "--nodes", g.nodes, worker_nodes, 1 << 20));
  g.nodes_per_leaf = static_cast<int>(int_option(a, "--nodes-per-leaf", 16, 1, 1 << 20));
  if (const auto r = a.get("--oversubscription")) {
    const std::optional<double> x = parse_plain_number(*r);
    if (!x || !(*x >= 1))
      throw InputError("usage: --oversubscription: expected a number >= 1, got \"" + *r + "\"");
    g.oversubscription = *x;
  }
  g.spines = static_cast<int>(int_option(a, "--spines", 1, 1, 1 << 16));
  g.ecmp_seed = static_cast<uint64_t>(int_option(a, "--ecmp-seed", 1, 0, INT64_MAX));
  if (g.spines > 1 && g.nodes * g.devices_per_node > 512)
    throw InputError(fmt::format(
        "usage: --spines > 1 routes every pair of hosts: expected at most 512 hosts, got {}",
        g.nodes * g.devices_per_node));
  g.ecmp_connections = static_cast<int>(int_option(a, "--ecmp-connections", 0, 0, 1024));
  const int64_t hosts = int64_t{g.nodes} * g.devices_per_node;
  if (g.ecmp_connections > 0 && g.spines < 2)
    throw InputError("usage: --ecmp-connections needs --spines > 1");
  if (hosts * hosts * g.ecmp_connections > (int64_t{1} << 21))
    throw InputError(fmt::format(
        "usage: --ecmp-connections: expected hosts x hosts x connections at most {}, got {} "
        "hosts x {}",
        int64_t{1} << 21, hosts, g.ecmp_connections));
}

std::vector<int> fabric_rank_hosts(const Args& a, const GeneratedPlatform& g, int ranks, int dpn) {
  const std::string placement = a.get("--placement").value_or("block");
  if (placement != "block" && placement != "cyclic" && placement != "random")
    throw InputError("usage: --placement: expected block, cyclic or random, got \"" + placement +
                     "\"");
  if (a.has("--seed") && placement != "random")
    throw InputError("usage: --seed needs --placement random");
  const auto seed = static_cast<uint64_t>(int_option(a, "--seed", 1, 0, INT64_MAX));
  return worker_host_indices(ranks, dpn, dpn, placement, g.nodes, seed);
}

}  // namespace sgdsim
