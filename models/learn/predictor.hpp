#pragma once
/// Pseudo-sync gradient predictors: the interface the trainer drives, the registry every
/// predictor joins with one line in its own file (models/learn/predictors/NAME.cpp), and the
/// options each one declares as Params (training.predictor_* keys of a scenario). No Eigen here.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/param.hpp"

namespace sgdsim::learn {

/// Predicts the gradient to apply now from the last globally averaged gradient (pseudo-sync).
/// The trainer calls predict() once per step, then asks the other hooks for that step.
class Predictor {
 public:
  virtual ~Predictor() = default;
  /// Feeds the newest averaged gradient `g` (of the previous step) and writes the prediction.
  /// `params` and `params_at_g` (the parameters `g` was computed at) serve delay compensation.
  virtual void predict(const std::vector<float>& g, const std::vector<float>& params,
                       const std::vector<float>& params_at_g, std::vector<float>& out) = 0;
  /// Weight prediction: workers compute their next gradient at params - c lr velocity, the
  /// point the delayed step will be applied near; c = 0 computes at the current parameters.
  virtual double lookahead() const { return 0; }
  /// Weight extrapolation with an EMA d of the weight deltas (PipeMare): workers compute at
  /// params + s d; s = 0 (the default) keeps no EMA.
  virtual double delta_lookahead() const { return 0; }
  /// The EMA's decay g: d = g d + (1 - g) (w_new - w_old) after each step.
  virtual double delta_decay() const { return 0; }
  /// True if the step about to apply the last prediction should restart momentum (zero the
  /// velocity first): the safeguard of arrses' `restart` option.
  virtual bool restart_momentum() const { return false; }
  /// The momentum the step about to apply the last prediction uses instead of `momentum`
  /// (momentum compensation lowers it by the momentum the delay itself adds).
  virtual double effective_momentum(double momentum) const { return momentum; }
  /// The factor on the learning rate of step `step` (0-based; PipeMare's rescheduling).
  virtual double learning_rate_scale(int /*step*/) const { return 1; }
};

/// What a predictor is built from: the training's learning rate and momentum and the values
/// of the declared options (training.predictor_* keys; a key without a value takes its
/// declared default).
struct PredictorOptions {
  double learning_rate = 0.05;  ///< base SGD step size
  double momentum = 0.9;        ///< SGD momentum
  ParamValues values{};         ///< declared options by key

  /// The number of option `key` (its declared default if not set; 0 for a word).
  double number(const std::string& key) const;
  /// The word of option `key` ("" for a number).
  std::string text(const std::string& key) const;
  /// Sets a number option (tests, the convenience make_predictor).
  PredictorOptions& set(const std::string& key, double value);
  /// Sets a word option.
  PredictorOptions& set(const std::string& key, const std::string& value);
  /// Sets a word option.
  PredictorOptions& set(const std::string& key, const char* value) {
    return set(key, std::string(value));
  }
};

/// A registered predictor: its name, cost, declared options and factory.
struct PredictorKind {
  std::string id;                  ///< scheme.predictor
  double flops_per_parameter = 0;  ///< element-wise operations per parameter of one prediction
  std::vector<Param> params{};     ///< its options; keys are training.predictor_* keys
  /// Builds it for `n` parameters.
  std::function<std::unique_ptr<Predictor>(size_t n, const PredictorOptions& o)> make{};
  std::vector<std::string> aliases{};  ///< other names a scenario may use
  /// The registry's key.
  const std::string& name() const { return id; }
};

/// Adds a predictor to the registry during static initialization (one line next to its
/// definition); a name, alias, or an option key declared twice with other defaults throws.
class PredictorRegistration {
 public:
  /// Registers `kind`.
  explicit PredictorRegistration(PredictorKind kind);
};

/// The registered predictors' names, sorted (scheme.predictor's choices are these and the
/// aliases).
std::vector<std::string> predictor_names();
/// Registered names and aliases, sorted: what scheme.predictor accepts.
std::vector<std::string> predictor_names_and_aliases();
/// The predictor registered as `name` or an alias of it, nullptr if none is.
const PredictorKind* find_predictor(const std::string& name);
/// Element-wise operations per parameter of one prediction by `name` (the predict task's
/// cost; 0 for an unknown name).
double predictor_flops_per_parameter(const std::string& name);

/// One declared option and the predictors that declare it.
struct DeclaredPredictorParam {
  std::vector<std::string> owners;  ///< registered names, sorted
  Param param;                      ///< the declaration (the first owner's)
};
/// Every registered predictor's options, by owner name then declaration order; a key declared
/// by several predictors is listed once, with every owner.
std::vector<DeclaredPredictorParam> predictor_params();

/// training.predictor_beta, the smoothing constant several predictors share (one declaration).
Param smoothing_param();

/// Builds predictor `name` (or an alias) for `n` parameters from `options`; throws
/// std::out_of_range for an unknown name.
std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n,
                                          const PredictorOptions& options);

/// A shortcut for tests: `beta` is the smoothing constant where one applies; `learning_rate`
/// bounds arrses' curvature estimate (1 / lr); `lookahead` is arrses' weight-prediction
/// coefficient c and `rate_floor` the lowest adaptive rate of its curvature model; arrses'
/// clip is inverse_lr and its safeguard, calibration and gate are off.
std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n, double beta = 0.2,
                                          double learning_rate = 0.05, double lookahead = 1.5,
                                          double rate_floor = 0.05);

/// The one-step-delayed momentum update on a quadratic of curvature H, with the gradient taken
/// at the look-ahead point w - c lr v and corrected by an estimate h of H:
/// x+ = x + m (x - x-) - lr (H - h) xt- - lr h x, xt- = (1 + c) x- - c x--. Returns the largest
/// a = lr H for which every a' in (0, a) is stable with h = 0 (Jury's test on the cubic).
double delayed_stable_range(double momentum, double lookahead);
/// The look-ahead c in [0, 3] (steps of 0.05) with the widest delayed_stable_range: 0 without
/// momentum, 0.45 at momentum 0.5, 1.45 at 0.9.
double delayed_lookahead(double momentum);
/// The largest b = lr h such that every estimate in [0, b] keeps the update above stable as the
/// true curvature goes to 0 (a spurious curvature estimate is the dangerous case).
double delayed_curvature_limit(double momentum, double lookahead);
/// pipemare's "auto" decay of its weight-delta EMA for `momentum`: the g in {0, 0.05, ..., 0.9}
/// with the widest stable range of the delayed update with the gradient at w + d.
double pipemare_decay(double momentum);
/// Jury's test: every root of z^3 + a2 z^2 + a1 z + a0 lies strictly inside the unit circle.
bool cubic_is_stable(double a2, double a1, double a0);

}  // namespace sgdsim::learn
