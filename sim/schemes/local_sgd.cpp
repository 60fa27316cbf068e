// Local SGD: H local steps (no communication) between synchronizations; a synchronizing step
// is timed like a sync step (bucketed allreduce of parameter-sized buffers, overlapped as the
// scheme's overlap says). H = 1 is sync. Leaves out post-local and hierarchical variants.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/periodic.hpp"

namespace sgdsim {

namespace {
SchemeTraits local_sgd_traits() {
  SchemeTraits t;
  // One allreduce per period.
  t.activities = [](const Scenario& s, ActivityCount& a) {
    a.comms /= std::max(1, s.scheme.period);
  };
  return t;
}

std::vector<SchemeParam> local_sgd_params() {
  return {
      bind_scheme_param({.key = "period",
                         .type = ParamType::integer,
                         .default_value = 4,
                         .brief = "`local_sgd` only: H steps between synchronizations (1 = sync)",
                         .min = 1,
                         .max = 1 << 20},
                        &SchemeSpec::period)};
}

const SchemeRegistration local_sgd_registration{
    {"local_sgd", local_sgd_params(), nullptr, nullptr, nullptr},
    [](const SchemeContext& c) {
      return std::make_unique<PeriodicScheme>(c, "local_sgd", c.scenario->scheme.period);
    },
    [](const Scenario& s) { return UpdateRule{LocalUpdate{s.scheme.period}}; },
    local_sgd_traits()};
}  // namespace

}  // namespace sgdsim
