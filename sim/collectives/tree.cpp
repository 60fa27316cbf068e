// Binomial-tree allreduce: reduce onto rank 0, then broadcast from it, ceil(log2 p) levels
// each way, whole buffer per message. Leaves out pipelined (segmented) trees such as NCCL's.
#include <numeric>

#include "sim/collectives/building_blocks.hpp"

namespace sgdsim {

namespace {

class Tree final : public Collective {
 public:
  std::string name() const override { return "tree"; }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    return g.ranks <= 1 ? 0 : 2.0 * (g.ranks - 1);
  }
  bool runs_among_leaders() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    std::vector<int> members(static_cast<size_t>(g.ranks));
    std::iota(members.begin(), members.end(), 0);
    add_binomial_reduce(b, members, bytes);
    add_binomial_bcast(b, members, bytes);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const int levels = ceil_log2(g.ranks);
    const AlphaBeta& ab = c.inter;
    return levels * (2.0 * (ab.alpha_s + n * ab.beta_s_per_byte) + n * ab.gamma_s_per_byte);
  }
};

const CollectiveRegistration tree_registration{std::make_unique<Tree>()};

}  // namespace

}  // namespace sgdsim
