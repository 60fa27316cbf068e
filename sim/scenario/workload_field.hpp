#pragma once
/// The scenario's `workload` section: a workload given as per-rank Chakra ET files instead of a
/// model profile.
#include <string>

#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Reads `workload` {`chakra`: "PREFIX" (files PREFIX.0.et .. PREFIX.<P-1>.et, Chakra's naming)
/// or a list of files (rank r = entry r), `optimizer`: "sgdsim" | "trace"} into `s`; paths
/// resolve against `base_dir`, then the data folder. Needs `s.workers`: one file per worker.
void read_workload_field(JsonObject& root, Scenario& s, const std::string& base_dir);

}  // namespace sgdsim
