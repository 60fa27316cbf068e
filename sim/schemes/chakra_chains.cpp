// Compute chains from Chakra ET nodes: each COMP node a compute task on its rank with its
// recorded duration (fwd, or bwd when its name says backward), each send/receive pair one
// point-to-point message between the ranks' hosts, dependencies as in the traces; collectives
// are left to the scheme (it adds them after bwd[b] as for buckets, then after_comm[b]).
// Leaves out compute variability beyond the scenario's factors (recorded durations are used
// as they are) and any rank-to-host mapping other than worker r on host r.
#include "sim/schemes/chakra_chains.hpp"

#include <set>

#include "sim/core/errors.hpp"
#include "sim/workload/chakra_workload.hpp"

namespace sgdsim {

namespace {

using Kind = ChakraOp::Kind;

/// Builds one rank's tasks; `messages` holds the message tasks (all ranks); `slot` counts the
/// variability slots used.
WorkerChain rank_chain(Fragment& f, const ChakraProgram& p, int k, const ComputeVariability& v,
                       const std::vector<uint32_t>& messages,
                       std::set<std::pair<uint32_t, uint32_t>>& message_edges, int& slot) {
  const auto& ops = p.ranks[k];
  const int n = static_cast<int>(ops.size());
  WorkerChain c;
  c.bwd.assign(p.collectives.size(), 0);
  c.after_comm.assign(p.collectives.size(), {});
  std::vector<char> has_successor(n, 0);  // a non-collective op waits for it
  std::vector<int> roots;
  for (int i = 0; i < n; ++i) {
    if (ops[i].preds.empty()) roots.push_back(i);
    if (ops[i].kind != Kind::collective)
      for (int d : ops[i].preds) has_successor[d] = 1;
  }
  auto compute = [&](TaskKind kind, int index, double duration) {
    return f.graph.add_task(
        {kind, k, f.iteration, index, duration * v.factor(k, f.iteration, slot++), 0});
  };
  auto edge = [&](uint32_t from, uint32_t to, bool into_message) {
    if (into_message && !message_edges.insert({from, to}).second) return;
    f.graph.add_edge(from, to);
  };
  const bool root_is_first = roots.size() == 1 && ops[roots[0]].kind == Kind::compute;
  if (!root_is_first) c.first = compute(TaskKind::fwd, 0, 0.0);  // zero-time entry
  std::vector<uint32_t> handle(n, 0);
  for (int i = 0; i < n; ++i) {
    const ChakraOp& op = ops[i];
    if (op.kind == Kind::collective) {
      std::vector<uint32_t> preds;
      for (int d : op.preds)
        if (ops[d].kind != Kind::collective) preds.push_back(handle[d]);
      if (preds.empty()) {
        c.bwd[op.collective] = c.first;
      } else if (preds.size() == 1) {
        c.bwd[op.collective] = preds[0];
      } else {
        c.bwd[op.collective] = compute(TaskKind::bwd, i, 0.0);  // zero-time join
        for (uint32_t t : preds) f.graph.add_edge(t, c.bwd[op.collective]);
      }
      continue;
    }
    const bool message = op.kind != Kind::compute;
    handle[i] = message ? messages[op.message]
                        : compute(op.backward ? TaskKind::bwd : TaskKind::fwd, i, op.duration_s);
    if (root_is_first && i == roots[0]) c.first = handle[i];
    if (op.preds.empty() && !root_is_first) edge(c.first, handle[i], message);
    for (int d : op.preds) {
      if (ops[d].kind == Kind::collective)
        c.after_comm[ops[d].collective].push_back(handle[i]);
      else
        edge(handle[d], handle[i], message);
    }
  }
  std::vector<uint32_t> finals;
  for (int i = 0; i < n; ++i)
    if (ops[i].kind != Kind::collective && !has_successor[i]) finals.push_back(handle[i]);
  if (finals.empty()) {
    c.last_bwd = c.first;
  } else if (finals.size() == 1) {
    c.last_bwd = finals[0];
  } else {
    c.last_bwd = compute(TaskKind::bwd, n, 0.0);  // zero-time join of the final tasks
    for (uint32_t t : finals) f.graph.add_edge(t, c.last_bwd);
  }
  return c;
}

}  // namespace

std::vector<WorkerChain> add_chakra_chains(Fragment& f, const Scenario& s, const Workload& w,
                                           const ComputeVariability& v, double predict_s,
                                           int only_worker) {
  const ChakraProgram& p = *w.chakra;
  if (only_worker >= 0 && !p.messages.empty())
    throw InputError(s.source_file, "/workload/chakra",
                     "point-to-point messages join ranks: expected a scheme whose workers run "
                     "together (not async)");
  std::vector<uint32_t> messages;
  if (only_worker < 0)
    for (size_t m = 0; m < p.messages.size(); ++m) {
      const ChakraMessage& msg = p.messages[m];
      messages.push_back(f.graph.add_task({TaskKind::comm, msg.src, f.iteration,
                                           static_cast<int>(m), 0, msg.bytes, msg.src, msg.dst}));
    }
  std::set<std::pair<uint32_t, uint32_t>> message_edges;
  const int lo = only_worker >= 0 ? only_worker : 0;
  const int hi = only_worker >= 0 ? only_worker + 1 : s.workers;
  std::vector<WorkerChain> chains;
  for (int k = lo; k < hi; ++k) {
    int slot = 0;  // variability slots in creation order, as add_worker_chains numbers them
    WorkerChain c = rank_chain(f, p, k, v, messages, message_edges, slot);
    auto compute = [&](TaskKind kind, double duration) {
      return f.graph.add_task(
          {kind, k, f.iteration, 0, duration * v.factor(k, f.iteration, slot++), 0});
    };
    if (predict_s > 0) {
      c.predict = compute(TaskKind::predict, predict_s);
      f.graph.add_edge(c.last_bwd, c.predict);
    }
    c.update = compute(TaskKind::update, w.update_s);
    f.graph.add_edge(predict_s > 0 ? c.predict : c.last_bwd, c.update);
    chains.push_back(std::move(c));
  }
  return chains;
}

}  // namespace sgdsim
