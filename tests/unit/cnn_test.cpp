// The convolutional network of models/learn: gradients against finite differences, the
// sync-equivalence invariant, training on Fashion-MNIST, and the profile of `model: "same"`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "models/learn/learn.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/unit/learn_helpers.hpp"

using namespace sgdsim;
using namespace sgdsim::learn;
using sgdsim::learn::test_util::range;

namespace {
/// 2-channel 10x10 images: conv layers of kernel 3 go 10 -> 8 -> pool 4 -> 2 -> pool 1.
CnnShape small_shape(std::vector<int> channels, std::vector<int> hidden) {
  CnnShape s;
  s.height = s.width = 10;
  s.in_channels = 2;
  s.channels = std::move(channels);
  s.kernel = 3;
  s.hidden = std::move(hidden);
  s.classes = 4;
  return s;
}

}  // namespace

// Named, not anonymous: a TEST_P fixture derives from TestWithParam<CnnCase>, and the
// test binaries compile in batches of files (GCC's -Wsubobject-linkage).
namespace cnn_test {
struct CnnCase {
  std::vector<int> channels, hidden;
};
// gtest finds it by argument-dependent lookup, so beside the type.
void PrintTo(const CnnCase& c, std::ostream* os) {
  *os << "channels " << ::testing::PrintToString(c.channels) << ", hidden "
      << ::testing::PrintToString(c.hidden);
}
}  // namespace cnn_test
using cnn_test::CnnCase;

class CnnGradientCheck : public ::testing::TestWithParam<CnnCase> {};

TEST_P(CnnGradientCheck, MatchesFiniteDifferences) {
  // Central differences on every layer's weights and biases, conv layers included (the first
  // conv layer's gradient passes through the second's col2im and the max-pool routing).
  Dataset d = gaussian_mixture(12, 200, 4, 7);
  Cnn m(small_shape(GetParam().channels, GetParam().hidden), 11);
  std::vector<float> p = m.parameters(), g;
  const auto batch = range(0, 12);
  m.gradient(p, d, batch, g);
  ASSERT_EQ(g.size(), p.size());
  size_t checked = 0, offset = 0, layer = 0;
  for (size_t layer_size : m.layer_parameters()) {
    size_t checked_here = 0;
    for (size_t k = offset; k < offset + layer_size; k += std::max<size_t>(1, layer_size / 9)) {
      const float h = 1e-3f;
      std::vector<float> plus = p, minus = p, tmp;
      plus[k] += h;
      minus[k] -= h;
      const double numeric =
          (m.gradient(plus, d, batch, tmp) - m.gradient(minus, d, batch, tmp)) / (2.0 * h);
      EXPECT_NEAR(g[k], numeric, 2e-3 + 2e-2 * std::fabs(numeric))
          << "layer " << layer << ", parameter " << k;
      ++checked_here;
    }
    EXPECT_GT(checked_here, 0u);
    checked += checked_here;
    offset += layer_size;
    ++layer;
  }
  EXPECT_EQ(offset, p.size());
  EXPECT_GE(checked, 15u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CnnGradientCheck,
                         ::testing::Values(CnnCase{{4}, {}}, CnnCase{{3, 2}, {5}},
                                           CnnCase{{3, 2}, {6, 5}}),
                         [](const ::testing::TestParamInfo<CnnCase>& info) {
                           std::string name = "conv";
                           for (int c : info.param.channels) name += fmt::format("_{}", c);
                           name += "_dense";
                           for (int h : info.param.hidden) name += fmt::format("_{}", h);
                           return name;
                         });

TEST(Cnn, LayerParametersFollowTheShape) {
  Cnn m(small_shape({3, 2}, {5}), 1);
  // conv1 3 x (2*9) + 3; conv2 2 x (3*9) + 2; dense 2*1*1 -> 5 -> 4.
  EXPECT_EQ(m.layer_parameters(), (std::vector<size_t>{57, 56, 15, 24}));
  EXPECT_EQ(m.num_parameters(), 57u + 56 + 15 + 24);
  EXPECT_THROW(Cnn(small_shape({3, 2, 2}, {}), 1), std::invalid_argument);  // 1x1 into conv 3
  Dataset wrong = gaussian_mixture(4, 50, 4, 1);
  std::vector<float> g;
  EXPECT_THROW(m.gradient(m.parameters(), wrong, range(0, 4), g), std::invalid_argument);
}

TEST(Cnn, AveragedWorkerGradientsEqualOneBigBatch) {
  // 4 workers x batch 6 averaged every step == one process with batch 24 on the same samples.
  const int n = 4, b = 6, steps = 20;
  Dataset d = gaussian_mixture(n * b * steps, 200, 4, 3);
  const auto r =
      sgdsim::learn::test_util::sync_equivalence(Cnn(small_shape({3, 2}, {5}), 5), d, n, b, steps);
  EXPECT_GT(r.single_norm_sq, 0);
  EXPECT_LT(r.relative_gap, 1e-5);
}

TEST(Cnn, LearnsFashionMnist) {
  Dataset train = fashion_mnist("train"), test = fashion_mnist("test");
  test.x.resize(2000 * 784);
  test.y.resize(2000);
  CnnShape shape;  // 28x28x1, conv 8 and 16 of kernel 5, dense 64, 10 classes
  Cnn m(shape, 3);
  Sgd opt(m.num_parameters(), 0.9, 0.0);
  std::vector<float> g;
  const double before = m.evaluate(test).accuracy;
  for (int s = 0; s < 300; ++s) {
    m.gradient(m.parameters(), train, range(s * 32, s * 32 + 32), g);
    opt.step(m.parameters(), g, 0.02);
  }
  const Evaluation after = m.evaluate(test);
  EXPECT_LT(before, 0.3);
  EXPECT_GT(after.accuracy, 0.7) << "loss " << after.loss;
}

TEST(Cnn, ModelSameProfileMatchesTheNetwork) {
  TrainingSpec t;
  t.model = "cnn";
  t.dataset = "fashion-mnist";
  t.channels = {8, 16};
  t.kernel = 5;
  t.hidden = {64};
  const nlohmann::json profile = training_model_profile(t);
  CnnShape shape;
  Cnn m(shape, 1);
  const auto expected = m.layer_parameters();
  ASSERT_EQ(profile.at("layers").size(), expected.size());
  for (size_t l = 0; l < expected.size(); ++l)
    EXPECT_EQ(profile["layers"][l].at("parameters").get<size_t>(), expected[l]) << l;
  // conv1: 8 x 25 MACs at 24x24 outputs; conv2: 16 x 8*25 MACs at 8x8 outputs.
  EXPECT_DOUBLE_EQ(profile["layers"][0].at("forward_flops").get<double>(), 2.0 * 8 * 25 * 576);
  EXPECT_DOUBLE_EQ(profile["layers"][1].at("forward_flops").get<double>(), 2.0 * 16 * 200 * 64);
  EXPECT_EQ(profile.at("name").get<std::string>(), "cnn-784-c8k5-c16k5-64-10");
}
