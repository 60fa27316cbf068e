#pragma once
/// Composition shared by the subcommands: scenario -> workload -> scheme -> engine config.
#include <memory>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/platform.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Everything needed to simulate or predict one scenario.
struct Setup {
  Scenario scenario;                       ///< validated scenario
  Workload workload;                       ///< per-worker costs
  std::unique_ptr<Scheme> scheme;          ///< fragment builder
  const Collective* collective = nullptr;  ///< collective algorithm
  std::optional<PlatformModel> platform;   ///< generated platform, if any
  std::vector<int> worker_host;            ///< host index of each worker (generated platforms)
  EngineConfig engine;                     ///< SimGrid configuration
  std::vector<std::string> warnings;       ///< one line each, printed on stderr by run/predict
};

/// Loads and validates a scenario file with overrides and prepares everything else.
std::unique_ptr<Setup> make_setup(const std::string& file,
                                  const std::vector<std::string>& overrides,
                                  const std::vector<std::string>& cfg);

/// Result of the contention-free analytic model.
struct Prediction {
  std::vector<double> iteration_end_s;  ///< per iteration, when its last update ends
  double iteration_time_s = 0;          ///< steady-state mean (warm-up excluded)
  double compute_s = 0;                 ///< fwd + bwd (+ io) of one worker
  double comm_s = 0;                    ///< sum of the bucket collectives of one iteration
};

/// Contention-free critical-path prediction of the scenario (no SimGrid).
Prediction predict(const Setup& setup);

/// Contention-free time of one collective on the generated platform for `network_model`
/// (SMPI's size-dependent factors are not applied: "smpi" is treated as LV08).
double predict_collective_s(const Collective& collective, const CollectiveGroup& group,
                            const PlatformModel& platform, const std::vector<int>& hosts,
                            double bytes, const std::string& network_model, double reduction_Bps);

/// Alpha-beta between the first two ranks of a node (intra) and between the first ranks of the
/// first two nodes (inter) of `hosts`, with `network_model`'s constant factors.
NetworkCost route_network_cost(const PlatformModel& platform, const std::vector<int>& hosts,
                               int ranks_per_node, const std::string& network_model,
                               double reduction_Bps);

}  // namespace sgdsim
