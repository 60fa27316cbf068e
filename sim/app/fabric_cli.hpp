#pragma once
/// `sgdsim collective`'s fabric options: a fat tree of leaves under spines with ECMP, and the
/// placement of the ranks on its nodes (block, cyclic, or a batch scheduler's random nodes).
#include <string>
#include <vector>

#include "sim/app/cli.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Turns the generated star `g` (of `worker_nodes` worker nodes) into a fat tree when
/// --topology fat_tree is given (--nodes-per-leaf, --oversubscription, --spines, --ecmp-seed,
/// --nodes for a larger cluster); without it, any of those options is a usage error.
void apply_fabric_options(const Args& a, GeneratedPlatform& g, int worker_nodes);

/// Host index of each of `ranks` ranks (`dpn` per node) under --placement (block, cyclic or
/// random with --seed) on the nodes of `g`.
std::vector<int> fabric_rank_hosts(const Args& a, const GeneratedPlatform& g, int ranks, int dpn);

}  // namespace sgdsim
