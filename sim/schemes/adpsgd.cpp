// Asynchronous decentralized parallel SGD, AD-PSGD (Lian, Zhang, Zhang & Liu, "Asynchronous
// Decentralized Parallel Stochastic Gradient Descent", ICML 2018). Models: every worker, with
// no barrier, reads its replica, computes its gradient there, then averages its replica with
// one neighbour picked at random (seeded, per worker and iteration) among its neighbours in
// `peers` (either direction of an edge of the named topology): the two send each other their
// whole parameter vector, and once both messages have arrived both replicas become their mean
// (atomically, at the start of the worker's update), after which the worker applies its
// gradient to its own replica. Other workers' averagings may change a replica between the read
// and the update: that count is the staleness `summary.json` reports. Leaves out the paper's
// bipartite active/passive split (it avoids deadlocks of real locks, which a simulation does
// not have), the partner's side of the exchange on the partner's device (its communication
// thread does not delay its compute) and matrix files.
#include <algorithm>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/core/rng.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"
#include "sim/schemes/gossip.hpp"

namespace sgdsim {

namespace {

/// Each worker's neighbours in the named topology, either direction of an edge, sorted.
std::vector<std::vector<int>> peer_lists(const Scenario& s) {
  const MixingRows rows = topology_mixing(s.scheme.params.text("peers"), s.workers);
  std::vector<std::set<int>> peers(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (const auto& [j, weight] : rows[i])
      if (j != static_cast<int>(i)) {
        peers[i].insert(j);
        peers[static_cast<size_t>(j)].insert(static_cast<int>(i));
      }
  std::vector<std::vector<int>> out;
  for (const auto& p : peers) out.emplace_back(p.begin(), p.end());
  return out;
}

class Adpsgd final : public Scheme {
 public:
  explicit Adpsgd(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        peers_(peer_lists(*c.scenario)) {
    if (w_.chakra)
      throw InputError(s_.source_file, "/workload/chakra",
                       "\"adpsgd\" with a Chakra workload: expected a model profile (the scheme "
                       "adds its own neighbour messages)");
  }

  std::string name() const override { return "adpsgd"; }
  int groups() const override { return s_.workers; }
  Fragment build(int iteration) const override { return combine_groups(*this, iteration); }

  /// [io ->] fwd -> bwd -> (message to the partner, message from it) -> update, whose `dst`
  /// names the partner (-1: none); the next iteration starts after the update.
  Fragment build_group(int iteration, int k) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_, 0.0, k);
    const WorkerChain& c = chains[0];
    const int partner = pick(k, iteration);
    if (partner >= 0) {
      f.graph.task(c.update).dst = partner;
      const double bytes = w_.gradient_bytes;
      const uint32_t out =
          f.graph.add_task({TaskKind::comm, k, iteration, 0, 0, bytes, k, partner});
      const uint32_t in = f.graph.add_task({TaskKind::comm, k, iteration, 1, 0, bytes, partner, k});
      for (uint32_t m : {out, in}) {
        f.graph.add_edge(c.last_bwd, m);
        f.graph.add_edge(m, c.update);
      }
    }
    chain_iterations(f, chains);
    return f;
  }

 private:
  /// Worker k's partner in `iteration`: uniform among its peers, from the scenario's seed.
  int pick(int k, int iteration) const {
    const auto& p = peers_[static_cast<size_t>(k)];
    if (p.empty()) return -1;
    Rng rng(s_.seed,
            0x41445053ULL + (static_cast<uint64_t>(iteration) << 24) + static_cast<uint64_t>(k));
    return p[rng.next_u64() % p.size()];
  }

  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  std::vector<std::vector<int>> peers_;
};

SchemeTraits adpsgd_traits() {
  SchemeTraits t;
  // Two messages per worker and iteration, no collective.
  t.activities = [](const Scenario& s, ActivityCount& a) {
    a.comms = 2.0 * s.workers;
    a.largest_collective = 1;
    a.schedule_bytes = 0;
    a.live_tasks += 2.0 * s.workers;
  };
  return t;
}

std::vector<SchemeParam> adpsgd_params() {
  Param peers{.key = "peers",
              .type = ParamType::choice,
              .default_value = "ring",
              .brief =
                  "`adpsgd` only: the graph each worker picks its random averaging partner "
                  "in (either direction of an edge of `ring`, `torus`, `exponential` or "
                  "`complete`, as for dpsgd's topology)"};
  peers.choices = gossip_topology_names();
  return {{peers}};
}

const SchemeRegistration adpsgd_registration{
    {"adpsgd", adpsgd_params(), nullptr, nullptr, nullptr},
    [](const SchemeContext& c) { return std::make_unique<Adpsgd>(c); },
    [](const Scenario& s) {
      return UpdateRule{
          GossipUpdate{topology_mixing(s.scheme.params.text("peers"), s.workers), true}};
    },
    adpsgd_traits()};

}  // namespace

}  // namespace sgdsim
