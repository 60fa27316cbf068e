#include "sim/dag/task_graph.hpp"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sgdsim {

// Tasks and edges in plain vectors (insertion order): building a fragment of 10^5 workers costs
// two push_backs per task and edge. Boost.Graph runs the algorithms (topological sort) on a graph
// made from them when asked; successor lists are built once per change.
struct TaskGraph::Impl {
  std::vector<Task> tasks;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  mutable bool csr_valid = false;
  mutable std::vector<uint32_t> csr_offsets, csr_targets;

  /// Successors of every task, in edge insertion order (what Boost's out-edge lists hold).
  void build_csr() const {
    if (csr_valid) return;
    const size_t n = tasks.size();
    csr_offsets.assign(n + 1, 0);
    for (const auto& e : edges) ++csr_offsets[e.first + 1];
    for (size_t v = 0; v < n; ++v) csr_offsets[v + 1] += csr_offsets[v];
    csr_targets.resize(edges.size());
    // The offsets serve as the fill cursors (each ends at the next row's start), then move back
    // by one row: no cursor array of 10^5 entries allocated per fragment.
    for (const auto& e : edges) csr_targets[csr_offsets[e.first]++] = e.second;
    for (size_t v = n; v > 0; --v) csr_offsets[v] = csr_offsets[v - 1];
    csr_offsets[0] = 0;
    csr_valid = true;
  }
};

const char* task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::io:
      return "io";
    case TaskKind::h2d:
      return "h2d";
    case TaskKind::fwd:
      return "fwd";
    case TaskKind::bwd:
      return "bwd";
    case TaskKind::comm:
      return "comm";
    case TaskKind::update:
      return "update";
    case TaskKind::predict:
      return "predict";
    case TaskKind::apply:
      return "apply";
    case TaskKind::compress:
      return "compress";
  }
  return "?";
}

namespace {
/// Storage of destroyed graphs, cleared with its capacity kept: a simulation builds one
/// fragment per iteration as it retires one, and 10^5 workers' fragments are tens of MB that
/// would otherwise be allocated, page-faulted and grown anew every iteration.
thread_local bool spare_gone = false;  // set when the thread's pool is destroyed
struct SpareImpls {
  std::vector<std::unique_ptr<TaskGraph::Impl>> impls;
  ~SpareImpls() { spare_gone = true; }  // graphs destroyed later free their storage
};
SpareImpls& spare_impls() {
  thread_local SpareImpls spare;
  return spare;
}
constexpr size_t kSpareImpls = 2;
}  // namespace

TaskGraph::TaskGraph() {
  auto& spare = spare_impls().impls;
  if (spare.empty()) {
    impl_ = std::make_unique<Impl>();
  } else {
    impl_ = std::move(spare.back());
    spare.pop_back();
  }
}
TaskGraph::~TaskGraph() {
  if (!impl_ || spare_gone) return;
  auto& spare = spare_impls().impls;
  if (spare.size() >= kSpareImpls) return;
  impl_->tasks.clear();
  impl_->edges.clear();
  impl_->csr_valid = false;
  spare.push_back(std::move(impl_));
}
TaskGraph::TaskGraph(TaskGraph&&) noexcept = default;
TaskGraph& TaskGraph::operator=(TaskGraph&&) noexcept = default;

uint32_t TaskGraph::add_task(const Task& task) {
  impl_->tasks.push_back(task);
  impl_->csr_valid = false;
  return static_cast<uint32_t>(impl_->tasks.size() - 1);
}
void TaskGraph::add_edge(uint32_t from, uint32_t to) {
  impl_->edges.emplace_back(from, to);
  impl_->csr_valid = false;
}
uint32_t TaskGraph::num_tasks() const {
  return static_cast<uint32_t>(impl_->tasks.size());
}
uint32_t TaskGraph::num_edges() const {
  return static_cast<uint32_t>(impl_->edges.size());
}
const Task& TaskGraph::task(uint32_t index) const {
  return impl_->tasks[index];
}
Task& TaskGraph::task(uint32_t index) {
  return impl_->tasks[index];
}

std::vector<uint32_t> TaskGraph::successors(uint32_t index) const {
  impl_->build_csr();
  return std::vector<uint32_t>(impl_->csr_targets.begin() + impl_->csr_offsets[index],
                               impl_->csr_targets.begin() + impl_->csr_offsets[index + 1]);
}

void TaskGraph::successor_lists(std::vector<uint32_t>& offsets,
                                std::vector<uint32_t>& targets) const {
  impl_->build_csr();
  offsets = impl_->csr_offsets;
  targets = impl_->csr_targets;
}

