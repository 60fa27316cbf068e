// The predictor registry and the stability analysis of the one-step-delayed update that
// several predictors derive their defaults from.
#include "models/learn/predictor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/registry.hpp"

namespace sgdsim::learn {

namespace {

// Built on first use: registrations run during static initialization, in any order.
Registry<PredictorKind>& registry() {
  static Registry<PredictorKind> r;
  return r;
}

/// The declaration of option `key`, nullptr if no predictor declares it.
const Param* declared(const std::string& key) {
  for (const PredictorKind* k : registry().all())
    for (const Param& p : k->params)
      if (p.key == key) return &p;
  return nullptr;
}

}  // namespace

PredictorRegistration::PredictorRegistration(PredictorKind kind) {
  for (const Param& p : kind.params)
    if (const Param* other = declared(p.key);
        other != nullptr && other->default_value != p.default_value)
      throw std::logic_error("predictor option declared twice with other defaults: " + p.key);
  std::vector<std::string> aliases = kind.aliases;
  registry().add(std::make_unique<PredictorKind>(std::move(kind)), aliases);
}

double PredictorOptions::number(const std::string& key) const {
  if (values.has(key)) return values.number(key);
  const Param* p = declared(key);
  if (p == nullptr) throw std::out_of_range("no predictor declares option " + key);
  return p->default_value.is_number() ? p->default_value.get<double>() : 0.0;
}

std::string PredictorOptions::text(const std::string& key) const {
  if (values.has(key)) return values.text(key);
  const Param* p = declared(key);
  if (p == nullptr) throw std::out_of_range("no predictor declares option " + key);
  return p->default_value.is_string() ? p->default_value.get<std::string>() : "";
}

PredictorOptions& PredictorOptions::set(const std::string& key, double value) {
  values.set(key, ParamValue{value, ""});
  return *this;
}

PredictorOptions& PredictorOptions::set(const std::string& key, const std::string& value) {
  values.set(key, ParamValue{0, value});
  return *this;
}

std::vector<std::string> predictor_names() {
  return registry().names();
}

std::vector<std::string> predictor_names_and_aliases() {
  std::vector<std::string> names = registry().names();
  for (const auto& [alias, _] : registry().aliases()) names.push_back(alias);
  std::sort(names.begin(), names.end());
  return names;
}

const PredictorKind* find_predictor(const std::string& name) {
  return registry().find(name);
}

double predictor_flops_per_parameter(const std::string& name) {
  const PredictorKind* k = find_predictor(name);
  return k ? k->flops_per_parameter : 0;
}

std::vector<DeclaredPredictorParam> predictor_params() {
  std::vector<DeclaredPredictorParam> out;
  for (const PredictorKind* k : registry().all())
    for (const Param& p : k->params) {
      auto same = std::find_if(out.begin(), out.end(), [&](const DeclaredPredictorParam& d) {
        return d.param.key == p.key;
      });
      if (same == out.end())
        out.push_back({{k->name()}, p});
      else
        same->owners.push_back(k->name());
    }
  return out;
}

Param smoothing_param() {
  return {.key = "predictor_beta",
          .type = ParamType::number,
          .default_value = 0.2,
          .brief = "smoothing constant",
          .doc =
              "smoothing constant, above 0 to 1: the tracking-signal rate b of `arrses` and "
              "`arrses_level`, the trend constant of `holt`, the secant's rate of "
              "`momentum_comp`",
          .min = 0,
          .min_exclusive = true,
          .max = 1};
}

std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n,
                                          const PredictorOptions& o) {
  const PredictorKind* k = find_predictor(name);
  if (k == nullptr) throw std::out_of_range("unknown predictor: " + name);
  return k->make(n, o);
}

std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n, double beta,
                                          double learning_rate, double lookahead,
                                          double rate_floor) {
  PredictorOptions o;
  o.learning_rate = learning_rate;
  o.set("predictor_beta", beta)
      .set("predictor_lookahead", lookahead)
      .set("predictor_rate_floor", rate_floor)
      .set("predictor_curvature_clip", "inverse_lr")
      .set("predictor_safeguard", "none")
      .set("predictor_calibration", "none")
      .set("predictor_gate", "none");
  return make_predictor(name, n, o);
}

bool cubic_is_stable(double a2, double a1, double a0) {
  return 1 + a2 + a1 + a0 > 0 && 1 - a2 + a1 - a0 > 0 && std::fabs(a0) < 1 &&
         1 - a0 * a0 > std::fabs(a1 - a0 * a2);
}

namespace {

/// The delayed update of predictor.hpp with a = lr H, b = lr h: its characteristic cubic
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
