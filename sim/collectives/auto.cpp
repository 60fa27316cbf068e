// "auto": picks an algorithm per message size and group size the way MPI libraries' fixed
// decision rules do: recursive doubling below 8 KiB, Rabenseifner for powers of two or below
// 512 KiB, ring otherwise. All-gather and reduce-scatter: recursive doubling / halving for
// powers of two below 512 KiB, ring otherwise (MPICH's MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE
// 512 KiB; its Bruck and pairwise variants are not modelled). Leaves out tuning tables
// measured on a real machine.
#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {

class Auto final : public Collective {
 public:
  std::string name() const override { return "auto"; }

  double message_count(const CollectiveGroup& g, double bytes) const override {
    return pick(g, bytes).message_count(g, bytes);
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    return pick(g, bytes).schedule(g, bytes);
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    return pick(g, n).formula_s(g, n, c);
  }

  std::optional<std::string> unsupported(CollectiveOp, const CollectiveGroup&) const override {
    return std::nullopt;
  }
  std::string chosen(const CollectiveGroup& g, double bytes) const override {
    return pick(g, bytes).name();
  }

  /// The algorithm used for `bytes` on the group.
  static const Collective& pick(const CollectiveGroup& g, double bytes) {
    const bool pow2 = g.ranks > 0 && (g.ranks & (g.ranks - 1)) == 0;
    if (g.op != CollectiveOp::allreduce)
      return collective_by_name(pow2 && bytes < 524288 ? "recursive_halving_doubling" : "ring");
    if (bytes < 8192) return collective_by_name("recursive_doubling");
    if (pow2 || bytes < 524288) return collective_by_name("recursive_halving_doubling");
    return collective_by_name("ring");
  }
};

const CollectiveRegistration auto_registration{std::make_unique<Auto>()};

}  // namespace

}  // namespace sgdsim
