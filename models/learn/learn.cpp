#include "models/learn/learn.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "models/learn/eigen_util.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/rng.hpp"

namespace sgdsim::learn {

namespace {

std::vector<unsigned char> gunzip(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(
        path, "",
        "dataset file not found (Debian package dataset-fashion-mnist installs Fashion-MNIST)");
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw InputError(path, "", "cannot open gzipped file");
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw InputError(path, "", "corrupt gzip data");
  return out;
}

uint32_t be32(const std::vector<unsigned char>& d, size_t at) {
  return (uint32_t{d[at]} << 24) | (uint32_t{d[at + 1]} << 16) | (uint32_t{d[at + 2]} << 8) |
         d[at + 3];
}

}  // namespace

Dataset read_idx(const std::string& images_gz, const std::string& labels_gz) {
  const auto img = gunzip(images_gz), lab = gunzip(labels_gz);
  if (img.size() < 16 || be32(img, 0) != 0x00000803)
    throw InputError(images_gz, "", "not an IDX image file (magic 0x00000803)");
  if (lab.size() < 8 || be32(lab, 0) != 0x00000801)
    throw InputError(labels_gz, "", "not an IDX label file (magic 0x00000801)");
  const uint32_t n = be32(img, 4), rows = be32(img, 8), cols = be32(img, 12);
  if (be32(lab, 4) != n)
    throw InputError(labels_gz, "", fmt::format("expected {} labels, got {}", n, be32(lab, 4)));
  if (img.size() != 16 + size_t{n} * rows * cols || lab.size() != 8 + size_t{n})
    throw InputError(images_gz, "", "file size does not match its IDX header");
  Dataset d;
  d.dim = static_cast<int>(rows * cols);
  d.classes = 10;
  d.x.resize(size_t{n} * d.dim);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = img[16 + i] / 255.0f;
  d.y.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    d.y[i] = lab[8 + i];
    if (d.y[i] >= d.classes)
      throw InputError(labels_gz, "", fmt::format("label {} out of range", d.y[i]));
  }
  return d;
}

Dataset fashion_mnist(const std::string& split, const std::string& dir) {
  const std::string prefix = split == "test" ? "t10k" : "train";
  return read_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz",
                  dir + "/" + prefix + "-labels-idx1-ubyte.gz");
}

Dataset gaussian_mixture(int n, int dim, int classes, uint64_t seed, double spread,
                         double label_noise) {
  Rng rng(seed, 0x474D4DULL);
  std::vector<float> centers(static_cast<size_t>(classes) * dim);
  for (auto& c : centers) c = static_cast<float>(rng.normal() * 2.0);
  Dataset d;
  d.dim = dim;
  d.classes = classes;
  d.x.resize(static_cast<size_t>(n) * dim);
  d.y.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng.next_u64() % static_cast<uint64_t>(classes));
    d.y[i] = label;
    for (int k = 0; k < dim; ++k)
      d.x[static_cast<size_t>(i) * dim + k] =
          centers[static_cast<size_t>(label) * dim + k] + static_cast<float>(rng.normal() * spread);
  }
  if (label_noise > 0) {  // its own stream, so the features do not depend on the noise
    Rng noise(seed, 0x4C4E4F495345ULL);
    for (auto& y : d.y)
      if (noise.uniform() < label_noise)
        y = static_cast<int>(noise.next_u64() % static_cast<uint64_t>(classes));
  }
  return d;
}

struct Mlp::Impl {
  DenseStack dense;  // input, hidden..., classes
  std::vector<float> params;
};

Mlp::Mlp(int input_dim, std::vector<int> hidden, int classes, uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  std::vector<int> widths{input_dim};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(classes);
  pin_cache_sizes();
  impl_->params.assign(impl_->dense.layout(std::move(widths), 0), 0.0f);
  Rng rng(seed, 0x4D4C50ULL);
  impl_->dense.init(impl_->params, [&] { return rng.normal(); });
}

