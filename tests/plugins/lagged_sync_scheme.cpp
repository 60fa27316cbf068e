// A scheme registered from outside sim/schemes, as a user would add one: "lagged_sync"
// applies the averaged gradient of iteration i - lag at the update of iteration i (its own
// option `lag`, declared here once: the scenario reads it, `sgdsim schema` and the field
// table list it). It models ssp's graph without ssp's code, so PluginScheme tests can compare
// the two; it leaves out everything ssp leaves out.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {
namespace {

class LaggedSync final : public Scheme {
 public:
  explicit LaggedSync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        lag_(static_cast<int>(c.scenario->scheme.params.number("lag"))) {}

  std::string name() const override { return "lagged_sync"; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    auto comms = add_bucket_collectives(f, s_, w_, chains);
    chain_iterations(f, chains);
    if (comms.empty()) return f;
    if (lag_ == 0)
      for (const auto& c : chains) f.graph.add_edge(comms.back(), c.update);
    else if (iteration >= lag_)
      for (const auto& c : chains) f.cross.push_back({lag_, comms.back(), c.update});
    if (iteration > 0 && lag_ > 0) f.cross.push_back({1, comms.back(), comms.front()});
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  int lag_;
};

const SchemeRegistration registration{
    {"lagged_sync",
     {{{.key = "lag",
        .type = ParamType::integer,
        .default_value = 1,
        .brief = "iterations of delay",
        .min = 0,
        .max = 1000}}},
     nullptr,
     nullptr},
    [](const SchemeContext& c) { return std::make_unique<LaggedSync>(c); },
    [](const Scenario& s) {
      return UpdateRule{AveragedUpdate{static_cast<int>(s.scheme.params.number("lag")), false}};
    }};

}  // namespace
}  // namespace sgdsim
