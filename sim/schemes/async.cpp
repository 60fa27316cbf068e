// Asynchronous parameter-server SGD (Dean et al.): after its backward pass a worker pushes one
// gradient shard to each of S servers, each server applies shards one at a time in arrival
// order, and the worker pulls the shard back and continues; no barrier between workers.
// Leaves out bounded-delay variants and server replication.
#include <algorithm>

#include "sim/schemes/common.hpp"
#include "sim/schemes/registry.hpp"

namespace sgdsim {

namespace {

class Async final : public Scheme {
 public:
  explicit Async(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        worker_side_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        servers_(c.scenario->scheme.servers) {
    worker_side_.update_s = 0;  // the optimizer runs on the servers (apply tasks)
  }

  std::string name() const override { return "async"; }
  int groups() const override { return s_.workers; }

  Fragment build(int iteration) const override { return combine_groups(*this, iteration); }

  Fragment build_group(int iteration, int k) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, worker_side_, v_, 0.0, k);
    const double shard_bytes = w_.gradient_bytes / servers_;
    const double apply_s = w_.update_s / servers_;
    {
      for (int sv = 0; sv < servers_; ++sv) {
        const int server_host = server_host_index(s_, sv);
        Task push{TaskKind::comm, k, iteration, sv, 0, shard_bytes, k, server_host};
        Task apply{TaskKind::apply, k, iteration, sv, apply_s, 0, k, server_host, sv};
        Task pull{TaskKind::comm, k, iteration, sv, 0, shard_bytes, server_host, k, -1, true};
        const uint32_t p = f.graph.add_task(push), a = f.graph.add_task(apply),
                       q = f.graph.add_task(pull);
        f.graph.add_edge(chains[0].last_bwd, p);
        f.graph.add_edge(p, a);
        f.graph.add_edge(a, q);
        f.graph.add_edge(q, chains[0].update);
      }
    }
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  Workload worker_side_;
  ComputeVariability v_;
  int servers_;
};

}  // namespace

int server_host_index(const Scenario& s, int server) {
  return s.scheme.server_placement == "dedicated" ? s.workers + server : server;
}

std::unique_ptr<Scheme> make_async(const SchemeContext& context) {
  return std::make_unique<Async>(context);
}

}  // namespace sgdsim
