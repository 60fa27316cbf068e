// DiLoCo (Douillard et al., "DiLoCo: Distributed Low-Communication Training of Language
// Models", arXiv 2311.08455, 2023): every worker takes `inner_steps` (H) steps of the inner
// optimizer on its own replica, then the replicas' parameters are averaged by one allreduce and
// the global parameters take an outer step on the pseudo-gradient (global minus the mean) with
// Nesterov momentum; every replica restarts from the new global parameters and keeps its own
// inner optimizer state. Defaults are the paper's (H = 500, outer lr 0.7, outer momentum 0.9,
// Nesterov). The inner optimizer is the training section's SGD with momentum, or the paper's
// AdamW (`inner_optimizer: adamw`; weight decay 0.1 as the paper, betas 0.9 / 0.95 as the
// OpenDiLoCo reproduction, eps 1e-8 as PyTorch). Timed like local SGD: a synchronizing step
// (bucketed allreduce of the parameters) every H iterations; with `fragments` F > 1 (Streaming
// DiLoCo, Douillard et al., arXiv 2501.18512, 2025) the fusion buckets in forward order are cut
// into F runs, each synchronized once per H iterations at its own offset (fragment_synchronizes),
// and the math's outer step covers the matching slice of the proxy's parameters. Leaves out the
// outer step's compute time, AdamW's extra per-parameter operations in the step's time, and
// Streaming DiLoCo's overlap of an exchange with the next inner steps and its quantization.
#include <fmt/format.h>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/periodic.hpp"

namespace sgdsim {

namespace {

/// The declared option `inner_steps` (H).
int inner_steps(const Scenario& s) {
  return static_cast<int>(s.scheme.params.number("inner_steps"));
}

Param inner_optimizer_param() {
  return {.key = "inner_optimizer",
          .type = ParamType::choice,
          .default_value = "sgd",
          .brief =
              "`diloco` only: the inner optimizer, `sgd` (the training section's SGD with "
              "momentum) or `adamw` (DiLoCo's; the training section's learning rate)",
          .choices = {"sgd", "adamw"}};
}

/// A number of the inner AdamW, used with `inner_optimizer: adamw` only.
Param adamw_param(const char* key, double default_value, double max, const char* what) {
  return {.key = key,
          .type = ParamType::number,
          .default_value = default_value,
          .brief = std::string("`diloco` with `inner_optimizer: adamw`: ") + what,
          .min = 0,
          .max = max};
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
            .brief = "`diloco` only: Nesterov momentum in the outer step (DiLoCo's)"}},
          {{.key = "fragments",
            .type = ParamType::integer,
            .default_value = 1,
            .brief = "`diloco` only: Streaming DiLoCo's fragments, runs of fusion buckets each "
                     "synchronized once per H steps at its own offset (1: all at once)",
            .min = 1,
            .max = 1 << 16}},
          {inner_optimizer_param()},
          {adamw_param("inner_beta1", 0.9, 0.999, "AdamW's first-moment decay (0.9)")},
          {adamw_param("inner_beta2", 0.95, 0.999999, "AdamW's second-moment decay (0.95)")},
          {adamw_param("inner_eps", 1e-8, 1, "AdamW's epsilon (PyTorch's 1e-8)")},
          {adamw_param("inner_weight_decay", 0.1, 10,
                       "AdamW's decoupled weight decay (DiLoCo's 0.1)")}};
}

UpdateRule diloco_rule(const Scenario& s) {
  OuterOptimizer outer;
  outer.learning_rate = s.scheme.params.number("outer_lr");
  outer.momentum = s.scheme.params.number("outer_momentum");
  outer.nesterov = s.scheme.params.number("outer_nesterov") != 0;
  LocalUpdate rule{inner_steps(s), outer};
  rule.fragments = static_cast<int>(s.scheme.params.number("fragments"));
  if (s.scheme.params.text("inner_optimizer") == "adamw")
    rule.adamw = InnerAdamW{
        s.scheme.params.number("inner_beta1"), s.scheme.params.number("inner_beta2"),
        s.scheme.params.number("inner_eps"), s.scheme.params.number("inner_weight_decay")};
  return UpdateRule{rule};
}

SchemeTraits diloco_traits() {
  SchemeTraits t;
  // One allreduce per H iterations.
  t.activities = [](const Scenario& s, ActivityCount& a) { a.comms /= inner_steps(s); };
  return t;
}

/// The graph: local SGD's, each fragment's buckets synchronized at its own iterations.
std::unique_ptr<Scheme> make_diloco(const SchemeContext& c) {
  const Scenario& s = *c.scenario;
  const int fragments = static_cast<int>(s.scheme.params.number("fragments"));
  const size_t buckets = c.workload->buckets.size();
  if (fragments > 1 && c.workload->chakra)
    throw InputError(s.source_file, "/scheme/fragments",
                     fmt::format("{}: expected 1 with a Chakra workload", fragments));
  if (fragments > 1 && static_cast<size_t>(fragments) > buckets)
    throw InputError(s.source_file, "/scheme/fragments",
                     fmt::format("{} fragments for {} fusion buckets: expected at most {} (a "
                                 "smaller scheme.fusion_bytes makes more buckets)",
                                 fragments, buckets, buckets));
  return std::make_unique<PeriodicScheme>(c, "diloco", inner_steps(s), fragments);
}

const SchemeRegistration diloco_registration{{"diloco", diloco_params(), nullptr, nullptr, nullptr},
                                             make_diloco,
                                             diloco_rule,
                                             diloco_traits()};
}  // namespace

}  // namespace sgdsim
