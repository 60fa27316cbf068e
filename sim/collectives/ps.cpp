// Parameter-server allreduce: every rank pushes shard s (N/S bytes) to server s (the first S
// ranks), servers reduce, then every rank pulls every shard; pushes into one server share its
// link. Leaves out dedicated server hosts and asynchronous (per-worker) updates.
#include <fmt/format.h>

#include <algorithm>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {

int shards(const CollectiveGroup& g) {
  return g.servers <= 0 ? g.ranks : std::min(g.servers, g.ranks);
}

class ParameterServer final : public Collective {
 public:
  std::string name() const override { return "ps"; }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    const int p = g.ranks;
    if (p <= 1) return 0;
    const double servers = g.servers <= 0 ? p : std::min(g.servers, p);
    return 2.0 * p * servers;
  }
  std::optional<OptionProblem> check(const CollectiveGroup& g) const override {
    if (g.server_placement == "colocated" && g.servers > g.ranks)
      return OptionProblem{"servers",
                           fmt::format("expected at most {} (co-located servers sit on the "
                                       "workers' hosts, one each), got {}",
                                       g.ranks, g.servers)};
    return std::nullopt;
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks, s = shards(g);
    ScheduleBuilder b(p);
    const double shard = bytes / s;
    std::vector<std::vector<uint32_t>> pushes(static_cast<size_t>(s));
    for (int w = 0; w < p; ++w)
      for (int k = 0; k < s; ++k)
        if (w != k) pushes[k].push_back(b.add(w, k, shard, shard, {}));
    for (int k = 0; k < s; ++k)
      for (int w = 0; w < p; ++w)
        if (w != k) b.set_from_server(b.add(k, w, shard, 0, pushes[k]));
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const int p = g.ranks, s = shards(g);
    if (p < 2) return 0.0;
    // Each server's link carries p-1 shards each way, shared fairly by concurrent flows.
    const AlphaBeta& ab = c.inter;
    const double load = (p - 1) * n / s;
    return 2.0 * ab.alpha_s + 2.0 * load * ab.beta_s_per_byte + load * ab.gamma_s_per_byte;
  }
};

const CollectiveRegistration ps_registration{std::make_unique<ParameterServer>()};

}  // namespace

}  // namespace sgdsim
