#pragma once
/// The task DAG of training iterations (Shi, Wang & Chu's DAG model) over Boost.Graph;
/// Boost types stay inside this layer.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/collective_op.hpp"

namespace sgdsim {

/// What a task does (DESIGN.md §3).
/// `compress`: a worker's gradient compression between its backward pass and a compressed
/// exchange's collective (scheme.compression).
enum class TaskKind : uint8_t { io, h2d, fwd, bwd, comm, update, predict, apply, compress };

/// Short name of a task kind ("fwd", "comm", ...).
const char* task_kind_name(TaskKind kind);

/// One node of the DAG.
struct Task {
  TaskKind kind = TaskKind::fwd;  ///< what it does
  int worker = -1;                ///< worker it belongs to (compute runs on its host); -1 for a
                                  ///< collective spanning all workers
  int iteration = 0;              ///< training iteration
  int index = 0;                  ///< bucket index (bwd, comm) or shard (push, pull, apply)
  double duration_s = 0;          ///< compute time (compute kinds)
  double bytes = 0;               ///< message size (comm)
  int src = -1;                   ///< point-to-point comm: sending host; apply: pushing worker
  int dst = -1;                   ///< point-to-point comm: receiving host; apply: server host
  int queue = -1;                 ///< tasks sharing a queue id run one at a time, in ready order
  bool pull = false;              ///< point-to-point comm: a pull (server to worker), not a push
  CollectiveOp op = CollectiveOp::allreduce;  ///< collective comm: what it computes
  /// Collective comm: 0 = one collective over all workers; s > 0 = one per block of s
  /// consecutive workers (HSDP's shard groups), run at once; -s = one per set of the workers
  /// equal modulo s (HSDP's replica groups).
  int16_t subgroup = 0;
};

/// The host index a compute task runs on: the server's for an apply, its worker's otherwise.
inline int compute_host(const Task& task) {
  return task.kind == TaskKind::apply ? task.dst : task.worker;
}

/// A directed acyclic graph of tasks.
class TaskGraph {
 public:
  TaskGraph();
  ~TaskGraph();
  TaskGraph(TaskGraph&&) noexcept;
  TaskGraph& operator=(TaskGraph&&) noexcept;

  /// Adds a task and returns its index.
  uint32_t add_task(const Task& task);
  /// Adds the dependency `from` -> `to` (`to` may start once `from` is done).
  void add_edge(uint32_t from, uint32_t to);
  /// Number of tasks.
  uint32_t num_tasks() const;
  /// Number of edges.
  uint32_t num_edges() const;
  /// The task at `index`.
  const Task& task(uint32_t index) const;
  /// Mutable task at `index`.
  Task& task(uint32_t index);
  /// Indices of the successors of `index`.
  std::vector<uint32_t> successors(uint32_t index) const;
  /// Number of predecessors of each task.
  std::vector<uint32_t> in_degrees() const;
  /// Successors of every task in one pass (compressed rows): task t's are
  /// `targets[offsets[t] .. offsets[t + 1])`, in the order successors(t) lists them.
  void successor_lists(std::vector<uint32_t>& offsets, std::vector<uint32_t>& targets) const;
  /// The same lists without a copy, valid while the graph is not changed: task t's
  /// successors are `(*targets)[(*offsets)[t] .. (*offsets)[t + 1])`.
  void successor_lists_view(const std::vector<uint32_t>** offsets,
                            const std::vector<uint32_t>** targets) const;
  /// All edges as (from, to) pairs.
  std::vector<std::pair<uint32_t, uint32_t>> edges() const;
  /// A topological order; throws std::logic_error if the graph has a cycle.
  std::vector<uint32_t> topological_order() const;
  /// Earliest finish time of every task when each lasts `duration(task)` and starts as soon
  /// as its predecessors finish (contention-free critical path).
  std::vector<double> earliest_finish_s(const std::function<double(const Task&)>& duration) const;

  struct Impl;  ///< storage (public so that the layer's pool of spare storage can name it)

 private:
  std::unique_ptr<Impl> impl_;
};

/// A dependency from a task of an earlier iteration's fragment into this one.
struct CrossEdge {
  int lag = 1;        ///< how many iterations back the source lives
  uint32_t from = 0;  ///< task index in fragment `iteration - lag`
  uint32_t to = 0;    ///< task index in this fragment
};

/// The tasks of one iteration plus their dependencies on earlier iterations; the DAG is
/// built lazily, one fragment at a time, so memory does not grow with iterations.
struct Fragment {
  int iteration = 0;             ///< iteration number
  TaskGraph graph;               ///< tasks and edges within the iteration
  std::vector<CrossEdge> cross;  ///< edges from earlier iterations
};

/// Joins consecutive fragments into one graph (for predict and export).
TaskGraph join_fragments(const std::vector<Fragment>& fragments);

/// Graphviz DOT text of a graph.
std::string to_dot(const TaskGraph& graph);
/// JSON text {"tasks": [...], "edges": [[from, to], ...]} of a graph.
std::string to_json(const TaskGraph& graph);
/// Display label of a task ("fwd w3 i1", "comm b2 i0").
std::string task_label(const Task& task);

}  // namespace sgdsim
