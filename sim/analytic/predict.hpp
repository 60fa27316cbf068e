#pragma once
/// The contention-free model of sgdsim predict and of the choices made before a run (NCCL's
/// tuning cost, MG-WFBP's merge): every collective by its schedule on idle routes, every task
/// graph by its critical path. SimGrid-free, so it is unit-tested without an engine.
#include <string>
#include <vector>

#include "sim/analytic/platform_model.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// SimGrid 3.32's LV08 defaults (network/latency-factor, network/bandwidth-factor,
/// network/TCP-gamma), which network_model "default" (and "smpi" here) applies.
inline constexpr double kLv08LatencyFactor = 13.01;
inline constexpr double kLv08BandwidthFactor = 0.97;
inline constexpr double kLv08TcpWindowBytes = 4194304.0;

/// What a prediction needs: the scenario's scheme, collective and generated platform.
struct PredictInput {
  const Scenario* scenario = nullptr;       ///< validated scenario
  const Scheme* scheme = nullptr;           ///< its fragment builder
  const Collective* collective = nullptr;   ///< its collective algorithm
  CollectiveGroup group;                    ///< the group the collective runs on
  const PlatformModel* platform = nullptr;  ///< generated platform (null: a platform file)
  std::vector<int> worker_host;             ///< host of each worker, then dedicated servers
};

/// Result of the contention-free analytic model.
struct Prediction {
  std::vector<double> iteration_end_s;  ///< per iteration, when its last update ends
  double iteration_time_s = 0;          ///< steady-state mean (warm-up excluded)
  double compute_s = 0;                 ///< fwd + bwd (+ io) of one worker
  double comm_s = 0;                    ///< sum of the bucket collectives of one iteration
};

/// Contention-free critical-path prediction (generated star and fat-tree platforms; throws
/// InputError otherwise).
Prediction predict(const PredictInput& input);

/// Contention-free time of one collective on the generated platform for `network_model`
/// (SMPI's size-dependent factors are not applied: "smpi" is treated as LV08); the group's op,
/// over subgroups as Task::subgroup says (0: all ranks).
double predict_collective_s(const Collective& collective, const CollectiveGroup& group,
                            const PlatformModel& platform, const std::vector<int>& hosts,
                            double bytes, NetworkModel network_model, double reduction_Bps,
                            int subgroup = 0);

/// Alpha-beta between the first two ranks of a node (intra) and between the first ranks of the
/// first two nodes (inter) of `hosts`, with `network_model`'s constant factors.
NetworkCost route_network_cost(const PlatformModel& platform, const std::vector<int>& hosts,
                               int ranks_per_node, NetworkModel network_model,
                               double reduction_Bps);

}  // namespace sgdsim
