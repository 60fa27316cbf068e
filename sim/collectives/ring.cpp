// Ring allreduce (reduce-scatter then allgather, 2(P-1) rounds of N/P-byte messages to the
// right neighbour). Leaves out: pipelining in chunks smaller than N/P and reduction compute.
#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"

namespace sgdsim {

namespace {

class Ring final : public Collective {
 public:
  std::string name() const override { return "ring"; }

  Schedule schedule(int p, double bytes) const override {
    Schedule s;
    s.ranks = p;
    if (p < 2) return s;
    const int rounds = 2 * (p - 1);
    const double chunk = bytes / p;
    std::vector<std::vector<uint32_t>> preds(static_cast<size_t>(rounds) * p);
    s.steps.reserve(preds.size());
    auto id = [p](int round, int rank) { return static_cast<uint32_t>(round * p + rank); };
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < p; ++i) {
        s.steps.push_back({i, (i + 1) % p, chunk});
        if (r > 0) {
          // A rank forwards what it received last round, after its own previous send.
          preds[id(r, i)].push_back(id(r - 1, (i + p - 1) % p));
          preds[id(r, i)].push_back(id(r - 1, i));
        }
      }
    }
    s.set_dependencies(preds);
    return s;
  }

  double formula_s(int p, double n, const AlphaBeta& ab) const override {
    if (p < 2) return 0.0;
    return 2.0 * (p - 1) * ab.alpha_s + 2.0 * (p - 1) / p * n * ab.beta_s_per_byte +
           static_cast<double>(p - 1) / p * n * ab.gamma_s_per_byte;
  }
};

}  // namespace

std::unique_ptr<Collective> make_ring() {
  return std::make_unique<Ring>();
}

}  // namespace sgdsim