Mlp::~Mlp() = default;
Mlp::Mlp(const Mlp& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Mlp& Mlp::operator=(const Mlp& o) {
  *impl_ = *o.impl_;
  return *this;
}
std::unique_ptr<Model> Mlp::clone() const {
  return std::make_unique<Mlp>(*this);
}
std::vector<float>& Mlp::parameters() {
  return impl_->params;
}
const std::vector<float>& Mlp::parameters() const {
  return impl_->params;
}

std::vector<size_t> Mlp::layer_parameters() const {
  const DenseStack& d = impl_->dense;
  std::vector<size_t> out;
  for (size_t l = 0; l < d.layers(); ++l) out.push_back(d.weight_count(l) + d.sizes[l + 1]);
  return out;
}

double Mlp::gradient(const std::vector<float>& params, const Dataset& data,
                     std::span<const int> batch, std::vector<float>& grad) const {
  const DenseStack& d = impl_->dense;
  std::vector<MatrixF> acts;
  d.forward(params, gather(data, batch), acts);
  MatrixF delta;
  const double loss = softmax_cross_entropy(acts.back(), data, batch, delta);
  grad.assign(params.size(), 0.0f);
  d.backward(params, acts, std::move(delta), grad, false);
  return loss;
}

Evaluation Mlp::evaluate(const Dataset& data) const {
  Evaluation e;
  const int chunk = 2048;
  std::vector<int> idx;
  for (int start = 0; start < data.size(); start += chunk) {
    const int end = std::min(data.size(), start + chunk);
    idx.resize(static_cast<size_t>(end - start));
    std::iota(idx.begin(), idx.end(), start);
    std::vector<MatrixF> acts;
    impl_->dense.forward(impl_->params, gather(data, idx), acts);
    add_evaluation(acts.back(), data, start, e);
  }
  e.loss /= data.size();
  e.accuracy /= data.size();
  return e;
}

Sgd::Sgd(size_t n, double momentum, double weight_decay)
    : momentum_(momentum), weight_decay_(weight_decay), velocity_(n, 0.0f) {}

void Sgd::step(std::vector<float>& params, const std::vector<float>& grad, double lr) {
  MapVec w(params.data(), static_cast<Eigen::Index>(params.size()));
  CMapVec g(grad.data(), static_cast<Eigen::Index>(grad.size()));
  MapVec v(velocity_.data(), static_cast<Eigen::Index>(velocity_.size()));
  v = static_cast<float>(momentum_) * v + g + static_cast<float>(weight_decay_) * w;
  w -= static_cast<float>(lr) * v;
}

namespace {

class NonePredictor final : public Predictor {
 public:
  void predict(const std::vector<float>& g, const std::vector<float>&, const std::vector<float>&,
               std::vector<float>& out) override {
    out = g;
  }
};

/// Fixed-coefficient exponential smoothing: P = a G + (1 - a) P.
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
      : b_(static_cast<float>(o.beta)),
        rate_floor_(static_cast<float>(o.rate_floor)),
        lookahead_(o.lookahead ? *o.lookahead : delayed_lookahead(o.momentum)),
        tracking_(o.safeguard == "tracking"),
        correlation_(o.safeguard == "correlation"),
        restart_(o.safeguard == "restart"),
        restart_cosine_(o.restart_cosine),
        calibrate_(o.calibration == "slope"),
        gate_element_(o.gate == "element"),
        gate_whole_(o.gate == "whole"),
        gate_whole_significant_(o.gate == "whole_significant"),
        gate_element_significant_(o.gate == "element_significant"),
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
    const double limit =
        o.curvature_clip == "inverse_lr" ? 1.0 : delayed_curvature_limit(o.momentum, lookahead_);
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

/// DC-ASGD delay compensation: g + lambda g * g * (w - w_at_g).
class DcPredictor final : public Predictor {
 public:
  explicit DcPredictor(double lambda) : lambda_(static_cast<float>(lambda)) {}
  void predict(const std::vector<float>& g, const std::vector<float>& params,
               const std::vector<float>& params_at_g, std::vector<float>& out) override {
    out.resize(g.size());
    for (size_t i = 0; i < g.size(); ++i)
      out[i] = g[i] + lambda_ * g[i] * g[i] * (params[i] - params_at_g[i]);
  }

 private:
  float lambda_;
};

}  // namespace

namespace {
/// A registered predictor: its name, its cost and how it is built.
struct PredictorKind {
  const char* name;            ///< scheme.predictor
  double flops_per_parameter;  ///< element-wise operations per parameter of one prediction
  std::unique_ptr<Predictor> (*make)(size_t n, const PredictorOptions& o);  ///< the factory
};

/// The predictors, in documentation order: the only place that names them.
const std::vector<PredictorKind>& predictor_kinds() {
  static const std::vector<PredictorKind> kinds = {
      // About 30 for the curvature model, 2 for the look-ahead.
      PredictorKind{"arrses", 32,
                    [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                      return std::make_unique<ArrsesPredictor>(n, o);
                    }},
      // The delayed gradient is applied as it is.
      PredictorKind{"none", 0,
                    [](size_t, const PredictorOptions&) -> std::unique_ptr<Predictor> {
                      return std::make_unique<NonePredictor>();
                    }},
      PredictorKind{"ema", 3,
                    [](size_t n, const PredictorOptions&) -> std::unique_ptr<Predictor> {
                      return std::make_unique<EmaPredictor>(n, 0.5);
                    }},
      PredictorKind{"arrses_level", 12,
                    [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                      return std::make_unique<ArrsesLevelPredictor>(n, o.beta);
                    }},
      PredictorKind{"holt", 8,
                    [](size_t n, const PredictorOptions& o) -> std::unique_ptr<Predictor> {
                      return std::make_unique<HoltPredictor>(n, o.beta);
                    }},
      PredictorKind{"dc", 5, [](size_t, const PredictorOptions&) -> std::unique_ptr<Predictor> {
                      return std::make_unique<DcPredictor>(0.04);
                    }}};
  return kinds;
}

/// The predictor called `name`, nullptr if none is.
const PredictorKind* find_predictor(const std::string& name) {
  for (const PredictorKind& k : predictor_kinds())
    if (k.name == name) return &k;
  return nullptr;
}
}  // namespace

std::vector<std::string> predictor_names() {
  std::vector<std::string> names;
  for (const PredictorKind& k : predictor_kinds()) names.emplace_back(k.name);
  return names;
}

double predictor_flops_per_parameter(const std::string& name) {
  const PredictorKind* k = find_predictor(name);
  return k ? k->flops_per_parameter : 0;
}

std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n,
                                          const PredictorOptions& o) {
  const PredictorKind* k = find_predictor(name);
  return k ? k->make(n, o) : std::make_unique<NonePredictor>();
}

