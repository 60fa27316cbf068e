#pragma once
/// What every executor of a task DAG (SimGrid's in sim/engine, the analytic scheduler here)
/// reports: each task's start and end, in simulated-time order, and its totals.
#include <cstdint>

#include "sim/dag/task_graph.hpp"

namespace sgdsim {

/// Receives every finished task, in completion order.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  /// Called once per task when it ends at `end_s`, having started at `start_s`.
  virtual void task_done(const Task& task, double start_s, double end_s) = 0;
  /// Called once per task when it starts (after any wait in its queue).
  virtual void task_started(const Task& /*task*/, double /*start_s*/) {}
  /// A hint that `task` ends soon (per worker, a few events ahead): the observer may start
  /// loading what it will record of it. Changes nothing it records.
  virtual void prefetch(const Task& /*task*/) const {}
  /// True once no further iteration should be built (e.g. a target accuracy was reached);
  /// iterations already built run to their end.
  virtual bool should_stop() const { return false; }
};

/// Totals of one simulation.
struct EngineResult {
  double simulated_time_s = 0;  ///< clock at the end
  uint64_t activities = 0;      ///< activities executed (SimGrid Exec + Comm, or their
                                ///< analytic equivalents: one per timed task)
  int iterations = 0;           ///< iterations simulated (fewer than asked after a stop)
  /// flow_private_routes "closed_form": messages that ended in closed form (-1: not asked)
  int64_t closed_form_messages = -1;
  /// flow_private_routes "closed_form": closed-form messages handed over to SimGrid
  int64_t closed_form_handovers = 0;
};

}  // namespace sgdsim
