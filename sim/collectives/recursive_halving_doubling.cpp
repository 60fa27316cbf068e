// Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by recursive
// doubling; non-powers of two fold into the nearest lower power first (MPICH). Leaves out
// MPICH's special handling of counts smaller than the number of ranks. Its halves are
// MPICH's reduce-scatter by recursive halving, log p a + (p-1)/p n (b + g), and all-gather by
// recursive doubling, log p a + (p-1)/p n b (Thakur, Rabenseifner & Gropp 2005, sections 3-4),
// on powers of two only (MPICH's non-power-of-two all-gather is Bruck's, not modelled).
#include <stdexcept>

#include "sim/collectives/building_blocks.hpp"

namespace sgdsim {

namespace {

class RecursiveHalvingDoubling final : public Collective {
 public:
  std::string name() const override { return "recursive_halving_doubling"; }

  std::vector<std::string> aliases() const override { return {"rhd"}; }
  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    const int p = g.ranks, pow2 = floor_pow2(p);
    if (g.op != CollectiveOp::allreduce) return p <= 1 ? 0 : 1.0 * p * ceil_log2(p);
    // MPICH's folding of the ranks above a power of two, then log2 rounds each way.
    return p <= 1 ? 0 : 2.0 * (p - pow2) + 2.0 * pow2 * ceil_log2(pow2);
  }
  bool runs_among_leaders() const override { return true; }
  std::optional<std::string> unsupported(CollectiveOp op, const CollectiveGroup& g) const override {
    if (op == CollectiveOp::allreduce || g.ranks == floor_pow2(g.ranks)) return std::nullopt;
    return std::string("recursive_halving_doubling runs ") + collective_op_name(op) +
           " on a power-of-two number of ranks only";
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    if (g.ranks < 2) return b.build();
    if (g.op != CollectiveOp::allreduce) return half(g, bytes);
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
    const AlphaBeta& ab = c.inter;
    if (g.op != CollectiveOp::allreduce) {
      const double q = static_cast<double>(g.ranks - 1) / g.ranks;
      const double gamma = g.op == CollectiveOp::reduce_scatter ? ab.gamma_s_per_byte : 0.0;
      return ceil_log2(g.ranks) * ab.alpha_s + q * n * (ab.beta_s_per_byte + gamma);
    }
    const Pof2Fold f(g.ranks);
    const double q = static_cast<double>(f.p2 - 1) / f.p2;
    const double t = 2.0 * ceil_log2(f.p2) * ab.alpha_s + 2.0 * q * n * ab.beta_s_per_byte +
                     q * n * ab.gamma_s_per_byte;
    return t + f.extra_cost_s(n, ab);
  }

 private:
  /// Reduce-scatter by recursive halving (n/2, n/4, ... exchanged and reduced) or all-gather
  /// by recursive doubling (n/p, 2n/p, ...), on a power of two.
  static Schedule half(const CollectiveGroup& g, double bytes) {
    if (g.ranks != floor_pow2(g.ranks))
      throw std::invalid_argument("recursive_halving_doubling: not a power of two");
    ScheduleBuilder b(g.ranks);
    const bool reduce = g.op == CollectiveOp::reduce_scatter;
    double size = reduce ? bytes : bytes / g.ranks;
    for (int mask = reduce ? 1 : g.ranks >> 1; reduce ? mask < g.ranks : mask >= 1;
         mask = reduce ? mask << 1 : mask >> 1) {
      if (reduce) size /= 2;
      b.next_round();
      for (int v = 0; v < g.ranks; ++v) b.add_mpi(v, v ^ mask, size, reduce ? size : 0.0);
      if (!reduce) size *= 2;
    }
    return b.build();
  }
};

const CollectiveRegistration recursive_halving_doubling_registration{
    std::make_unique<RecursiveHalvingDoubling>()};

}  // namespace

}  // namespace sgdsim
