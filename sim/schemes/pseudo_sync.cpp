// Pseudo-synchronous SGD (Wen et al., IJPP 2024): iteration i's allreduce overlaps iteration
// i+1's compute; the update of step i applies a prediction made from the averaged gradient of
// step i-1 (a predict task, its cost set by the predictor). Leaves out the predictor's math,
// which lives in models/learn.
#include "sim/schemes/common.hpp"
#include "sim/schemes/registry.hpp"

namespace sgdsim {

namespace {

class PseudoSync final : public Scheme {
 public:
  int update_lag() const override { return 1; }
  explicit PseudoSync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        predict_s_(per_parameter_time_s(
            *c.workload, predictor_flops_per_parameter(c.scenario->scheme.predictor))) {}

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

}  // namespace

double predictor_flops_per_parameter(const std::string& predictor) {
  // Element-wise operations per parameter of one prediction (see README, pseudo_sync).
  if (predictor == "ema") return 3;
  if (predictor == "holt") return 8;
  if (predictor == "dc") return 5;
  if (predictor == "arrses_level") return 12;
  if (predictor == "arrses") return 32;  // about 30 for the curvature model, 2 for the look-ahead
  return 0;                              // "none": the delayed gradient is applied as it is
}

std::unique_ptr<Scheme> make_pseudo_sync(const SchemeContext& context) {
  return std::make_unique<PseudoSync>(context);
}

}  // namespace sgdsim
