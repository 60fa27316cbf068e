// Ring allreduce: reduce-scatter then allgather, 2(P-1) rounds of N/P-byte messages to the
// right neighbour. Leaves out pipelining in chunks smaller than N/P.
#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"

namespace sgdsim {

namespace {

class Ring final : public Collective {
 public:
  std::string name() const override { return "ring"; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks;
    ScheduleBuilder b(p);
    const double chunk = bytes / p;
    // A rank forwards what it received last round, after its own previous send; the first
    // p-1 rounds reduce what arrives, the last p-1 only copy it.
    for (int r = 0; p > 1 && r < 2 * (p - 1); ++r) {
      b.next_round();
      for (int i = 0; i < p; ++i) b.add_mpi(i, (i + 1) % p, chunk, r < p - 1 ? chunk : 0.0);
    }
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const int p = g.ranks;
    if (p < 2) return 0.0;
    const AlphaBeta& ab = c.inter;
    return 2.0 * (p - 1) * ab.alpha_s + 2.0 * (p - 1) / p * n * ab.beta_s_per_byte +
           static_cast<double>(p - 1) / p * n * ab.gamma_s_per_byte;
  }
};

}  // namespace

std::unique_ptr<Collective> make_ring() {
  return std::make_unique<Ring>();
}

}  // namespace sgdsim
