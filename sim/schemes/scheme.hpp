#pragma once
/// Schemes build the per-iteration DAG fragments that say how workers synchronize.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/dag/task_graph.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/scheme_types.hpp"
#include "sim/schemes/memory.hpp"
#include "sim/schemes/update_rule.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Seeded compute-time factors: per-task jitter and fixed stragglers.
class ComputeVariability {
 public:
  /// Picks the stragglers of `workers` from the scenario's seed.
  ComputeVariability(const VariabilitySpec& spec, uint64_t seed, int workers);
  /// Factor applied to the duration of task `slot` of `worker` in `iteration`.
  double factor(int worker, int iteration, int slot) const {
    // Inline and without a draw when every factor is 1: 10^5 workers' tasks every iteration.
    return uniform_ ? 1.0 : drawn_factor(worker, iteration, slot);
  }
  /// True if `worker` is a straggler in `iteration`.
  bool is_straggler(int worker, int iteration = 0) const;
  /// True if every factor is 1 (no jitter, no straggler).
  bool uniform() const { return uniform_; }

 private:
  double drawn_factor(int worker, int iteration, int slot) const;
  std::vector<bool> pick_stragglers(int iteration) const;
  VariabilitySpec spec_;
  uint64_t seed_;
  int workers_ = 0;
  bool uniform_ = false;  // no jitter and no straggler: every factor is 1
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
  /// Independent groups of tasks (no edge between groups): the engine builds and retires
  /// each group's fragments on its own. 1 unless workers never wait for each other.
  virtual int groups() const { return 1; }
  /// The tasks of `group` in `iteration` (cross edges stay within the group).
  virtual Fragment build_group(int iteration, int group) const {
    (void)group;
    return build(iteration);
  }
  /// The first iteration i from which build_group(i, g) is build_group(i - 1, g) with every
  /// task's iteration one more and nothing else changed (tasks, edges, cross edges), for every
  /// group g; -1 if none. The analytic scheduler then copies a group's previous fragment instead
  /// of building one (async at 10^4 workers builds 10^4 small fragments per iteration).
  virtual int repeats_from() const { return -1; }
};

/// Everything a scheme builder needs.
struct SchemeContext {
  const Scenario* scenario = nullptr;  ///< validated scenario
  const Workload* workload = nullptr;  ///< per-worker costs
};

/// The resource guard's count of one iteration's activities and memory, which a scheme
/// adjusts (SchemeTraits::activities).
struct ActivityCount {
  double execs = 0;               ///< compute activities
  double comms = 0;               ///< communication activities
  double largest_collective = 0;  ///< messages of the largest collective
  double schedule_bytes = 0;      ///< memory of collective schedules
  double recorder_bytes = 0;      ///< memory the recorder keeps
  double live_tasks = 0;          ///< tasks alive at once beyond the collective schemes'
};

struct PsKey;

/// What other layers ask of a scheme besides its graph and update rule (null: the default).
struct SchemeTraits {
  /// Parameter-server keys workers push and pull (default: none, a collective scheme).
  std::function<std::vector<PsKey>(const Scenario&, const Workload&)> ps_keys;
  /// Hosts of its own beyond the workers' (dedicated servers; default 0), taken in order.
  std::function<int(const Scenario&)> dedicated_hosts;
  /// Staleness every update has by construction (default: none or measured).
  std::function<std::optional<int>(const Scenario&)> fixed_staleness;
  /// Adjusts the guard's count, given the collective schemes' one (default: unchanged).
  std::function<void(const Scenario&, ActivityCount&)> activities;
  /// How one GPU holds the model states (default: replicated, as DDP).
  std::function<ShardedStates(const Scenario&)> memory;
};

/// Builds a scheme's graph from a scenario of its type.
using SchemeFactory = std::function<std::unique_ptr<Scheme>(const SchemeContext&)>;
/// A scheme's update rule for a scenario of its type.
using UpdateRuleOf = std::function<UpdateRule(const Scenario&)>;

/// Registers a scheme during static initialization, so a scheme is one file with one
/// registration next to its definition: its scenario options (SchemeType), its graph, its
/// update rule for the math (required: a scheme without one cannot be registered) and its
/// traits. A second registration of a name throws.
class SchemeRegistration {
 public:
  /// Registers `type.name` with its parts.
  SchemeRegistration(SchemeType type, SchemeFactory make, UpdateRuleOf update_rule,
                     SchemeTraits traits = {});
};

/// A declared scheme option stored in an int field of SchemeSpec.
SchemeParam bind_scheme_param(Param param, int SchemeSpec::*field);
/// A declared scheme option stored in a string field (a choice or a text) of SchemeSpec.
SchemeParam bind_scheme_param(Param param, std::string SchemeSpec::*field);

/// Builds the scheme named by `scenario.scheme.type`; throws std::out_of_range if unknown.
std::unique_ptr<Scheme> make_scheme(const SchemeContext& context);
/// Names of the registered schemes, sorted.
std::vector<std::string> scheme_names();
/// The update rule of the scenario's scheme.
UpdateRule scheme_update_rule(const Scenario& scenario);
/// The traits of the scenario's scheme.
const SchemeTraits& scheme_traits(const Scenario& scenario);
/// Parameter-server keys of the scenario's scheme (empty for collective schemes).
std::vector<PsKey> scheme_ps_keys(const Scenario& scenario, const Workload& workload);
/// Hosts of its own the scenario's scheme needs beyond the workers'.
int scheme_dedicated_hosts(const Scenario& scenario);
/// One GPU's memory under the scenario's scheme (its SchemeTraits::memory, else replicated).
MemoryBreakdown scheme_memory(const Scenario& scenario, const Workload& workload);

/// One key of async's parameter servers: a slice of the gradient that a worker pushes, a server
/// applies and the worker pulls back as one unit.
struct PsKey {
  int unit = 0;             ///< push unit (bucket in backward order; 0 for granularity "model")
  int server = 0;           ///< server that applies it
  double offset_bytes = 0;  ///< where the slice starts in the gradient (layers in forward order)
  double bytes = 0;         ///< slice size
};

/// Push units of async for scheme.granularity, in backward order: the whole model, one per
/// layer with parameters (parameter-free layers join the open one), or the fusion buckets.
std::vector<Bucket> async_units(const Scenario& scenario, const Workload& workload);

/// The keys of async, unit after unit: a unit of at least kBigArrayElements parameters (and the
/// whole model) is split evenly over all servers, a smaller one goes whole to server
/// (unit's forward index x 9973) mod S, as MXNet's KVStoreDist does.
std::vector<PsKey> async_keys(const Scenario& scenario, const Workload& workload);

/// MXNET_KVSTORE_BIGARRAY_BOUND's default: arrays this large are split across all servers.
inline constexpr double kBigArrayElements = 1e6;

/// Host index of parameter server `server` (async): a worker's host when co-located, else
/// the hosts after the workers.
int server_host_index(const Scenario& scenario, int server);

/// One fragment of all groups of `iteration`, group after group (for predict and export).
Fragment combine_groups(const Scheme& scheme, int iteration);

/// Builds the first `iterations` fragments.
std::vector<Fragment> build_fragments(const Scheme& scheme, int iterations);

}  // namespace sgdsim
