#pragma once
/// The scenario's `platform` section: a SimGrid platform file, or a platform generated from a
/// few numbers (topology, node counts, the link classes with their transports, a node preset,
/// spines).
#include <optional>
#include <string>

#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Reads `platform` into `s.platform`: a file (resolved against `base_dir`, then the data
/// folder), or a generated platform with enough nodes for `workers` hosts (`per_node` of them
/// per node when given) and `dedicated_nodes` nodes after the workers' for dedicated servers
/// (-1: one per worker node). Derived defaults are recorded in `s.resolved`.
void read_platform_field(JsonObject& root, Scenario& s, const std::string& base_dir, int workers,
                         std::optional<int> per_node, int dedicated_nodes);

}  // namespace sgdsim
