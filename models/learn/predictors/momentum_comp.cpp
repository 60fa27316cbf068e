// momentum_comp: asynchrony begets momentum (Mitliagkas, Zhang, Hadjis and Re, "Asynchrony
// begets momentum, with an application to deep learning", Allerton 2016): staleness acts as an
// implicit momentum, so the explicit momentum is lowered until the total is the target. The
// paper's queueing model gives an implicit momentum 1 - 1/M for M asynchronous workers
// (staleness geometric with mean M - 1); for a mean staleness tau that is 1 - 1/(tau + 1),
// 0.5 at tau = 1 (`mitliagkas`). For the deterministic one-step delay of pseudo_sync the exact
// form differs: on a quadratic of curvature H, g(w_t-1) = g(w_t) - H (w_t - w_t-1), so
// w+ = w + m (w - w-) - lr g(w-) is heavy ball with the gradient at w and momentum m + lr H:
// the implicit momentum is lr H, per curvature direction (`curvature`, the default, estimates
// one scalar H as the secant <dG, dw> / <dw, dw> of consecutive averaged gradients and the
// points they were taken at, smoothed at rate predictor_beta). The step then uses momentum
// max(0, m - implicit); the gradient itself is applied as it is. Leaves out per-direction
// compensation (that is delay compensation: dc, arrses) and the paper's step-size rescaling.
#include <algorithm>

#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

class MomentumCompPredictor final : public Predictor {
 public:
  MomentumCompPredictor(size_t n, const PredictorOptions& o)
      : learning_rate_(o.learning_rate),
        rate_(o.number("predictor_beta")),
        curvature_(o.text("predictor_implicit_momentum") == "curvature"),
        implicit_(o.text("predictor_implicit_momentum") == "mitliagkas"
                      ? 1 - 1.0 / (1 + 1)  // tau = 1
                      : o.number("predictor_implicit_momentum")),
        prev_g_(curvature_ ? n : 0, 0.0f),
        prev_w_(curvature_ ? n : 0, 0.0f) {}
  void predict(const std::vector<float>& g, const std::vector<float>&,
               const std::vector<float>& params_at_g, std::vector<float>& out) override {
    out = g;
    if (!curvature_) return;
    if (!first_) {
      double dg_dw = 0, dw_dw = 0;
      for (size_t k = 0; k < g.size(); ++k) {
        const double dg = double{g[k]} - prev_g_[k], dw = double{params_at_g[k]} - prev_w_[k];
        dg_dw += dg * dw;
        dw_dw += dw * dw;
      }
      num_ = second_ ? dg_dw : rate_ * dg_dw + (1 - rate_) * num_;
      den_ = second_ ? dw_dw : rate_ * dw_dw + (1 - rate_) * den_;
      implicit_ = den_ > 0 ? std::max(0.0, learning_rate_ * num_ / den_) : 0.0;
      second_ = false;
    }
    prev_g_ = g;
    prev_w_ = params_at_g;
    first_ = false;
  }
  double effective_momentum(double momentum) const override {
    return std::max(0.0, momentum - implicit_);
  }
  /// The implicit momentum the step compensates (tests).
  double implicit() const { return implicit_; }

 private:
  double learning_rate_, rate_;
  bool curvature_;
  double implicit_;
  std::vector<float> prev_g_, prev_w_;
  double num_ = 0, den_ = 0;
  bool first_ = true, second_ = true;
};

}  // namespace

const PredictorRegistration kMomentumComp{PredictorKind{
    .id = "momentum_comp",
    .flops_per_parameter = 6,
    .params = {{.key = "predictor_implicit_momentum",
                .type = ParamType::number,
                .default_value = "curvature",
                .brief = "implicit momentum of the delay",
                .doc = "the momentum the one-step delay adds, subtracted from `momentum` (at "
                       "least 0 remains): `\"curvature\"` lr H with H the smoothed secant "
                       "curvature along the gradient points (exact for the delayed update on a "
                       "quadratic), `\"mitliagkas\"` 1 - 1/(tau + 1) = 0.5 (Mitliagkas et al. "
                       "2016 at staleness tau = 1), or a number 0 to 1",
                .min = 0,
                .max = 1,
                .choices = {"curvature", "mitliagkas"}},
               smoothing_param()},
    .make = [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
      return std::make_unique<MomentumCompPredictor>(n, o);
    }}};

}  // namespace sgdsim::learn
