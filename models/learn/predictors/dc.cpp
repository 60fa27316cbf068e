// dc (alias dc_asgd): delay compensation of DC-ASGD (Zheng, Meng, Wang, Chen, Yu, Ma and Liu,
// "Asynchronous Stochastic Gradient Descent with Delay Compensation", ICML 2017): the delayed
// gradient is corrected to the current parameters with a first-order Taylor term whose Hessian
// is approximated by the outer product of the gradient, kept diagonal:
// g + lambda g * g * (w_now - w_then). `constant` is the paper's DC-ASGD-c (lambda_0 0.04);
// `adaptive` its DC-ASGD-a, lambda_t = lambda_0 / sqrt(MeanSquare_t), MeanSquare_t =
// m MeanSquare_t-1 + (1 - m) g^2 element-wise with m = 0.95 (lambda_0 2), the values of the
// paper's experiments. Leaves out the off-diagonal Hessian and any staleness above one step.
#include <cmath>

#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

class DcPredictor final : public Predictor {
 public:
  DcPredictor(size_t n, double lambda, bool adaptive)
      : lambda_(static_cast<float>(lambda)), mean_square_(adaptive ? n : 0, 0.0f) {}
  void predict(const std::vector<float>& g, const std::vector<float>& params,
               const std::vector<float>& params_at_g, std::vector<float>& out) override {
    out.resize(g.size());
    if (mean_square_.empty()) {
      for (size_t i = 0; i < g.size(); ++i)
        out[i] = g[i] + lambda_ * g[i] * g[i] * (params[i] - params_at_g[i]);
      return;
    }
    constexpr float kM = 0.95f;     // the paper's moving-average rate of DC-ASGD-a
    constexpr float kEps = 1e-12f;  // keeps lambda_t finite where g has always been 0
    for (size_t i = 0; i < g.size(); ++i) {
      mean_square_[i] = first_ ? g[i] * g[i] : kM * mean_square_[i] + (1 - kM) * g[i] * g[i];
      const float lambda_t = lambda_ / std::sqrt(mean_square_[i] + kEps);
      out[i] = g[i] + lambda_t * g[i] * g[i] * (params[i] - params_at_g[i]);
    }
    first_ = false;
  }

 private:
  float lambda_;
  std::vector<float> mean_square_;  // DC-ASGD-a's MeanSquare; empty for the constant variant
  bool first_ = true;
};

std::vector<Param> dc_params() {
  return {{.key = "predictor_dc_variant",
           .type = ParamType::choice,
           .default_value = "constant",
           .brief = "DC-ASGD variant",
           .doc = "`constant` (DC-ASGD-c: a fixed lambda) or `adaptive` (DC-ASGD-a: lambda / "
                  "sqrt of the moving mean square of each element's gradient, rate 0.95)",
           .choices = {"constant", "adaptive"}},
          {.key = "predictor_dc_lambda",
           .type = ParamType::number,
           .default_value = "auto",
           .brief = "DC-ASGD's lambda_0",
           .doc = "the compensation strength lambda_0 >= 0: `\"auto\"` takes the paper's, 0.04 "
                  "for `constant` and 2 for `adaptive`",
           .min = 0,
           .max = 1e6,
           .choices = {"auto"}}};
}

}  // namespace

const PredictorRegistration kDc{
    PredictorKind{.id = "dc",
                  .flops_per_parameter = 5,
                  .params = dc_params(),
                  .make = [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                    const bool adaptive = o.text("predictor_dc_variant") == "adaptive";
                    const double lambda = o.text("predictor_dc_lambda") == "auto"
                                              ? (adaptive ? 2.0 : 0.04)
                                              : o.number("predictor_dc_lambda");
                    return std::make_unique<DcPredictor>(n, lambda, adaptive);
                  },
                  .aliases = {"dc_asgd"}}};

}  // namespace sgdsim::learn
