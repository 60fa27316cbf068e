// arrses, the default pseudo-sync predictor: sgdsim's reconstruction of the predictor of Wen et
// al. (IJPP 2024, "adaptive exponential smoothing with a tracking-signal confidence
// coefficient"; the paper's formula is not public) as a delay corrector with a diagonal secant
// curvature model whose smoothing rate adapts with the Trigg-Leach tracking signal (Trigg and
// Leach 1967, ARRSES), weight prediction (SpecTrain, Chen et al. 2018), gradient restart
// (O'Donoghue and Candes 2015) and a Diebold-Mariano gate (Diebold and Mariano 1995) that falls
// back to the plain delayed gradient. Leaves out: cross-element curvature (the model is
// diagonal) and the autocorrelation of the gate's loss differential.
#include <algorithm>
#include <cmath>

#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

namespace {

/// The default reconstruction of the paper's predictor. A delayed gradient G(w_old) is
/// corrected to the current parameters w with a per-element curvature h (G(w) ~ G(w_old) +
/// h (w - w_old), a diagonal secant model), h being the ratio of exponentially smoothed
/// products dG*dw / dw*dw of consecutive averaged gradients and the parameters they were
/// computed at. The smoothing rate adapts per element with the Trigg-Leach tracking signal
/// of the curvature model's errors (ARRSES, b = beta): systematic errors speed it up, noise
/// slows it down; it never drops below `rate_floor`. The workers also compute gradients at a
/// look-ahead point (weight prediction, coefficient c), so the remaining correction is small.
/// Three parts make it stable across learning rates and momenta (each switchable):
/// c defaults to delayed_lookahead(momentum) (the widest stable range of the delayed update),
/// lr h is clipped to delayed_curvature_limit(momentum, c) (clip "stability"; "inverse_lr" is
/// the earlier [0, 1/lr]), and the safeguard "restart" restarts momentum when the prediction
/// points along the last step (gradient restart, O'Donoghue and Candes, "Adaptive restart for
/// accelerated gradient schemes", 2015): beyond the delayed update's stable range the sharp
/// directions oscillate with growing amplitude, and that is what the test sees. Other
/// safeguards: "tracking" scales each element's correction by 1 - its tracking signal,
/// "correlation" by the squared correlation of dG and dw, "none".
/// Calibration "slope" (a fourth part) scales the whole correction by s in [0, 1], the
/// least-squares slope of the observed change of the averaged gradient, G_k - G_{k-1}, on the
/// change the curvature model predicted for it before seeing G_k, h_{k-1} (w_k - w_{k-1}),
/// smoothed at rate max(beta, rate floor): out of sample, so the minibatch noise of G_k is
/// independent of the prediction and the slope is an unbiased estimate of the scale that minimises
/// the squared error of the corrected gradient. Where the curvature model explains nothing (at a
/// small learning rate the steps are small and dG is mostly noise) s goes to 0 and the predictor
/// falls back to the plain delayed gradient; where it is right s = 1. "none" (the default):
/// s = 1. Off by default because the grid measured it less stable at lr 0.2, momentum 0.9
/// (README, Pseudo-sync predictors).
/// The gate (a fifth part) is a fallback to `none` driven by the same out-of-sample test: when
/// G_k arrives, the model's prediction G_{k-1} + h_{k-1} (w_k - w_{k-1}) and `none`'s, G_{k-1},
/// are scored by their squared errors against it, smoothed at max(beta, rate floor). The fresh
/// minibatch noise of G_k is independent of both, so the difference of the two errors
/// estimates without bias which of them is closer to the true gradient. "element_significant"
/// (the default) applies each element's correction only while the model's error is below
/// `none`'s with one-sided significance 5 % (significantly_negative); "whole_significant" tests
/// the sums over all elements once; "element" and "whole" only ask for an error at most
/// `none`'s (noise then opens the gate often enough to cost accuracy at a small learning rate);
/// "none" always corrects (the earlier arrses).
class ArrsesPredictor final : public Predictor {
 public:
  ArrsesPredictor(size_t n, const PredictorOptions& o)
      : b_(static_cast<float>(o.number("predictor_beta"))),
        rate_floor_(static_cast<float>(o.number("predictor_rate_floor"))),
        lookahead_(o.text("predictor_lookahead") == "auto" ? delayed_lookahead(o.momentum)
                                                           : o.number("predictor_lookahead")),
        tracking_(o.text("predictor_safeguard") == "tracking"),
        correlation_(o.text("predictor_safeguard") == "correlation"),
        restart_(o.text("predictor_safeguard") == "restart"),
        restart_cosine_(o.number("predictor_restart_cosine")),
        calibrate_(o.text("predictor_calibration") == "slope"),
        gate_element_(o.text("predictor_gate") == "element"),
        gate_whole_(o.text("predictor_gate") == "whole"),
        gate_whole_significant_(o.text("predictor_gate") == "whole_significant"),
        gate_element_significant_(o.text("predictor_gate") == "element_significant"),
        prev_g_(n, 0.0f),
        prev_w_(n, 0.0f),
        a_(n, 0.0f),
        m_(n, 0.0f),
        num_(n, 0.0f),
        den_(n, 0.0f),
        h_(n, 0.0f),
        gg_(n, 0.0f),
        trust_(n, 1.0f),
        err_pred_(gate_element_ ? n : 0, 0.0f),
        err_none_(gate_element_ ? n : 0, 0.0f),
        diff_mean_(gate_element_significant_ ? n : 0, 0.0f),
        diff_sq_(gate_element_significant_ ? n : 0, 0.0f) {
    const double limit = o.text("predictor_curvature_clip") == "inverse_lr"
                             ? 1.0
                             : delayed_curvature_limit(o.momentum, lookahead_);
    h_max_ = static_cast<float>(limit / o.learning_rate);
  }
  void predict(const std::vector<float>& g, const std::vector<float>& params,
               const std::vector<float>& params_at_g, std::vector<float>& out) override {
    out.resize(g.size());
    double observed_predicted = 0, predicted_sq = 0;  // sums for the calibration slope
    double pred_sq_err = 0, none_sq_err = 0;          // sums for the whole gate
    const double rate = gate_rate();
    if (!first_) {  // the exponential weights of the significance tests, one sample per call
      weight_ = rate + (1 - rate) * weight_;
      weight_sq_ = rate * rate + (1 - rate) * (1 - rate) * weight_sq_;
    }
    for (size_t k = 0; k < g.size(); ++k) {
      if (!first_) {
        const float dg = g[k] - prev_g_[k], dw = params_at_g[k] - prev_w_[k];
        const double predicted = static_cast<double>(trust_[k]) * h_[k] * dw;  // h before dg
        observed_predicted += predicted * dg;
        predicted_sq += predicted * predicted;
        const double pred_err = (dg - predicted) * (dg - predicted), none_err = double{dg} * dg;
        pred_sq_err += pred_err;
        none_sq_err += none_err;
        if (gate_element_) update_element_gate(k, pred_err, none_err);
        if (gate_element_significant_) {
          const double d = pred_err - none_err;
          diff_mean_[k] = static_cast<float>(rate * d + (1 - rate) * diff_mean_[k]);
          diff_sq_[k] = static_cast<float>(rate * d * d + (1 - rate) * diff_sq_[k]);
        }
        const float e = (dg - h_[k] * dw) * dw;  // the curvature model's error, in dG*dw units
        a_[k] = b_ * e + (1 - b_) * a_[k];
        m_[k] = b_ * std::fabs(e) + (1 - b_) * m_[k];
        const float signal = std::min(std::fabs(a_[k]) / (m_[k] + 1e-20f), 1.0f);
        const float alpha = std::clamp(signal, rate_floor_, 1.0f);
        num_[k] = alpha * dg * dw + (1 - alpha) * num_[k];
        den_[k] = alpha * dw * dw + (1 - alpha) * den_[k];
        gg_[k] = alpha * dg * dg + (1 - alpha) * gg_[k];
        h_[k] = std::clamp(num_[k] / (den_[k] + 1e-20f), 0.0f, h_max_);
        if (tracking_) trust_[k] = 1 - signal;
        // The share of the gradient's change the secant explains (squared correlation of
        // dG and dw): noise-driven curvature estimates are shrunk towards 0.
        if (correlation_)
          trust_[k] = std::min(num_[k] * num_[k] / (den_[k] * gg_[k] + 1e-30f), 1.0f);
      }
      out[k] = trust_[k] * h_[k] * (params[k] - params_at_g[k]);
      if (gate_element_ && err_pred_[k] > err_none_[k]) out[k] = 0.0f;
      if (gate_element_significant_ && !significantly_negative(diff_mean_[k], diff_sq_[k]))
        out[k] = 0.0f;
    }
    float scale = calibrate_ ? update_calibration(observed_predicted, predicted_sq) : 1.0f;
    if (gate_whole_ && !update_whole_gate(pred_sq_err, none_sq_err)) scale = 0.0f;
    if (gate_whole_significant_) {
      if (!first_) {
        const double d = pred_sq_err - none_sq_err;
        d_mean_ = rate * d + (1 - rate) * d_mean_;
        d_sq_ = rate * d * d + (1 - rate) * d_sq_;
      }
      if (!significantly_negative(d_mean_, d_sq_)) scale = 0.0f;
    }
    for (size_t k = 0; k < g.size(); ++k) out[k] = g[k] + scale * out[k];
    if (restart_) update_restart(out, params);
    prev_g_ = g;
    prev_w_ = params_at_g;
    first_ = false;
  }
  double lookahead() const override { return lookahead_; }
  bool restart_momentum() const override { return restart_now_; }

