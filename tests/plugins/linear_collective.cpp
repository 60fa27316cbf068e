// A collective registered from outside sim/collectives, as a user would add one: "linear"
// reduces along the chain 0 -> 1 -> ... -> p-1 and broadcasts back p-1 -> ... -> 0, one whole
// message at a time: 2(p-1) (alpha + n beta) + (p-1) n gamma. It leaves out pipelining.
#include "sim/collectives/collective.hpp"

namespace sgdsim {
namespace {

class Linear final : public Collective {
 public:
  std::string name() const override { return "linear"; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    std::vector<uint32_t> last;
    for (int r = 0; r + 1 < g.ranks; ++r) last = {b.add(r, r + 1, bytes, bytes, last)};
    for (int r = g.ranks - 1; r > 0; --r) last = {b.add(r, r - 1, bytes, 0, last)};
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const double hops = g.ranks - 1;
    return 2 * hops * (c.inter.alpha_s + n * c.inter.beta_s_per_byte) +
           hops * n * c.inter.gamma_s_per_byte;
  }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    return 2.0 * std::max(0, g.ranks - 1);
  }
};

const CollectiveRegistration registration{std::make_unique<Linear>()};

}  // namespace
}  // namespace sgdsim
