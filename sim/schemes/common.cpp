#include "sim/schemes/common.hpp"

#include <algorithm>

#include "sim/schemes/chakra_chains.hpp"

namespace sgdsim {

std::vector<WorkerChain> add_worker_chains(Fragment& f, const Scenario& s, const Workload& w,
                                           const ComputeVariability& v, double predict_s,
                                           int only_worker) {
  if (w.chakra) return add_chakra_chains(f, s, w, v, predict_s, only_worker);
  const int buckets = static_cast<int>(w.buckets.size());
  const int lo = only_worker >= 0 ? only_worker : 0;
  const int hi = only_worker >= 0 ? only_worker + 1 : s.workers;
  std::vector<WorkerChain> chains(static_cast<size_t>(hi - lo));
  for (int k = lo; k < hi; ++k) {
    WorkerChain& c = chains[k - lo];
    int slot = 0;
    auto compute = [&](TaskKind kind, int index, double duration) {
      return f.graph.add_task(
          {kind, k, f.iteration, index, duration * v.factor(k, f.iteration, slot++), 0});
    };
    uint32_t prev = 0;
    bool has_prev = false;
    if (w.io_s > 0) {
      prev = compute(TaskKind::io, 0, w.io_s);
      has_prev = true;
    }
    const uint32_t fwd = compute(TaskKind::fwd, 0, w.forward_s);
    if (has_prev) f.graph.add_edge(prev, fwd);
    c.first = has_prev ? prev : fwd;
    prev = fwd;
    c.bwd.reserve(static_cast<size_t>(buckets));  // one allocation per worker, not log(buckets)
    for (int b = 0; b < buckets; ++b) {
      c.bwd.push_back(compute(TaskKind::bwd, b, w.buckets[b].backward_s));
      f.graph.add_edge(prev, c.bwd.back());
      prev = c.bwd.back();
    }
    c.last_bwd = prev;
    if (predict_s > 0) {
      c.predict = compute(TaskKind::predict, 0, predict_s);
      f.graph.add_edge(c.last_bwd, c.predict);
    }
    c.update = compute(TaskKind::update, 0, w.update_s);
    f.graph.add_edge(predict_s > 0 ? c.predict : c.last_bwd, c.update);
  }
  return chains;
}

int credit_waits_for(const Workload& w, size_t b, double in_flight_bytes) {
  // Buckets m..b may be in flight together while their bytes fit the credit; bucket b itself
  // always may start once the one before it is done.
  double bytes = w.buckets[b].bytes;
  size_t m = b;
  while (m > 0 && bytes + w.buckets[m - 1].bytes <= in_flight_bytes) bytes += w.buckets[--m].bytes;
  if (m == b) return static_cast<int>(b) - 1;
  return static_cast<int>(m) - 1;
}

std::vector<uint32_t> add_bucket_collectives(Fragment& f, const Scenario& s, const Workload& w,
                                             const std::vector<WorkerChain>& chains,
                                             double in_flight_bytes) {
  const bool wfbp = s.scheme.overlap == "wfbp";
  const size_t buckets = w.buckets.size();
  // Each collective's predecessors, read from the chains in one pass (at 10^5 workers the
  // chains and their separately allocated bwd lists are larger than the caches: one pass per
  // bucket, and another for the Chakra lists, read them from memory every time).
  std::vector<uint32_t> before(chains.size() * buckets);
  bool any_after = false;
  for (size_t k = 0; k < chains.size(); ++k) {
    const WorkerChain& c = chains[k];
    for (size_t b = 0; b < buckets; ++b) before[k * buckets + b] = wfbp ? c.bwd[b] : c.last_bwd;
    any_after = any_after || !c.after_comm.empty();
  }
  std::vector<uint32_t> comms;
  for (size_t b = 0; b < buckets; ++b) {
    const uint32_t comm = f.graph.add_task(
        {TaskKind::comm, -1, f.iteration, static_cast<int>(b), 0, w.buckets[b].bytes});
    for (size_t k = 0; k < chains.size(); ++k) f.graph.add_edge(before[k * buckets + b], comm);
    if (in_flight_bytes < 0) {
      if (b > 0) f.graph.add_edge(comms.back(), comm);
    } else if (const int after = credit_waits_for(w, b, in_flight_bytes); after >= 0) {
      f.graph.add_edge(comms[after], comm);
    }
    std::vector<uint32_t> waiting;  // Chakra: tasks after the collective (a message once)
    if (any_after)
      for (const auto& c : chains)
        if (b < c.after_comm.size())
          waiting.insert(waiting.end(), c.after_comm[b].begin(), c.after_comm[b].end());
    std::sort(waiting.begin(), waiting.end());
    waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
    for (uint32_t t : waiting) f.graph.add_edge(comm, t);
    comms.push_back(comm);
  }
  return comms;
}

void add_synchronizing_step(Fragment& f, const Scenario& s, const Workload& w,
                            const std::vector<WorkerChain>& chains) {
  const double in_flight = s.tensors_in_flight_bytes();
  auto comms = add_bucket_collectives(f, s, w, chains, in_flight);
  if (comms.empty()) return;
  // One at a time the last collective ends last; in flight together, any may.
  const size_t first = in_flight < 0 ? comms.size() - 1 : 0;
  for (const auto& c : chains)
    for (size_t b = first; b < comms.size(); ++b) f.graph.add_edge(comms[b], c.update);
}

void chain_iterations(Fragment& f, const std::vector<WorkerChain>& chains) {
  if (f.iteration == 0) return;
  for (const auto& c : chains) f.cross.push_back({1, c.update, c.first});
}

double per_parameter_time_s(const Workload& w, double flops_per_parameter) {
  const double pass_s = w.flop_pass_s > 0 ? w.flop_pass_s : w.update_s;
  return pass_s / kUpdateFlopsPerParameter * flops_per_parameter;
}

}  // namespace sgdsim