 private:
  /// Smooths the slope's two sums at rate max(beta, rate floor) (the ratio does not depend on
  /// their zero start) and returns the slope clamped to [0, 1]; 0 until a prediction has been
  /// tested.
  float update_calibration(double observed_predicted, double predicted_sq) {
    if (first_) return 0.0f;
    const double rate = std::max(b_, rate_floor_);  // as the curvature model's lowest rate
    slope_num_ = rate * observed_predicted + (1 - rate) * slope_num_;
    slope_den_ = rate * predicted_sq + (1 - rate) * slope_den_;
    if (!(slope_den_ > 0)) return 0.0f;
    return static_cast<float>(std::clamp(slope_num_ / slope_den_, 0.0, 1.0));
  }

  /// The gate's smoothing rate: the calibration's, max(beta, rate floor).
  double gate_rate() const { return std::max(b_, rate_floor_); }

  /// Smooths element k's squared errors of the model's prediction and of `none`'s (the last
  /// gradient unchanged) for the gradient that has just arrived.
  void update_element_gate(size_t k, double pred_err, double none_err) {
    const float rate = static_cast<float>(gate_rate());
    err_pred_[k] = rate * static_cast<float>(pred_err) + (1 - rate) * err_pred_[k];
    err_none_[k] = rate * static_cast<float>(none_err) + (1 - rate) * err_none_[k];
  }