void TaskGraph::successor_lists_view(const std::vector<uint32_t>** offsets,
                                     const std::vector<uint32_t>** targets) const {
  impl_->build_csr();
  *offsets = &impl_->csr_offsets;
  *targets = &impl_->csr_targets;
}

std::vector<uint32_t> TaskGraph::in_degrees() const {
  std::vector<uint32_t> deg(num_tasks());
  for (const auto& e : impl_->edges) ++deg[e.second];
  return deg;
}

std::vector<std::pair<uint32_t, uint32_t>> TaskGraph::edges() const {
  return impl_->edges;
}

std::vector<uint32_t> TaskGraph::topological_order() const {
  // Out-edges in insertion order, as a bidirectional adjacency_list kept them: same order.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(impl_->tasks.size());
  for (const auto& [from, to] : impl_->edges) boost::add_edge(from, to, g);
  std::vector<Graph::vertex_descriptor> reversed;
  try {
    boost::topological_sort(g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("task graph has a cycle");
  }
  return std::vector<uint32_t>(reversed.rbegin(), reversed.rend());
}

std::vector<double> TaskGraph::earliest_finish_s(
    const std::function<double(const Task&)>& duration) const {
  std::vector<double> start(num_tasks(), 0.0), finish(num_tasks(), 0.0);
  impl_->build_csr();
  for (uint32_t v : topological_order()) {
    finish[v] = start[v] + duration(impl_->tasks[v]);
    for (uint32_t k = impl_->csr_offsets[v]; k < impl_->csr_offsets[v + 1]; ++k) {
      const uint32_t w = impl_->csr_targets[k];
      start[w] = std::max(start[w], finish[v]);
    }
  }
  return finish;
}

TaskGraph join_fragments(const std::vector<Fragment>& fragments) {
  TaskGraph g;
  std::vector<uint32_t> offset;
  for (const auto& f : fragments) {
    uint32_t base = g.num_tasks();
    offset.push_back(base);
    for (uint32_t t = 0; t < f.graph.num_tasks(); ++t) g.add_task(f.graph.task(t));
    for (auto [a, b] : f.graph.edges()) g.add_edge(base + a, base + b);
    const size_t me = offset.size() - 1;
    for (const auto& c : f.cross)
      if (static_cast<size_t>(c.lag) <= me) g.add_edge(offset[me - c.lag] + c.from, base + c.to);
  }
  return g;
}

std::string task_label(const Task& t) {
  std::string who = t.worker < 0 ? "all" : fmt::format("w{}", t.worker);
  if (t.kind == TaskKind::comm && t.worker < 0 && t.op != CollectiveOp::allreduce)
    return fmt::format("{}[{}] {} i{}", collective_op_name(t.op), t.index, who, t.iteration);
  if (t.kind == TaskKind::bwd || t.kind == TaskKind::comm)
    return fmt::format("{}[{}] {} i{}", task_kind_name(t.kind), t.index, who, t.iteration);
  return fmt::format("{} {} i{}", task_kind_name(t.kind), who, t.iteration);
}

std::string to_dot(const TaskGraph& g) {
  std::string out = "digraph iteration {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n";
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    std::string detail = t.kind == TaskKind::comm ? fmt::format("{:.0f} B", t.bytes)
                                                  : fmt::format("{:.6g} s", t.duration_s);
    out += fmt::format("  t{} [label=\"{}\\n{}\"{}];\n", v, task_label(t), detail,
                       t.kind == TaskKind::comm ? ", style=filled, fillcolor=lightblue" : "");
  }
  for (auto [a, b] : g.edges()) out += fmt::format("  t{} -> t{};\n", a, b);
  return out + "}\n";
}

std::string to_json(const TaskGraph& g) {
  nlohmann::json j;
  j["tasks"] = nlohmann::json::array();
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    nlohmann::json jt = {{"id", v},
                         {"kind", task_kind_name(t.kind)},
                         {"worker", t.worker},
                         {"iteration", t.iteration},
                         {"index", t.index}};
    if (t.kind == TaskKind::comm && t.worker < 0 && t.op != CollectiveOp::allreduce)
      jt["op"] = collective_op_name(t.op);
    if (t.kind == TaskKind::comm && t.worker < 0 && t.subgroup != 0) jt["subgroup"] = t.subgroup;
    if (t.kind == TaskKind::comm)
      jt["bytes"] = t.bytes;
    else
      jt["duration_s"] = t.duration_s;
    j["tasks"].push_back(jt);
  }
  j["edges"] = nlohmann::json::array();
  for (auto [a, b] : g.edges()) j["edges"].push_back({a, b});
  return j.dump(1) + "\n";
}

}  // namespace sgdsim
