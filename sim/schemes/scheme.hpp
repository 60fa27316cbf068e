#pragma once
/// Schemes build the per-iteration DAG fragments that say how workers synchronize.
#include <memory>
#include <string>
#include <vector>

#include "sim/dag/task_graph.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Seeded compute-time factors: per-task jitter and fixed stragglers.
class ComputeVariability {
 public:
  /// Picks the stragglers of `workers` from the scenario's seed.
  ComputeVariability(const VariabilitySpec& spec, uint64_t seed, int workers);
  /// Factor applied to the duration of task `slot` of `worker` in `iteration`.
  double factor(int worker, int iteration, int slot) const;
  /// True if `worker` is a straggler in `iteration`.
  bool is_straggler(int worker, int iteration = 0) const;

 private:
  std::vector<bool> pick_stragglers(int iteration) const;
  VariabilitySpec spec_;
  uint64_t seed_;
  int workers_ = 0;
  std::vector<bool> straggler_;
  // Redrawn stragglers of the iteration asked last: fragments ask once per task.
  mutable int redraw_iteration_ = -1;
  mutable std::vector<bool> redrawn_;
};

/// A scheme: a builder of iteration fragments.
class Scheme {
 public:
  virtual ~Scheme() = default;
  /// Registered name.
  virtual std::string name() const = 0;
  /// The tasks and edges of iteration `iteration` (and its edges to earlier iterations).
  virtual Fragment build(int iteration) const = 0;
  /// Largest cross-edge lag this scheme produces.
  virtual int max_lag() const { return 1; }
  /// Iterations between an allreduce and the update that applies its gradient (0: same one).
  virtual int update_lag() const { return 0; }
  /// Independent groups of tasks (no edge between groups): the engine builds and retires
  /// each group's fragments on its own. 1 unless workers never wait for each other.
  virtual int groups() const { return 1; }
  /// The tasks of `group` in `iteration` (cross edges stay within the group).
  virtual Fragment build_group(int iteration, int group) const {
    (void)group;
    return build(iteration);
  }
};

/// Everything a scheme builder needs.
struct SchemeContext {
  const Scenario* scenario = nullptr;  ///< validated scenario
  const Workload* workload = nullptr;  ///< per-worker costs
};

/// Builds the scheme named by `scenario.scheme.type`; throws std::out_of_range if unknown.
std::unique_ptr<Scheme> make_scheme(const SchemeContext& context);
/// Names of the registered schemes.
std::vector<std::string> scheme_names();

/// Host index of parameter server `server` (async): a worker's host when co-located, else
/// the hosts after the workers.
int server_host_index(const Scenario& scenario, int server);
/// Element-wise FLOPs per parameter of one prediction by `predictor` (pseudo_sync).
double predictor_flops_per_parameter(const std::string& predictor);

/// One fragment of all groups of `iteration`, group after group (for predict and export).
Fragment combine_groups(const Scheme& scheme, int iteration);

/// Builds the first `iterations` fragments.
std::vector<Fragment> build_fragments(const Scheme& scheme, int iterations);

}  // namespace sgdsim
