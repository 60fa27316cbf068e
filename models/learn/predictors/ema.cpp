// ema: fixed-coefficient exponential smoothing of the averaged gradient, P = a G + (1 - a) P
// with a = 0.5 (Brown's simple exponential smoothing; the non-adaptive counterpart of
// arrses_level). Leaves out any delay correction: the smoothed gradient lags further.
#include "models/learn/eigen_util.hpp"
#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

class EmaPredictor final : public Predictor {
 public:
  EmaPredictor(size_t n, double a) : a_(static_cast<float>(a)), p_(n, 0.0f) {}
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    MapVec p(p_.data(), static_cast<Eigen::Index>(p_.size()));
    CMapVec gv(g.data(), static_cast<Eigen::Index>(g.size()));
    if (first_)
      p = gv;
    else
      p = a_ * gv + (1 - a_) * p;
    first_ = false;
    out = p_;
  }

 private:
  float a_;
  std::vector<float> p_;
  bool first_ = true;
};

}  // namespace

const PredictorRegistration kEma{
    PredictorKind{.id = "ema",
                  .flops_per_parameter = 3,
                  .params = {},
                  .make = [](size_t n, const PredictorOptions&) -> std::unique_ptr<Predictor> {
                    return std::make_unique<EmaPredictor>(n, 0.5);
                  }}};

}  // namespace sgdsim::learn