std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n, double beta,
                                          double learning_rate, double lookahead,
                                          double rate_floor) {
  PredictorOptions o;
  o.beta = beta;
  o.learning_rate = learning_rate;
  o.lookahead = lookahead;
  o.rate_floor = rate_floor;
  o.curvature_clip = "inverse_lr";
  o.safeguard = "none";
  o.calibration = "none";
  o.gate = "none";
  return make_predictor(name, n, o);
}

namespace {

/// Jury's test: every root of z^3 + a2 z^2 + a1 z + a0 lies strictly inside the unit circle.
bool cubic_is_stable(double a2, double a1, double a0) {
  return 1 + a2 + a1 + a0 > 0 && 1 - a2 + a1 - a0 > 0 && std::fabs(a0) < 1 &&
         1 - a0 * a0 > std::fabs(a1 - a0 * a2);
}

/// The delayed update of learn.hpp with a = lr H, b = lr h: its characteristic cubic
/// z^3 - (1 + m - b) z^2 + (m + (a - b)(1 + c)) z - (a - b) c.
bool delayed_is_stable(double a, double b, double m, double c) {
  return cubic_is_stable(-(1 + m - b), m + (a - b) * (1 + c), -(a - b) * c);
}

}  // namespace

double delayed_stable_range(double momentum, double lookahead) {
  constexpr double kStep = 1e-3;
  double a = kStep;
  while (a < 8 && delayed_is_stable(a, 0, momentum, lookahead)) a += kStep;
  return a - kStep;
}

double delayed_lookahead(double momentum) {
  double best_c = 0, best = delayed_stable_range(momentum, 0);
  for (int i = 1; i <= 60; ++i) {
    const double c = 0.05 * i, range = delayed_stable_range(momentum, c);
    if (range > best + 1e-9) best = range, best_c = c;
  }
  return best_c;
}

double delayed_curvature_limit(double momentum, double lookahead) {
  // The true curvature just above 0: the most demanding case for a positive estimate.
  const double a = 1e-4 * delayed_stable_range(momentum, lookahead);
  constexpr double kStep = 1e-4;
  double b = 0;
  while (b < 8 && delayed_is_stable(a, b + kStep, momentum, lookahead)) b += kStep;
  return b;
}

}  // namespace sgdsim::learn

namespace sgdsim::learn {

StepBenchmark benchmark_step(int input_dim, const std::vector<int>& hidden, int classes, int batch,
                             int repeats) {
  Dataset d = gaussian_mixture(batch, input_dim, classes, 1);
  Mlp m(input_dim, hidden, classes, 1);
  std::vector<int> idx(static_cast<size_t>(batch));
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<int> sizes = {input_dim};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(classes);
  double macs = 0;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) macs += double(sizes[l]) * sizes[l + 1] * batch;
  // Forward W X, backward dW = D X^T and D_prev = W^T D (the first layer skips the last).
  const double flops = 2 * macs * 3 - 2.0 * sizes[0] * sizes[1] * batch;
  std::vector<float> g;
  auto now = [] { return std::chrono::steady_clock::now(); };
  m.gradient(m.parameters(), d, idx, g);
  auto t0 = now();
  for (int r = 0; r < repeats; ++r) m.gradient(m.parameters(), d, idx, g);
  const double step_s = std::chrono::duration<double>(now() - t0).count();
  std::vector<MatrixF> w, x, dl;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    w.push_back(MatrixF::Random(sizes[l + 1], sizes[l]));
    x.push_back(MatrixF::Random(sizes[l], batch));
    dl.push_back(MatrixF::Random(sizes[l + 1], batch));
  }
  MatrixF out;
  float sink = 0;
  t0 = now();
  for (int r = 0; r < repeats; ++r)
    for (size_t l = 0; l < w.size(); ++l) {
      out.noalias() = w[l] * x[l];
      sink += out(0, 0);
      out.noalias() = dl[l] * x[l].transpose();
      sink += out(0, 0);
      if (l > 0) {
        out.noalias() = w[l].transpose() * dl[l];
        sink += out(0, 0);
      }
    }
  const double gemm_s = std::chrono::duration<double>(now() - t0).count();
  (void)sink;
  return {flops * repeats / step_s / 1e9, flops * repeats / gemm_s / 1e9};
}

}  // namespace sgdsim::learn
