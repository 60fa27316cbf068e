// Two-level allreduce: binomial reduce onto each node's first rank, an allreduce among those
// leaders (ring or recursive_halving_doubling), then a binomial broadcast inside each node.
// Leaves out multi-rail and NVLink-SHARP style in-switch reduction.
#include <algorithm>
#include <stdexcept>

#include "sim/collectives/building_blocks.hpp"
#include "sim/collectives/registry.hpp"

namespace sgdsim {

namespace {

class Hierarchical final : public Collective {
 public:
  std::string name() const override { return "hierarchical"; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks, d = std::max(1, std::min(g.ranks_per_node, g.ranks));
    const int nodes = (p + d - 1) / d;
    ScheduleBuilder b(p);
    auto members = [&](int node) {
      std::vector<int> m;
      for (int r = node * d; r < std::min(p, (node + 1) * d); ++r) m.push_back(r);
      return m;
    };
    for (int k = 0; k < nodes; ++k) add_binomial_reduce(b, members(k), bytes);
    // Embed the leaders' allreduce; its first steps follow each leader's intra-node reduce.
    const Schedule inner = inter(g).schedule(CollectiveGroup{nodes}, bytes);
    std::vector<std::vector<uint32_t>> inner_preds(inner.steps.size());
    for (uint32_t s = 0; s < inner.steps.size(); ++s)
      for (uint32_t k = inner.succ_offsets[s]; k < inner.succ_offsets[s + 1]; ++k)
        inner_preds[inner.succ[k]].push_back(s);
    const uint32_t base = b.size();
    // Where each leader stood after its intra-node reduce (before any inter-node step).
    std::vector<std::vector<uint32_t>> ready(static_cast<size_t>(p));
    for (int k = 0; k < nodes; ++k)
      for (const auto& q : {b.last_send(k * d), b.last_recv(k * d)})
        if (q) ready[k * d].push_back(*q);
    for (uint32_t s = 0; s < inner.steps.size(); ++s) {
      const CommStep& st = inner.steps[s];
      const int src = st.src * d, dst = st.dst * d;
      std::vector<uint32_t> preds;
      for (uint32_t q : inner_preds[s]) preds.push_back(base + q);
      if (inner.pred_count[s] == 0) {
        preds.insert(preds.end(), ready[src].begin(), ready[src].end());
        preds.insert(preds.end(), ready[dst].begin(), ready[dst].end());
      }
      b.add(src, dst, st.bytes, st.reduce_bytes, std::move(preds));
    }
    for (int k = 0; k < nodes; ++k) add_binomial_bcast(b, members(k), bytes);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const int d = std::max(1, std::min(g.ranks_per_node, g.ranks));
    const int nodes = (g.ranks + d - 1) / d;
    const int levels = ceil_log2(d);
    const AlphaBeta& in = c.intra;
    return levels * (2.0 * (in.alpha_s + n * in.beta_s_per_byte) + n * in.gamma_s_per_byte) +
           inter(g).formula_s(CollectiveGroup{nodes}, n, NetworkCost{c.inter, c.inter});
  }

 private:
  static const Collective& inter(const CollectiveGroup& g) {
    if (g.inter_algorithm == name_of_self())
      throw std::invalid_argument("hierarchical cannot nest itself");
    return collective_by_name(g.inter_algorithm);
  }
  static std::string name_of_self() { return "hierarchical"; }
};

}  // namespace

std::unique_ptr<Collective> make_hierarchical() {
  return std::make_unique<Hierarchical>();
}

}  // namespace sgdsim
