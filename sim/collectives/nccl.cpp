// "nccl": chooses between NCCL's two allreduce algorithms the way NCCL's tuner does
// (src/graph/tuning.cc, ncclTopoGetAlgoTime): predict each algorithm's time as latency +
// bytes / bandwidth and take the smaller. Here the prediction is each candidate's formula_s,
// the closed form the flow level equals, with the group's tuning_cost (else the given cost).
// Candidates: the ring over all ranks (NCCL's rings run through every GPU), and NCCL's tree:
// the double binary tree with one rank per node, the chain through the node's ranks on one
// node, chain inside nodes + double binary tree among node leaders otherwise. chunk_bytes and
// channels apply to both. Leaves out NCCL's protocols (LL, LL128, Simple), CollNet/NVLS and
// its measured per-architecture latency and bandwidth tables. All-gather and reduce-scatter run
// on the ring (NCCL 2.8-2.18 has only the ring algorithm for them:
// ncclTopoTuneModel in src/graph/tuning.cc skips every other algorithm for them).
#include <algorithm>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {

class Nccl final : public Collective {
 public:
  std::string name() const override { return "nccl"; }
  int oldest_nccl_minor() const override { return 4; }  // its tree came in NCCL 2.4

  double message_count(const CollectiveGroup& g, double bytes) const override {
    // Whichever it picks: at most the larger of its candidates.
    CollectiveGroup tree = g;
    tree.intra_algorithm = "chain";
    tree.inter_algorithm = "double_binary_tree";
    const double ring = collective_by_name("ring").message_count(g, bytes);
    return std::max(ring, g.ranks_per_node > 1
                              ? collective_by_name("hierarchical").message_count(tree, bytes)
                              : collective_by_name("double_binary_tree").message_count(g, bytes));
  }
  bool needs_route_costs() const override { return true; }
  std::optional<std::string> unsupported(CollectiveOp, const CollectiveGroup&) const override {
    return std::nullopt;
  }
  bool needs_block_placement() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    if (!g.tuning_cost)
      throw std::invalid_argument("the nccl collective needs the group's tuning_cost");
    const auto [c, group] = pick(g, bytes, *g.tuning_cost);
    return c->schedule(group, bytes);
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& cost) const override {
    const auto [c, group] = pick(g, n, g.tuning_cost ? *g.tuning_cost : cost);
    return c->formula_s(group, n, cost);
  }

  std::string chosen(const CollectiveGroup& g, double bytes) const override {
    if (!g.tuning_cost) return name();
    const auto [c, group] = pick(g, bytes, *g.tuning_cost);
    return c->name() == "hierarchical" ? "hierarchical(chain, double_binary_tree)" : c->name();
  }

 private:
  /// NCCL's choice for `bytes` on the group: the algorithm and the group it runs on.
  static std::pair<const Collective*, CollectiveGroup> pick(const CollectiveGroup& g, double bytes,
                                                            const NetworkCost& cost) {
    CollectiveGroup tree = g;
    tree.tuning_cost.reset();
    const int d = std::max(1, std::min(g.ranks_per_node, g.ranks));
    const Collective* tree_algo = &collective_by_name("hierarchical");
    if (d == 1) {
      tree_algo = &collective_by_name("double_binary_tree");
    } else {
      tree.intra_algorithm = "chain";
      tree.inter_algorithm = "double_binary_tree";
    }
    CollectiveGroup ring = g;
    ring.tuning_cost.reset();
    const Collective& r = collective_by_name("ring");
    if (g.ranks < 2 || g.op != CollectiveOp::allreduce) return {&r, ring};
    // Ties go to the ring, NCCL's default before trees existed.
    if (tree_algo->formula_s(tree, bytes, cost) < r.formula_s(ring, bytes, cost))
      return {tree_algo, tree};
    return {&r, ring};
  }
};

const CollectiveRegistration nccl_registration{std::make_unique<Nccl>()};

}  // namespace

}  // namespace sgdsim
