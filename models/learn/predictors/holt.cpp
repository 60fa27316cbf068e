// holt: Holt's linear trend (Holt 1957): level and trend of the averaged gradient, predicted one
// step ahead (level weight 0.5, trend constant beta). Leaves out seasonality and any use of
// the parameters: it extrapolates the gradient sequence alone.
#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

/// Holt's linear trend: level and trend, one step ahead.
class HoltPredictor final : public Predictor {
 public:
  HoltPredictor(size_t n, double b) : b_(static_cast<float>(b)), level_(n, 0.0f), trend_(n, 0.0f) {}
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    out.resize(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      if (first_) {
        level_[i] = g[i];
      } else {
        const float prev = level_[i];
        level_[i] = 0.5f * g[i] + 0.5f * (level_[i] + trend_[i]);
        trend_[i] = b_ * (level_[i] - prev) + (1 - b_) * trend_[i];
      }
      out[i] = level_[i] + trend_[i];
    }
    first_ = false;
  }

 private:
  float b_;
  std::vector<float> level_, trend_;
  bool first_ = true;
};

}  // namespace

const PredictorRegistration kHolt{
    PredictorKind{.id = "holt",
                  .flops_per_parameter = 8,
                  .params = {smoothing_param()},
                  .make = [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                    return std::make_unique<HoltPredictor>(n, o.number("predictor_beta"));
                  }}};

}  // namespace sgdsim::learn
