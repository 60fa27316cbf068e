#pragma once
/// The scenario's `training` section: the real math run alongside the simulation (proxy model,
/// dataset, optimizer, every registered predictor's options, learning-rate schedule).
#include <string>

#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Reads `training` into `s.training` (enabled); `file` names the scenario in messages.
void read_training_field(JsonObject& root, Scenario& s, const std::string& file);

}  // namespace sgdsim
