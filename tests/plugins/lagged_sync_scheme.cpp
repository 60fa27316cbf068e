// A scheme registered from outside sim/schemes, as a user would add one: "lagged_sync"
// applies the averaged gradient of iteration i - lag at the update of iteration i (its own
// option `lag`). It models ssp's graph without ssp's code, so PluginScheme tests can compare
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
        lag_(c.scenario->scheme.options.at("lag").get<int>()) {}

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

void read_options(JsonObject& sc, Scenario& s) {
  const int lag = sc.has("lag") ? static_cast<int>(sc.get_int("lag", 0, 1000)) : 1;
  s.scheme.options["lag"] = lag;
  s.resolved["scheme"]["lag"] = lag;
}

const SchemeRegistration registration{
    {"lagged_sync",
     {{"/scheme/lag", field_schema::integer(0, 1000), "`1`", "iterations of delay", "scenario"}},
     read_options,
     nullptr,
     nullptr},
    [](const SchemeContext& c) { return std::make_unique<LaggedSync>(c); },
    [](const Scenario& s) {
      return UpdateRule{AveragedUpdate{s.scheme.options.at("lag").get<int>(), false}};
    }};

}  // namespace
}  // namespace sgdsim
