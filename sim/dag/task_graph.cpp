#include "sim/dag/task_graph.hpp"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sgdsim {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Task>;

struct TaskGraph::Impl {
  Graph g;
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
  }
  return "?";
}

TaskGraph::TaskGraph() : impl_(std::make_unique<Impl>()) {}
TaskGraph::~TaskGraph() = default;
TaskGraph::TaskGraph(TaskGraph&&) noexcept = default;
TaskGraph& TaskGraph::operator=(TaskGraph&&) noexcept = default;

uint32_t TaskGraph::add_task(const Task& task) {
  return static_cast<uint32_t>(boost::add_vertex(task, impl_->g));
}
void TaskGraph::add_edge(uint32_t from, uint32_t to) {
  boost::add_edge(from, to, impl_->g);
}
uint32_t TaskGraph::num_tasks() const {
  return static_cast<uint32_t>(boost::num_vertices(impl_->g));
}
uint32_t TaskGraph::num_edges() const {
  return static_cast<uint32_t>(boost::num_edges(impl_->g));
}
const Task& TaskGraph::task(uint32_t index) const {
  return impl_->g[index];
}
Task& TaskGraph::task(uint32_t index) {
  return impl_->g[index];
}

std::vector<uint32_t> TaskGraph::successors(uint32_t index) const {
  std::vector<uint32_t> out;
  for (auto [it, end] = boost::adjacent_vertices(index, impl_->g); it != end; ++it)
    out.push_back(static_cast<uint32_t>(*it));
  return out;
}

void TaskGraph::successor_lists(std::vector<uint32_t>& offsets,
                                std::vector<uint32_t>& targets) const {
  const uint32_t n = num_tasks();
  offsets.assign(n + 1, 0);
  targets.clear();
  targets.reserve(num_edges());
  for (uint32_t v = 0; v < n; ++v) {
    for (auto [it, end] = boost::adjacent_vertices(v, impl_->g); it != end; ++it)
      targets.push_back(static_cast<uint32_t>(*it));
    offsets[v + 1] = static_cast<uint32_t>(targets.size());
  }
}

std::vector<uint32_t> TaskGraph::in_degrees() const {
  std::vector<uint32_t> deg(num_tasks());
  for (uint32_t v = 0; v < deg.size(); ++v)
    deg[v] = static_cast<uint32_t>(boost::in_degree(v, impl_->g));
  return deg;
}

std::vector<std::pair<uint32_t, uint32_t>> TaskGraph::edges() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (auto [it, end] = boost::edges(impl_->g); it != end; ++it)
    out.emplace_back(static_cast<uint32_t>(boost::source(*it, impl_->g)),
                     static_cast<uint32_t>(boost::target(*it, impl_->g)));
  return out;
}

std::vector<uint32_t> TaskGraph::topological_order() const {
  std::vector<Graph::vertex_descriptor> reversed;
  try {
    boost::topological_sort(impl_->g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("task graph has a cycle");
  }
  return std::vector<uint32_t>(reversed.rbegin(), reversed.rend());
}

std::vector<double> TaskGraph::earliest_finish_s(
    const std::function<double(const Task&)>& duration) const {
  std::vector<double> start(num_tasks(), 0.0), finish(num_tasks(), 0.0);
  for (uint32_t v : topological_order()) {
    finish[v] = start[v] + duration(impl_->g[v]);
    for (auto [it, end] = boost::adjacent_vertices(v, impl_->g); it != end; ++it)
      start[*it] = std::max(start[*it], finish[v]);
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
