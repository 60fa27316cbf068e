// weight_pred: weight prediction for the one-step-delayed update (SpecTrain, Chen, Yang and Cheng
// 2018, "Efficient and Robust Parallel DNN Training through Model Parallelism on Multi-GPU
// Platform"; the same form in PipeDream-2BW, Narayanan et al. 2021, and PipeMare's weight
// prediction): workers compute their gradient at w_hat = w - s lr v, the point the momentum
// velocity v says the weights reach s steps later, s being the staleness (1 in pseudo_sync);
// the gradient is then applied as it is. Leaves out any use of curvature: on a quadratic it
// narrows the stable range at momentum 0 (lr H < 0.618 against 1 without it; see
// tests/unit/predictor_threshold_test.cpp) and widens it at momentum 0.9 (0.27 against 0.10).
#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

class WeightPredictor final : public Predictor {
 public:
  explicit WeightPredictor(double steps) : steps_(steps) {}
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    out = g;
  }
  double lookahead() const override { return steps_; }

 private:
  double steps_;
};

}  // namespace

const PredictorRegistration kWeightPred{PredictorKind{
    .id = "weight_pred",
    .flops_per_parameter = 2,
    .params = {{.key = "predictor_weight_steps",
                .type = ParamType::number,
                .default_value = 1.0,
                .brief = "steps ahead the weights are predicted",
                .doc = "s in `w - s lr v`, 0 to 10: the staleness in steps (pseudo_sync's is 1, "
                       "SpecTrain's choice)",
                .default_text = "`1`",
                .min = 0,
                .max = 10}},
    .make = [](size_t, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
      return std::make_unique<WeightPredictor>(o.number("predictor_weight_steps"));
    }}};

}  // namespace sgdsim::learn
