// Synchronous data-parallel SGD (BSP): each iteration's update waits for every bucket's
// allreduce; WFBP overlaps bucket collectives with the rest of backprop. Leaves out the
// MG-WFBP merge rule and any gradient compression.
#include "sim/schemes/registry.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

namespace {

class Sync final : public Scheme {
 public:
  explicit Sync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        variability_(c.scenario->variability, c.scenario->seed, c.scenario->workers) {}

  std::string name() const override { return "sync"; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    const int workers = s_.workers;
    const int buckets = static_cast<int>(w_.buckets.size());
    const bool wfbp = s_.scheme.overlap == "wfbp";
    std::vector<uint32_t> first(workers), last_bwd(workers), update(workers);
    std::vector<std::vector<uint32_t>> bwd(workers, std::vector<uint32_t>(buckets));
    for (int w = 0; w < workers; ++w) {
      int slot = 0;
      auto compute = [&](TaskKind kind, int index, double duration) {
        return f.graph.add_task(
            {kind, w, iteration, index, duration * variability_.factor(w, iteration, slot++), 0});
      };
      uint32_t prev = 0;
      bool has_prev = false;
      if (w_.io_s > 0) {
        prev = compute(TaskKind::io, 0, w_.io_s);
        has_prev = true;
      }
      uint32_t fwd = compute(TaskKind::fwd, 0, w_.forward_s);
      if (has_prev) f.graph.add_edge(prev, fwd);
      first[w] = has_prev ? prev : fwd;
      prev = fwd;
      for (int b = 0; b < buckets; ++b) {
        bwd[w][b] = compute(TaskKind::bwd, b, w_.buckets[b].backward_s);
        f.graph.add_edge(prev, bwd[w][b]);
        prev = bwd[w][b];
      }
      last_bwd[w] = prev;
      update[w] = compute(TaskKind::update, 0, w_.update_s);
    }
    // One collective stream: bucket b after bucket b-1, once every worker has its gradient.
    uint32_t prev_comm = 0;
    for (int b = 0; b < buckets; ++b) {
      uint32_t comm = f.graph.add_task({TaskKind::comm, -1, iteration, b, 0, w_.buckets[b].bytes});
      for (int w = 0; w < workers; ++w) f.graph.add_edge(wfbp ? bwd[w][b] : last_bwd[w], comm);
      if (b > 0) f.graph.add_edge(prev_comm, comm);
      prev_comm = comm;
    }
    for (int w = 0; w < workers; ++w) {
      f.graph.add_edge(buckets > 0 ? prev_comm : last_bwd[w], update[w]);
      if (buckets > 0) f.graph.add_edge(last_bwd[w], update[w]);
      if (iteration > 0) f.cross.push_back({1, update[w], first[w]});
    }
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability variability_;
};

}  // namespace

std::unique_ptr<Scheme> make_sync(const SchemeContext& context) {
  return std::make_unique<Sync>(context);
}

}  // namespace sgdsim
