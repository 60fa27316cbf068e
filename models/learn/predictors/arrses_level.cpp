// arrses_level: DESIGN.md's literal reading of the pseudo-sync paper's predictor (Wen et al.,
// IJPP 2024): adaptive-response-rate exponential smoothing (Trigg and Leach 1967) of the
// averaged gradient itself, element-wise. Kept for the comparison; it models no delay
// correction, and the smoothed gradient's lag on top of momentum and the delay diverges.
#include <algorithm>
#include <cmath>

#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

/// DESIGN.md's literal reading: adaptive-response-rate exponential smoothing (Trigg-Leach
/// tracking signal) of the gradient itself, element-wise. Kept for the comparison: a smoothed
/// gradient lags, and that lag on top of momentum and the one-step delay diverges.
class ArrsesLevelPredictor final : public Predictor {
 public:
  ArrsesLevelPredictor(size_t n, double b)
      : b_(static_cast<float>(b)), p_(n, 0.0f), a_(n, 0.0f), m_(n, 0.0f) {}
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    if (first_) {
      p_ = g;
      first_ = false;
      out = p_;
      return;
    }
    for (size_t i = 0; i < g.size(); ++i) {
      const float e = g[i] - p_[i];
      a_[i] = b_ * e + (1 - b_) * a_[i];
      m_[i] = b_ * std::fabs(e) + (1 - b_) * m_[i];
      const float alpha = std::clamp(std::fabs(a_[i]) / (m_[i] + 1e-12f), 0.05f, 1.0f);
      p_[i] = alpha * g[i] + (1 - alpha) * p_[i];
    }
    out = p_;
  }

 private:
  float b_;
  std::vector<float> p_, a_, m_;
  bool first_ = true;
};

}  // namespace

const PredictorRegistration kArrsesLevel{
    PredictorKind{.id = "arrses_level",
                  .flops_per_parameter = 12,
                  .params = {smoothing_param()},
                  .make = [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                    return std::make_unique<ArrsesLevelPredictor>(n, o.number("predictor_beta"));
                  }}};

}  // namespace sgdsim::learn
