// pipemare: the two techniques of PipeMare (Yang, Zhang, Liu, Aberger, De Sa and Re, "PipeMare:
// Asynchronous Pipeline Parallel DNN Training", MLSys 2021) for a delay of tau = 1 step.
// T2, discrepancy correction: the weights are extrapolated with an exponential moving average d
// of the weight deltas, d = g d + (1 - g) (w_new - w_old), and the gradient is taken at
// w + tau d (PipeMare uses the same EMA to correct the backward pass's weights; here it moves
// the gradient point to where the delayed step lands). T1, learning-rate rescheduling: the
// step of iteration k is lr r^p_k with p_k = max(0, 1 - k / K), a warm-up over K steps from
// the delayed update's stable fraction. PipeMare writes the start factor as tau^-p_k, which is
// 1 at tau = 1; sgdsim takes the ratio its own analysis motivates it with, the delayed step's
// stability bound 2 sin(pi / (4 tau + 2)) / H over the undelayed 2 / H, r = sin(pi / 6) = 0.5
// (a deviation, marked in docs/training.md). The decay g "auto" is the one in {0, 0.05, ...,
// 0.9} that widens the delayed momentum update's stable range the most (its cubic tested with
// Jury's criterion, as arrses' look-ahead). Leaves out per-stage delays (one delay for all).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

/// The largest a = lr H below which the update with momentum m, gradient at w + d (d the EMA of
/// weight deltas with decay g) is stable: characteristic cubic
/// (z - g)(z^2 - (1 + m) z + m) + a ((2 - g) z - 1) = 0 (tau = 1).
double pipemare_stable_range(double m, double g) {
  constexpr double kStep = 1e-3;
  double a = kStep;
  auto stable = [&](double x) {
    return cubic_is_stable(-(1 + m) - g, m + g * (1 + m) + x * (2 - g), -g * m - x);
  };
  while (a < 8 && stable(a)) a += kStep;
  return a - kStep;
}

class PipeMarePredictor final : public Predictor {
 public:
  PipeMarePredictor(double decay, int warmup) : decay_(decay), warmup_(warmup) {}
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    out = g;
  }
  double delta_lookahead() const override { return 1; }  // tau = 1
  double delta_decay() const override { return decay_; }
  double learning_rate_scale(int step) const override {
    if (warmup_ <= 0 || step >= warmup_) return 1;
    const double r = std::sin(std::numbers::pi / 6), p = 1 - static_cast<double>(step) / warmup_;
    return std::pow(r, p);
  }

 private:
  double decay_;
  int warmup_;
};

}  // namespace

double pipemare_decay(double momentum) {
  double best_g = 0, best = pipemare_stable_range(momentum, 0);
  for (int i = 1; i <= 18; ++i) {
    const double g = 0.05 * i, range = pipemare_stable_range(momentum, g);
    if (range > best + 1e-9) best = range, best_g = g;
  }
  return best_g;
}

const PredictorRegistration kPipeMare{PredictorKind{
    .id = "pipemare",
    .flops_per_parameter = 5,
    .params = {{.key = "predictor_pipemare_decay",
                .type = ParamType::number,
                .default_value = "auto",
                .brief = "decay of the weight-delta EMA",
                .doc = "decay g of the EMA of weight deltas that extrapolates the weights, 0 to "
                       "0.99: `\"auto\"` the g in {0, 0.05, ..., 0.9} with the widest stable "
                       "range of the delayed update for `momentum`",
                .min = 0,
                .max = 0.99,
                .choices = {"auto"}},
               {.key = "predictor_pipemare_warmup",
                .type = ParamType::integer,
                .default_value = 100,
                .brief = "steps of the learning-rate warm-up",
                .doc = "K: steps over which the learning rate rises from 0.5 lr to lr "
                       "(PipeMare's rescheduling; 0 turns it off; 100 is sgdsim's choice, a third "
                       "of the convergence studies' 300 iterations, not the paper's)",
                .min = 0,
                .max = 1 << 24}},
    .make = [](size_t, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
      const double decay = o.text("predictor_pipemare_decay") == "auto"
                               ? pipemare_decay(o.momentum)
                               : o.number("predictor_pipemare_decay");
      return std::make_unique<PipeMarePredictor>(
          decay, static_cast<int>(o.number("predictor_pipemare_warmup")));
    }}};

}  // namespace sgdsim::learn
