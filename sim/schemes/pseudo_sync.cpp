// Pseudo-synchronous SGD (Wen et al., IJPP 2024): iteration i's allreduce overlaps iteration
// i+1's compute; the update of step i applies a prediction made from the averaged gradient of
// step i-1 (a predict task, its cost set by the predictor). Leaves out the predictor's math,
// which lives in models/learn.
#include "models/learn/learn.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {

namespace {

class PseudoSync final : public Scheme {
 public:
  explicit PseudoSync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        predict_s_(per_parameter_time_s(
            *c.workload, learn::predictor_flops_per_parameter(c.scenario->scheme.predictor))) {
    require_allreduce_buckets(s_, w_);
  }

  std::string name() const override { return "pseudo_sync"; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_, predict_s_);
    auto comms = add_bucket_collectives(f, s_, w_, chains);
    chain_iterations(f, chains);
    if (iteration > 0 && !comms.empty()) {
      // The previous allreduce must be done before this step's prediction (or update), and
      // the collective stream stays in order across iterations.
      for (const auto& c : chains)
        f.cross.push_back({1, comms.back(), predict_s_ > 0 ? c.predict : c.update});
      f.cross.push_back({1, comms.back(), comms.front()});
    }
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  double predict_s_;
};

SchemeTraits pseudo_sync_traits() {
  SchemeTraits t;
  t.fixed_staleness = [](const Scenario&) { return std::optional<int>(1); };
  // One predict task per worker and iteration.
  t.activities = [](const Scenario& s, ActivityCount& a) { a.execs += s.workers; };
  return t;
}

/// Its option, declared on first use after static initialization: the predictors register
/// themselves then, so the choices list every registered predictor and alias.
std::vector<SchemeParam> pseudo_sync_params() {
  std::string names;
  for (const std::string& n : learn::predictor_names_and_aliases())
    names += (names.empty() ? "`" : ", `") + n + "`";
  return {bind_scheme_param(
      {.key = "predictor",
       .type = ParamType::choice,
       .default_value = "arrses",
       .brief = "`pseudo_sync` only: " + names +
                " (the predict task's cost and, with `training`, the math; see Training)",
       .choices = learn::predictor_names_and_aliases()},
      &SchemeSpec::predictor)};
}

const SchemeRegistration pseudo_sync_registration{
    {"pseudo_sync",
     {accumulation_steps_param()},
     check_accumulation,
     nullptr,
     pseudo_sync_params,
     true},
    [](const SchemeContext& c) { return std::make_unique<PseudoSync>(c); },
    [](const Scenario&) {
      return UpdateRule{AveragedUpdate{1, true}};
    },
    pseudo_sync_traits()};
}  // namespace

}  // namespace sgdsim
