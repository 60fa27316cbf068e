// DiLoCo (Douillard et al., "DiLoCo: Distributed Low-Communication Training of Language
// Models", arXiv 2311.08455, 2023): every worker takes `inner_steps` (H) steps of the inner
// optimizer on its own replica, then the replicas' parameters are averaged by one allreduce and
// the global parameters take an outer step on the pseudo-gradient (global minus the mean) with
// Nesterov momentum; every replica restarts from the new global parameters and keeps its own
// inner optimizer state. Defaults are the paper's (H = 500, outer lr 0.7, outer momentum 0.9,
// Nesterov). Timed like local SGD: a synchronizing step (bucketed allreduce of the parameters)
// every H iterations. Leaves out the paper's AdamW inner optimizer (the inner optimizer is the
// training section's SGD with momentum), streaming DiLoCo's staggered fragments, and the outer
// step's own compute time.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/periodic.hpp"

namespace sgdsim {

namespace {

/// The declared option `inner_steps` (H).
int inner_steps(const Scenario& s) {
  return static_cast<int>(s.scheme.params.number("inner_steps"));
}

std::vector<SchemeParam> diloco_params() {
  return {{{.key = "inner_steps",
            .type = ParamType::integer,
            .default_value = 500,
            .brief = "`diloco` only: H inner steps between outer steps (DiLoCo's 500)",
            .min = 1,
            .max = 1 << 20}},
          {{.key = "outer_lr",
            .type = ParamType::number,
            .default_value = 0.7,
            .brief = "`diloco` only: the outer optimizer's learning rate (DiLoCo's 0.7)",
            .min = 0,
            .max = 10}},
          {{.key = "outer_momentum",
            .type = ParamType::number,
            .default_value = 0.9,
            .brief = "`diloco` only: the outer optimizer's momentum (DiLoCo's 0.9)",
            .min = 0,
            .max = 0.999}},
          {{.key = "outer_nesterov",
            .type = ParamType::boolean,
            .default_value = true,
            .brief = "`diloco` only: Nesterov momentum in the outer step (DiLoCo's)"}}};
}

UpdateRule diloco_rule(const Scenario& s) {
  OuterOptimizer outer;
  outer.learning_rate = s.scheme.params.number("outer_lr");
  outer.momentum = s.scheme.params.number("outer_momentum");
  outer.nesterov = s.scheme.params.number("outer_nesterov") != 0;
  return UpdateRule{LocalUpdate{inner_steps(s), outer}};
}

SchemeTraits diloco_traits() {
  SchemeTraits t;
  // One allreduce per H iterations.
  t.activities = [](const Scenario& s, ActivityCount& a) { a.comms /= inner_steps(s); };
  return t;
}

const SchemeRegistration diloco_registration{{"diloco", diloco_params(), nullptr, nullptr, nullptr},
                                             [](const SchemeContext& c) {
                                               return std::make_unique<PeriodicScheme>(
                                                   c, "diloco", inner_steps(*c.scenario));
                                             },
                                             diloco_rule,
                                             diloco_traits()};
}  // namespace

}  // namespace sgdsim
