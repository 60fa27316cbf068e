// Recursive doubling allreduce: log p rounds in which partners at distance 2^k exchange and
// reduce the whole buffer; non-powers of two fold first (MPICH). Best for small messages.
#include "sim/collectives/building_blocks.hpp"

namespace sgdsim {

namespace {

class RecursiveDoubling final : public Collective {
 public:
  std::string name() const override { return "recursive_doubling"; }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    const int p = g.ranks, pow2 = floor_pow2(p);
    return p <= 1 ? 0 : 2.0 * (p - pow2) + 1.0 * pow2 * ceil_log2(pow2);
  }
  bool runs_among_leaders() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    if (g.ranks < 2) return b.build();
    Pof2Fold f(g.ranks);
    f.add_pre(b, bytes);
    for (int mask = 1; mask < f.p2; mask <<= 1) {
      b.next_round();
      for (int v = 0; v < f.p2; ++v) b.add_mpi(f.real(v), f.real(v ^ mask), bytes, bytes);
    }
    f.add_post(b, bytes);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    if (g.ranks < 2) return 0.0;
    const Pof2Fold f(g.ranks);
    const AlphaBeta& ab = c.inter;
    const double t =
        ceil_log2(f.p2) * (ab.alpha_s + n * ab.beta_s_per_byte + n * ab.gamma_s_per_byte);
    return t + f.extra_cost_s(n, ab);
  }
};

const CollectiveRegistration recursive_doubling_registration{std::make_unique<RecursiveDoubling>()};

}  // namespace

}  // namespace sgdsim