  /// The same summed over all elements; true while the model's smoothed error is at most
  /// `none`'s (ties, as before any test, keep the correction).
  bool update_whole_gate(double pred_err, double none_err) {
    if (!first_) {
      const double rate = gate_rate();
      whole_pred_ = rate * pred_err + (1 - rate) * whole_pred_;
      whole_none_ = rate * none_err + (1 - rate) * whole_none_;
    }
    return whole_pred_ <= whole_none_;
  }

  /// True while the loss differential d = (model's squared error) - (`none`'s), whose
  /// exponentially weighted sums of d and d^2 are `mean_sum` and `sq_sum`, shows the model
  /// better with one-sided significance 5 %: the weighted mean of d is below -1.645 of its
  /// standard error (the Diebold-Mariano test of equal predictive accuracy with exponential
  /// weights, n_eff = (sum w)^2 / sum w^2 effective samples, the autocorrelation of d ignored).
  /// False until two predictions have been tested.
  bool significantly_negative(double mean_sum, double sq_sum) const {
    if (!(weight_ > 0)) return false;
    const double mean = mean_sum / weight_, var = std::max(sq_sum / weight_ - mean * mean, 0.0);
    const double n_eff = weight_ * weight_ / weight_sq_;
    constexpr double kZ = 1.645;  // one-sided 5 % of the standard normal
    // mean / sqrt(var / (n_eff - 1)) < -kZ, the variance with its small-sample correction.
    return mean < 0 && mean * mean * (n_eff - 1) > kZ * kZ * var;
  }

  /// Gradient restart (O'Donoghue and Candes 2015): the prediction points along the last step,
  /// so that step went uphill, and momentum restarts before the next one. A restart_cosine_
  /// above 0 asks for a clear projection (random directions have a cosine near 0 in many
  /// dimensions); 0 is the published criterion.
  void update_restart(const std::vector<float>& out, const std::vector<float>& params) {
    double along = 0, out_sq = 0, step_sq = 0;
    if (!first_)
      for (size_t k = 0; k < out.size(); ++k) {
        const double d = static_cast<double>(params[k]) - prev_params_[k];
        along += out[k] * d;
        out_sq += static_cast<double>(out[k]) * out[k];
        step_sq += d * d;
      }
    restart_now_ =
        along > 0 && along * along > restart_cosine_ * restart_cosine_ * out_sq * step_sq;
    prev_params_ = params;
  }

