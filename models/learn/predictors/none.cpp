// none: the plain one-step-delayed gradient of pseudo-sync (Wen et al., IJPP 2024), applied as
// it is. The baseline every other predictor is compared with; it models no correction.
#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

class NonePredictor final : public Predictor {
 public:
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    out = g;
  }
};

}  // namespace

const PredictorRegistration kNone{
    PredictorKind{.id = "none",
                  .flops_per_parameter = 0,
                  .params = {},
                  .make = [](size_t, const PredictorOptions&) -> std::unique_ptr<Predictor> {
                    return std::make_unique<NonePredictor>();
                  }}};

}  // namespace sgdsim::learn
