#pragma once
/// What the scenario unit tests share: the one-line error a scenario is refused with.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim::test {

/// The InputError message parse_scenario(j, "s.json") throws, "" if it accepts the scenario.
inline std::string scenario_error(const nlohmann::json& j) {
  try {
    parse_scenario(j, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace sgdsim::test
