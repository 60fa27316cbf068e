// Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by recursive
// doubling; non-powers of two fold into the nearest lower power first (MPICH). Leaves out
// MPICH's special handling of counts smaller than the number of ranks.
#include "sim/collectives/building_blocks.hpp"

namespace sgdsim {

namespace {

class RecursiveHalvingDoubling final : public Collective {
 public:
  std::string name() const override { return "recursive_halving_doubling"; }

  std::vector<std::string> aliases() const override { return {"rhd"}; }
  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    const int p = g.ranks, pow2 = floor_pow2(p);
    // MPICH's folding of the ranks above a power of two, then log2 rounds each way.
    return p <= 1 ? 0 : 2.0 * (p - pow2) + 2.0 * pow2 * ceil_log2(pow2);
  }
  bool runs_among_leaders() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    if (g.ranks < 2) return b.build();
    Pof2Fold f(g.ranks);
    f.add_pre(b, bytes);
    double size = bytes;
    for (int mask = 1; mask < f.p2; mask <<= 1) {  // reduce-scatter: halve what is exchanged
      size /= 2;
      b.next_round();
      for (int v = 0; v < f.p2; ++v) b.add_mpi(f.real(v), f.real(v ^ mask), size, size);
    }
    for (int mask = f.p2 >> 1; mask >= 1; mask >>= 1) {  // allgather: double it back
      b.next_round();
      for (int v = 0; v < f.p2; ++v) b.add_mpi(f.real(v), f.real(v ^ mask), size, 0);
      size *= 2;
    }
    f.add_post(b, bytes);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    if (g.ranks < 2) return 0.0;
    const Pof2Fold f(g.ranks);
    const AlphaBeta& ab = c.inter;
    const double q = static_cast<double>(f.p2 - 1) / f.p2;
    const double t = 2.0 * ceil_log2(f.p2) * ab.alpha_s + 2.0 * q * n * ab.beta_s_per_byte +
                     q * n * ab.gamma_s_per_byte;
    return t + f.extra_cost_s(n, ab);
  }
};

const CollectiveRegistration registration{std::make_unique<RecursiveHalvingDoubling>()};

}  // namespace

}  // namespace sgdsim
