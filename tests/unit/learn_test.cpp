#include "models/learn/learn.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "sim/core/errors.hpp"
#include "tests/unit/learn_helpers.hpp"

using namespace sgdsim;
using namespace sgdsim::learn;

using sgdsim::learn::test_util::range;

class GradientCheck : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(GradientCheck, MatchesFiniteDifferences) {
  // Central differences in double-checked float: every layer's weights and biases.
  Dataset d = gaussian_mixture(24, 6, 4, 7);
  Mlp m(6, GetParam(), 4, 11);
  std::vector<float> p = m.parameters(), g;
  const auto batch = range(0, 24);
  m.gradient(p, d, batch, g);
  size_t checked = 0, offset = 0;
  for (size_t layer_size : m.layer_parameters()) {
    for (size_t k = offset; k < offset + layer_size; k += std::max<size_t>(1, layer_size / 7)) {
      const float h = 1e-3f;
      std::vector<float> plus = p, minus = p, tmp;
      plus[k] += h;
      minus[k] -= h;
      const double numeric =
          (m.gradient(plus, d, batch, tmp) - m.gradient(minus, d, batch, tmp)) / (2.0 * h);
      EXPECT_NEAR(g[k], numeric, 2e-3 + 2e-2 * std::fabs(numeric)) << "parameter " << k;
      ++checked;
    }
    offset += layer_size;
  }
  EXPECT_GT(checked, 5u);
}

INSTANTIATE_TEST_SUITE_P(Models, GradientCheck,
                         ::testing::Values(std::vector<int>{}, std::vector<int>{8},
                                           std::vector<int>{8, 5}));

class SyncEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(SyncEquivalence, AveragedWorkerGradientsEqualOneBigBatch) {
  // N workers x batch b averaged every step == one process with batch N*b on the same samples.
  const int n = GetParam(), b = 8, steps = 50;
  Dataset d = gaussian_mixture(n * b * steps, 10, 5, 3);
  const auto r = sgdsim::learn::test_util::sync_equivalence(Mlp(10, {16}, 5, 5), d, n, b, steps);
  EXPECT_LT(r.relative_gap, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Workers, SyncEquivalence, ::testing::Values(1, 4, 16));

TEST(Learn, TrainsAGaussianMixture) {
  Dataset train = gaussian_mixture(2000, 8, 4, 1, 0.7), test = gaussian_mixture(500, 8, 4, 1, 0.7);
  Mlp m(8, {32}, 4, 2);
  Sgd opt(m.num_parameters(), 0.9, 0.0);
  std::vector<float> g;
  const double before = m.evaluate(test).accuracy;
  for (int s = 0; s < 200; ++s) {
    m.gradient(m.parameters(), train, range((s * 32) % 1968, (s * 32) % 1968 + 32), g);
    opt.step(m.parameters(), g, 0.05);
  }
  EXPECT_GT(m.evaluate(test).accuracy, std::max(0.9, before));
}

TEST(Learn, ReadsFashionMnist) {
  Dataset test = fashion_mnist("test");
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(test.dim, 784);
  EXPECT_EQ(test.classes, 10);
  EXPECT_GE(*std::min_element(test.x.begin(), test.x.end()), 0.0f);
  EXPECT_LE(*std::max_element(test.x.begin(), test.x.end()), 1.0f);
  EXPECT_THROW(fashion_mnist("test", "/nonexistent"), InputError);
}

TEST(Predictors, NoneEmaArrsesHoltDc) {
  const std::vector<float> w = {1, 1}, w_old = {0, 0};
  std::vector<float> out;
  auto none = make_predictor("none", 2);
  none->predict({1, 2}, w, w_old, out);
  EXPECT_EQ(out, (std::vector<float>{1, 2}));
  auto dc = make_predictor("dc", 2);
  dc->predict({1, 2}, w, w_old, out);
  EXPECT_FLOAT_EQ(out[1], 2 + 0.04f * 4 * 1);
  // On a constant gradient every smoother converges to it.
  for (const char* name : {"ema", "arrses_level", "holt"}) {
    auto p = make_predictor(name, 2);
    for (int i = 0; i < 60; ++i) p->predict({0.5f, -1.0f}, w, w_old, out);
    EXPECT_NEAR(out[0], 0.5f, 1e-3) << name;
    EXPECT_NEAR(out[1], -1.0f, 1e-3) << name;
  }
  // arrses learns the curvature of a quadratic (gradient h w, h = 3 and 0.5) from the
  // sequence of delayed gradients and corrects them to the current parameters exactly.
  auto arrses = make_predictor("arrses", 2, 0.2, 0.05);
  EXPECT_GT(arrses->lookahead(), 0);
  const std::vector<float> curvature = {3.0f, 0.5f};
  std::vector<float> at = {1.0f, -2.0f}, now(2), g(2);
  for (int i = 0; i < 40; ++i) {
    for (int k = 0; k < 2; ++k) {
      now[k] = at[k] * (0.9f + 0.05f * static_cast<float>((i + k) % 3));  // varying steps
      g[k] = curvature[k] * at[k];
    }
    arrses->predict(g, now, at, out);
    at = now;
  }
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(out[k], curvature[k] * now[k], 1e-4 * std::fabs(out[k]));
  // Without curvature information (first call) it is the plain delayed gradient.
  auto fresh = make_predictor("arrses", 2, 0.2, 0.05);
  fresh->predict({1, 2}, w, w_old, out);
  EXPECT_EQ(out, (std::vector<float>{1, 2}));
  // The look-ahead coefficient is the scenario's; rate floor 0 with beta 0 freezes the
  // curvature model (the tracking signal never moves), floor 1 learns it in one secant step.
  EXPECT_EQ(make_predictor("arrses", 2, 0.2, 0.05)->lookahead(), 1.5);
  EXPECT_EQ(make_predictor("arrses", 2, 0.2, 0.05, 0.0)->lookahead(), 0.0);
  for (float floor : {0.0f, 1.0f}) {
    auto p = make_predictor("arrses", 1, 0.0, 0.05, 1.5, floor);
    p->predict({2.0f}, {1.0f}, {1.0f}, out);  // g = 2 w at w = 1
    p->predict({4.0f}, {3.0f}, {2.0f}, out);  // g = 2 w at w = 2; current w = 3
    EXPECT_FLOAT_EQ(out[0], floor == 0 ? 4.0f : 4.0f + 2.0f * (3.0f - 2.0f)) << floor;
  }
  // Holt extrapolates a linear trend one step ahead.
  auto holt = make_predictor("holt", 1);
  for (int i = 0; i < 200; ++i) holt->predict({static_cast<float>(i)}, {0}, {0}, out);
  EXPECT_NEAR(out[0], 200.0f, 0.5f);
}

namespace {
/// |x| after `steps` steps of the delayed update of learn.hpp (a = lr H, b = lr h) from x = 1.
double delayed_run(double a, double b, double m, double c, int steps) {
  double x2 = 1, x1 = 1, x0 = 1;  // x_{t-2}, x_{t-1}, x_t
  for (int t = 0; t < steps && std::fabs(x0) < 1e6; ++t) {
    const double look = (1 + c) * x1 - c * x2;
    const double next = x0 + m * (x0 - x1) - (a - b) * look - b * x0;
    x2 = x1, x1 = x0, x0 = next;
  }
  return std::fabs(x0);
}
}  // namespace

TEST(Predictors, DelayedStabilityLimits) {
  // Without look-ahead the one-step-delayed update is stable for lr H < 1 - m.
  for (double m : {0.0, 0.5, 0.9}) EXPECT_NEAR(delayed_stable_range(m, 0), 1 - m, 2e-3) << m;
  // The automatic look-ahead: none without momentum, 0.45 at 0.5, 1.45 at 0.9, where it
  // triples the stable range (0.1 -> 0.30).
  EXPECT_EQ(delayed_lookahead(0.0), 0.0);
  EXPECT_NEAR(delayed_lookahead(0.5), 0.45, 1e-9);
  EXPECT_NEAR(delayed_lookahead(0.9), 1.45, 1e-9);
  EXPECT_GT(delayed_stable_range(0.9, 1.45), 3 * delayed_stable_range(0.9, 0));
  for (double m : {0.0, 0.5, 0.9}) {
    const double c = delayed_lookahead(m), range = delayed_stable_range(m, c);
    const double limit = delayed_curvature_limit(m, c);
    // Every true curvature in the range and every estimate up to the limit decays ...
    for (double fa : {0.1, 0.5, 0.9})
      for (double fb : {0.0, 0.5, 0.99})
        EXPECT_LT(delayed_run(fa * range, fb * limit, m, c, 20000), 1e-3) << m << " " << fa;
    // ... while an estimate 1.5x the limit on a nearly flat direction grows.
    EXPECT_GE(delayed_run(0.01 * range, 1.5 * limit, m, c, 20000), 1e6) << m;
  }
  // The earlier clip lr h <= 1 is beyond the limit at momentum 0.9 (0.22) and diverges there.
  EXPECT_NEAR(delayed_curvature_limit(0.9, 1.45), 0.222, 2e-3);
  EXPECT_GE(delayed_run(0.1 * delayed_stable_range(0.9, 1.45), 1.0, 0.9, 1.45, 20000), 1e6);
}

TEST(Predictors, ArrsesCalibrationFallsBackWhereTheCurvatureModelExplainsNothing) {
  PredictorOptions o;
  o.set("predictor_safeguard", "none");
  o.set("predictor_curvature_clip", "inverse_lr");
  o.set("predictor_calibration", "slope");
  o.set("predictor_gate", "none");
  std::vector<float> out;
  // On a noise-free quadratic (g = H w) the model's predicted gradient changes are the
  // observed ones: the slope is 1 and the correction exact, as without calibration.
  auto quadratic = make_predictor("arrses", 2, o);
  const std::vector<float> curvature = {3.0f, 0.5f};
  std::vector<float> at = {1.0f, -2.0f}, now(2), g(2);
  for (int i = 0; i < 40; ++i) {
    for (int k = 0; k < 2; ++k) {
      now[k] = at[k] * (0.9f + 0.05f * static_cast<float>((i + k) % 3));
      g[k] = curvature[k] * at[k];
    }
    quadratic->predict(g, now, at, out);
    at = now;
  }
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(out[k], curvature[k] * now[k], 1e-4 * std::fabs(out[k]));
  // On a flat direction whose gradients are pure noise (small steady steps, as at a small
  // learning rate) the secant estimates are noise: uncalibrated they correct the gradient,
  // calibrated the slope goes to 0 and the prediction is the plain delayed gradient.
  double corrected_sq[2] = {0, 0};
  for (int calibrated = 0; calibrated < 2; ++calibrated) {
    o.set("predictor_calibration", calibrated ? "slope" : "none");
    auto p = make_predictor("arrses", 1, o);
    std::mt19937 rng(7);  // its output sequence is fixed by the standard
    auto noise = [&rng] { return static_cast<float>(rng()) / 4294967296.0f - 0.5f; };
    float w = 0;
    for (int i = 0; i < 400; ++i) {
      const std::vector<float> grad = {noise()};
      p->predict(grad, {w - 0.01f}, {w}, out);
      if (i >= 100) corrected_sq[calibrated] += (out[0] - grad[0]) * (out[0] - grad[0]);
      w -= 0.01f;
    }
  }
  EXPECT_GT(corrected_sq[0], 0);
  EXPECT_LT(corrected_sq[1], 0.1 * corrected_sq[0]);
}

namespace {

/// Feeds arrses `steps` averaged gradients of `n` elements and returns the squared errors,
/// summed from step 100 on, of its prediction and of `none`'s (the last gradient) against the
/// next gradient, and the share of (step, element) pairs where the prediction is the last
/// gradient exactly. `noise` true: every gradient is uniform noise and the parameters take
/// random steps (the curvature model has nothing to learn); false: g = H w on a diagonal
/// quadratic, the parameters moving smoothly (every secant is exact).
struct GateScore {
  double predicted_sq_err = 0, none_sq_err = 0, plain_share = 0;
};
GateScore score_gate(const char* gate, bool noise, int steps = 600, size_t n = 32) {
  PredictorOptions o;
  o.set("predictor_safeguard", "none");
  o.set("predictor_curvature_clip", "inverse_lr");
  o.set("predictor_gate", gate);
  auto p = make_predictor("arrses", n, o);
  std::mt19937 rng(11);  // its output sequence is fixed by the standard
  auto uniform = [&rng] { return static_cast<float>(rng()) / 4294967296.0f - 0.5f; };
  std::vector<float> at(n, 1.0f), now(n), g(n), out, last_out, last_g;
  GateScore score;
  int plain = 0, counted = 0;
  for (int i = 0; i < steps; ++i) {
    for (size_t k = 0; k < n; ++k) {
      const float curvature = 0.5f + 0.1f * static_cast<float>(k);
      g[k] = noise ? uniform() : curvature * at[k];  // taken at `at`
      now[k] = noise ? at[k] + 0.05f * uniform()
                     : at[k] * (0.97f + 0.01f * static_cast<float>((i + k) % 3));
    }
    if (i > 100)  // the last predictions against the gradient that has just arrived
      for (size_t k = 0; k < n; ++k) {
        score.predicted_sq_err += double(last_out[k] - g[k]) * (last_out[k] - g[k]);
        score.none_sq_err += double(last_g[k] - g[k]) * (last_g[k] - g[k]);
      }
    p->predict(g, now, at, out);
    if (i >= 100)
      for (size_t k = 0; k < n; ++k, ++counted) plain += out[k] == g[k] ? 1 : 0;
    last_out = out;
    last_g = g;
    at = now;
  }
  score.plain_share = static_cast<double>(plain) / counted;
  return score;
}

}  // namespace

TEST(Predictors, ArrsesGateFallsBackToNoneOnNoiseAndKeepsTheModelWhereItIsRight) {
  // Pure noise: the ungated correction makes the prediction of the next gradient worse than
  // the plain delayed gradient; the significant and whole gates fall back to it exactly, the
  // element gate at most elements, which cuts the excess error.
  const GateScore ungated = score_gate("none", true), element = score_gate("element", true);
  EXPECT_GT(ungated.predicted_sq_err, 1.05 * ungated.none_sq_err);
  for (const char* gate : {"whole_significant", "whole"}) {
    const GateScore s = score_gate(gate, true);
    EXPECT_EQ(s.plain_share, 1.0) << gate;
    EXPECT_EQ(s.predicted_sq_err, s.none_sq_err) << gate;
  }
  EXPECT_GT(element.plain_share, 0.8);
  // The default, element_significant, uses an element's correction only on significant
  // evidence: on noise that is the plain gradient at nearly every element and step.
  const GateScore element_significant = score_gate("element_significant", true);
  EXPECT_GT(element_significant.plain_share, 0.95);
  EXPECT_LT(element_significant.predicted_sq_err - element_significant.none_sq_err,
            0.3 * (ungated.predicted_sq_err - ungated.none_sq_err));
  EXPECT_LT(element.predicted_sq_err - element.none_sq_err,
            0.7 * (ungated.predicted_sq_err - ungated.none_sq_err));
  // A noise-free quadratic: every secant is exact, so every gate keeps the correction at every
  // element and step (from step 100 on) and the prediction is the true next gradient.
  for (const char* gate :
       {"none", "element_significant", "whole_significant", "element", "whole"}) {
    const GateScore s = score_gate(gate, false);
    EXPECT_EQ(s.plain_share, 0.0) << gate;
    EXPECT_LT(s.predicted_sq_err, 1e-6 * s.none_sq_err) << gate;
  }
}

TEST(Predictors, ArrsesOptionsSetItsParts) {
  PredictorOptions o;
  o.momentum = 0.5;
  EXPECT_NEAR(make_predictor("arrses", 1, o)->lookahead(), 0.45, 1e-9);  // "auto"
  o.set("predictor_lookahead", 1.5);
  EXPECT_EQ(make_predictor("arrses", 1, o)->lookahead(), 1.5);
  // The clip: the curvature of g = 40 w (lr h = 2) is learned up to 1 / lr under
  // "inverse_lr" and up to the stability limit under "stability" (lr h = 0.6 at momentum 0.5
  // with c = 1.5); the safeguard is off here, so the correction shows h itself.
  o.set("predictor_safeguard", "none");
  o.set("predictor_calibration", "none");
  o.set("predictor_gate", "none");
  o.learning_rate = 0.05;
  for (const char* clip : {"inverse_lr", "stability"}) {
    o.set("predictor_curvature_clip", clip);
    auto p = make_predictor("arrses", 1, o);
    std::vector<float> out;
    p->predict({40.0f}, {1.0f}, {1.0f}, out);
    p->predict({80.0f}, {3.0f}, {2.0f}, out);  // secant 40; correction h (3 - 2)
    const double h = out[0] - 80.0;
    const double expected =
        std::string(clip) == "inverse_lr" ? 20.0 : delayed_curvature_limit(0.5, 1.5) / 0.05;
    EXPECT_NEAR(h, expected, 1e-3 * expected) << clip;
  }
}

TEST(Predictors, RegistryListsThePredictorsTheirAliasesAndOptions) {
  const std::vector<std::string> names = predictor_names();
  for (const char* n : {"arrses", "arrses_level", "dc", "ema", "holt", "momentum_comp", "none",
                        "pipemare", "weight_pred"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  // dc is DC-ASGD: one entry, reachable by both names, one cost.
  EXPECT_EQ(find_predictor("dc_asgd"), find_predictor("dc"));
  EXPECT_EQ(predictor_flops_per_parameter("dc_asgd"), predictor_flops_per_parameter("dc"));
  EXPECT_EQ(find_predictor("kalman"), nullptr);
  EXPECT_THROW(make_predictor("kalman", 1, PredictorOptions{}), std::out_of_range);
  // A key several predictors read is listed once, with every owner; defaults come from it.
  bool beta = false;
  for (const DeclaredPredictorParam& d : predictor_params())
    if (d.param.key == "predictor_beta") {
      beta = true;
      EXPECT_EQ(d.owners,
                (std::vector<std::string>{"arrses", "arrses_level", "holt", "momentum_comp"}));
    }
  EXPECT_TRUE(beta);
  PredictorOptions o;
  EXPECT_EQ(o.number("predictor_beta"), 0.2);
  EXPECT_EQ(o.text("predictor_gate"), "element_significant");
  EXPECT_EQ(o.text("predictor_lookahead"), "auto");
  EXPECT_THROW(o.number("predictor_unknown"), std::out_of_range);
  // A second declaration of a key with another default is a programming error.
  Param other = smoothing_param();
  other.default_value = 0.3;
  EXPECT_THROW(PredictorRegistration(PredictorKind{.id = "beta_twice", .params = {other}}),
               std::logic_error);
  EXPECT_EQ(find_predictor("beta_twice"), nullptr);
  // The hooks: dc-adaptive's lambda_0 2 / sqrt(g^2) g^2 dw = 2 |g| dw on the first call.
  auto adaptive =
      make_predictor("dc", 1, PredictorOptions{}.set("predictor_dc_variant", "adaptive"));
  std::vector<float> out;
  adaptive->predict({0.5f}, {1.0f}, {0.0f}, out);
  EXPECT_NEAR(out[0], 0.5f + 2.0f * 0.5f * 1.0f, 1e-5);
  EXPECT_EQ(make_predictor("weight_pred", 1, PredictorOptions{})->lookahead(), 1.0);
  auto comp = make_predictor("momentum_comp", 1,
                             PredictorOptions{}.set("predictor_implicit_momentum", "mitliagkas"));
  EXPECT_DOUBLE_EQ(comp->effective_momentum(0.9), 0.4);
  EXPECT_DOUBLE_EQ(comp->effective_momentum(0.3), 0.0);
  auto pm = make_predictor("pipemare", 1, PredictorOptions{});
  EXPECT_EQ(pm->delta_lookahead(), 1.0);
  EXPECT_NEAR(pm->learning_rate_scale(0), 0.5, 1e-12);
  EXPECT_NEAR(pm->learning_rate_scale(50), std::sqrt(0.5), 1e-12);
  EXPECT_EQ(pm->learning_rate_scale(100), 1.0);
}