  float b_, h_max_ = 0, rate_floor_;
  double lookahead_;
  bool tracking_, correlation_, restart_, restart_now_ = false;
  double restart_cosine_;
  bool calibrate_, gate_element_, gate_whole_, gate_whole_significant_, gate_element_significant_;
  double slope_num_ = 0, slope_den_ = 0, whole_pred_ = 0, whole_none_ = 0;
  double d_mean_ = 0, d_sq_ = 0, weight_ = 0, weight_sq_ = 0;  // the significance tests' sums
  std::vector<float> prev_g_, prev_w_, a_, m_, num_, den_, h_, gg_, trust_;
  std::vector<float> err_pred_, err_none_;  // the element gate's smoothed squared errors
  std::vector<float> diff_mean_, diff_sq_;  // element_significant: smoothed d and d^2
  std::vector<float> prev_params_;
  bool first_ = true;
};

std::vector<Param> arrses_params() {
  return {
      smoothing_param(),
      {.key = "predictor_lookahead",
       .type = ParamType::number,
       .default_value = "auto",
       .brief = "weight-prediction coefficient c",
       .doc = "weight-prediction coefficient c (workers compute at `w - c lr v`): `\"auto\"` "
              "takes the c that widens the delayed update's stable range the most for `momentum` "
              "(0 at momentum 0, 0.45 at 0.5, 1.45 at 0.9; see Pseudo-sync predictors), or a "
              "number 0 to 10 (0 turns the look-ahead off; 1.5 was the earlier default)",
       .min = 0,
       .max = 10,
       .choices = {"auto"}},
      {.key = "predictor_curvature_clip",
       .type = ParamType::choice,
       .default_value = "stability",
       .brief = "bound of the curvature estimate",
       .doc = "the bound of the curvature estimate h: `stability` (lr h at most the delayed "
              "update's stability limit for that momentum and c, 0.22 at momentum 0.9) or "
              "`inverse_lr` (h in [0, 1/lr], the earlier default)",
       .choices = {"stability", "inverse_lr"}},
      {.key = "predictor_safeguard",
       .type = ParamType::choice,
       .default_value = "restart",
       .brief = "safeguard of the correction",
       .doc = "`restart` (momentum restarts when the prediction points along the last step: "
              "gradient restart, O'Donoghue and Candès 2015), `tracking` (each element's "
              "correction times 1 - its tracking signal), `correlation` (times the squared "
              "correlation of dG and dw), or `none` (the earlier default)",
       .choices = {"restart", "tracking", "correlation", "none"}},
      {.key = "predictor_restart_cosine",
       .type = ParamType::number,
       .default_value = 0.0,
       .brief = "cosine above which momentum restarts",
       .doc = "with safeguard `restart`: the cosine between the prediction and the last step "
              "above which momentum restarts, 0 to 1 (0: any positive projection, the published "
              "criterion)",
       .default_text = "`0`",
       .min = 0,
       .max = 1},
      {.key = "predictor_calibration",
       .type = ParamType::choice,
       .default_value = "none",
       .brief = "calibration of the correction",
       .doc = "`slope` scales the whole correction by its out-of-sample calibration slope in "
              "[0, 1] (the least-squares slope of the observed change of the averaged gradient "
              "on the change the curvature model predicted for it before seeing it; 0 falls "
              "back to the plain delayed gradient), `none` applies the full correction. Not the "
              "default: on the grid it diverges at one of 5 seeds at lr 0.2, momentum 0.9 (see "
              "Pseudo-sync predictors)",
       .choices = {"none", "slope"}},
      {.key = "predictor_gate",
       .type = ParamType::choice,
       .default_value = "element_significant",
       .brief = "fallback to the plain delayed gradient",
       .doc = "a fallback to the plain delayed gradient (`none`) driven by the tracking errors: "
              "when an averaged gradient arrives, the change the curvature model predicted for "
              "it and the change `none` assumes (zero) are scored by their squared errors, "
              "smoothed at rate max(`predictor_beta`, `predictor_rate_floor`); "
              "`element_significant` applies each element's correction only while its error is "
              "below `none`'s with one-sided significance 5 % (a Diebold-Mariano test with "
              "exponential weights), `whole_significant` the same test once for the sums over "
              "all elements, `element` each element's correction while its own error is at most "
              "`none`'s, `whole` the same for the sums, `none` always corrects (the earlier "
              "default; see Pseudo-sync predictors)",
       .choices = {"element_significant", "whole_significant", "element", "whole", "none"}},
      {.key = "predictor_rate_floor",
       .type = ParamType::number,
       .default_value = 0.05,
       .brief = "lowest adaptive rate of the curvature model",
       .doc = "lowest adaptive rate of the curvature model, 0 to 1 (so that `predictor_beta` "
              "near 0 still lets it learn; 0 freezes it where the tracking signal is 0)",
       .min = 0,
       .max = 1}};
}

}  // namespace

// About 30 element-wise operations for the curvature model, 2 for the look-ahead.
const PredictorRegistration kArrses{
    PredictorKind{.id = "arrses",
                  .flops_per_parameter = 32,
                  .params = arrses_params(),
                  .make = [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                    return std::make_unique<ArrsesPredictor>(n, o);
                  }}};

}  // namespace sgdsim::learn
