#pragma once
/// The scenario's `collective` section: the algorithm, its servers and pipelining, and the
/// options every registered algorithm declares (Collective::params), checked by the algorithm
/// chosen.
#include <nlohmann/json.hpp>

#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Reads `collective` into `s`; needs the platform, the workers and their layout read first
/// (NCCL's defaults and the algorithm's checks depend on them).
void read_collective_field(JsonObject& root, Scenario& s);

/// Nodes the collective's servers need beyond the workers' (-1: one per worker node), from the
/// raw input before the platform is read (0 when the section is malformed: reading it says why).
int raw_collective_server_nodes(const nlohmann::json& raw);

}  // namespace sgdsim
