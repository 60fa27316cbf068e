#pragma once
/// What the scheme unit tests share: a scenario, its workload and the scheme built from them.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim::test {

/// A scheme with the scenario and workload it points into (kept alive together).
struct BuiltScheme {
  Scenario scenario;               ///< the parsed scenario
  Workload workload;               ///< its workload
  std::unique_ptr<Scheme> scheme;  ///< the scheme built on both
};

/// Parses `j` (as "toy.json"), loads its workload and builds its scheme.
inline std::unique_ptr<BuiltScheme> build_scheme_of(const nlohmann::json& j) {
  auto b = std::make_unique<BuiltScheme>();
  b->scenario = parse_scenario(j, "toy.json");
  b->workload = load_workload(b->scenario);
  b->scheme = make_scheme({&b->scenario, &b->workload});
  return b;
}

}  // namespace sgdsim::test
