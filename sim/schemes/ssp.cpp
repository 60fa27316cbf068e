// Stale synchronous parallel (Ho et al. 2013) over allreduce: the update of step i applies
// the averaged gradient of step i - s, so no worker runs more than s iterations ahead of the
// slowest; s = 0 is sync. Leaves out parameter-server SSP with per-worker clocks.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {

namespace {

class Ssp final : public Scheme {
 public:
  explicit Ssp(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        staleness_(c.scenario->scheme.staleness) {
    require_allreduce_buckets(s_, w_);
  }

  std::string name() const override { return "ssp"; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    auto comms = add_bucket_collectives(f, s_, w_, chains);
    chain_iterations(f, chains);
    if (!comms.empty()) {
      if (staleness_ == 0) {
        for (const auto& c : chains) f.graph.add_edge(comms.back(), c.update);
      } else if (iteration >= staleness_) {
        for (const auto& c : chains) f.cross.push_back({staleness_, comms.back(), c.update});
      }
      if (iteration > 0 && staleness_ > 0) f.cross.push_back({1, comms.back(), comms.front()});
    }
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  int staleness_;
};

}  // namespace

namespace {
SchemeTraits ssp_traits() {
  SchemeTraits t;
  t.fixed_staleness = [](const Scenario& s) { return std::optional<int>(s.scheme.staleness); };
  return t;
}

std::vector<SchemeParam> ssp_params() {
  return {bind_scheme_param({.key = "staleness",
                             .type = ParamType::integer,
                             .default_value = 1,
                             .brief = "`ssp` only: bound s (0 = sync)",
                             .min = 0,
                             .max = 1 << 20},
                            &SchemeSpec::staleness),
          accumulation_steps_param()};
}

const SchemeRegistration ssp_registration{
    {"ssp", ssp_params(), check_accumulation, nullptr, nullptr, true},
    [](const SchemeContext& c) { return std::make_unique<Ssp>(c); },
    [](const Scenario& s) {
      return UpdateRule{AveragedUpdate{s.scheme.staleness, false}};
    },
    ssp_traits()};
}  // namespace

}  // namespace sgdsim
