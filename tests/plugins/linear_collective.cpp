// A collective registered from outside sim/collectives, as a user would add one: "linear"
// reduces along the chain 0 -> 1 -> ... -> p-1 and broadcasts back p-1 -> ... -> 0. Its own
// option `segments` (declared here, nowhere else) cuts the message into k pieces that follow
// each other down the chain (a pipelined chain; the broadcast starts once the reduction has
// ended): 2(p+k-2) (alpha + n/k beta) + (p+k-2) n/k gamma. It leaves out overlapping the
// broadcast with the reduction.
#include "sim/collectives/collective.hpp"

namespace sgdsim {
namespace {

int segments(const CollectiveGroup& g) {
  return static_cast<int>(g.params.number("segments"));
}

class Linear final : public Collective {
 public:
  std::string name() const override { return "linear"; }

  std::vector<CollectiveParam> params() const override {
    return {{{.key = "segments",
              .type = ParamType::integer,
              .default_value = 1,
              .brief = "pieces the message is cut into down the chain",
              .min = 1,
              .max = 64,
              .exclusive = true}}};
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    ScheduleBuilder b(g.ranks);
    const int k = segments(g);
    const double piece = bytes / k;
    // prev[s]: segment s's step on the previous hop; a hop sends its segments in order.
    std::vector<std::vector<uint32_t>> prev(static_cast<size_t>(k));
    auto hop = [&](int src, int dst, double reduce) {
      std::vector<uint32_t> before;
      for (int s = 0; s < k; ++s) {
        std::vector<uint32_t> preds = prev[s];
        preds.insert(preds.end(), before.begin(), before.end());
        prev[s] = before = {b.add(src, dst, piece, reduce, preds)};
      }
    };
    for (int r = 0; r + 1 < g.ranks; ++r) hop(r, r + 1, piece);
    // The broadcast's first piece waits for the reduction's last.
    if (g.ranks > 1)
      for (auto& p : prev) p = prev.back();
    for (int r = g.ranks - 1; r > 0; --r) hop(r, r - 1, 0);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    if (g.ranks < 2) return 0;
    const int k = segments(g);
    const double steps = g.ranks + k - 2, piece = n / k;
    return 2 * steps * (c.inter.alpha_s + piece * c.inter.beta_s_per_byte) +
           steps * piece * c.inter.gamma_s_per_byte;
  }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    return 2.0 * std::max(0, g.ranks - 1) * segments(g);
  }
};

const CollectiveRegistration registration{std::make_unique<Linear>()};

}  // namespace
}  // namespace sgdsim
