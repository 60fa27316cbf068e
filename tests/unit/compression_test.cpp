// Gradient compressors (models/learn/compressors): error feedback carries exactly what was not
// transmitted, top-k keeps the largest magnitudes per tensor, keeping everything is the plain
// average, and a sparse exchange's messages are k values and k 4-byte indices per worker.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/learn/compressor.hpp"
#include "sim/core/rng.hpp"

using namespace sgdsim;
using namespace sgdsim::learn;

namespace {

CompressionOptions options(const std::string& type, double ratio, bool feedback) {
  CompressionOptions o;
  o.type = type;
  o.values.set("ratio", {ratio, ""});
  o.values.set("error_feedback", {feedback ? 1.0 : 0.0, ""});
  return o;
}

// Two tensors: a 3 x 4 matrix and a bias of 3.
std::vector<TensorLayout> layout() {
  return {{0, 3, 4}, {12, 1, 3}};
}

std::vector<std::vector<float>> random_grads(int workers, size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<float>> g(static_cast<size_t>(workers), std::vector<float>(n));
  for (auto& v : g)
    for (float& x : v) x = static_cast<float>(rng.normal());
  return g;
}

}  // namespace

TEST(Compression, ErrorFeedbackResidualIsAccumulatedMinusTransmittedExactly) {
  for (const char* type : {"topk", "randk"}) {
    auto c = make_compressor(layout(), 3, 7, options(type, 0.3, true));
    std::vector<std::vector<float>> residual(3, std::vector<float>(15, 0.0f));
    std::vector<float> avg;
    for (int step = 0; step < 5; ++step) {
      const auto grads = random_grads(3, 15, 100 + step);
      c->exchange(grads, avg);
      for (int w = 0; w < 3; ++w) {
        const auto& sent = c->transmitted(w);
        const auto& r = c->residual(w);
        size_t kept = 0;
        for (size_t k = 0; k < 15; ++k) {
          const float acc = grads[w][k] + residual[w][k];
          EXPECT_EQ(r[k], acc - sent[k]) << type << " step " << step << " element " << k;
          // A kept element is sent whole (residual 0), a dropped one stays whole.
          EXPECT_TRUE(sent[k] == 0.0f || sent[k] == acc);
          kept += sent[k] != 0.0f;
        }
        EXPECT_EQ(kept, 4u + 1u) << type;  // ceil(0.3 x 12) + ceil(0.3 x 3)
        residual[w] = r;
      }
    }
  }
}

TEST(Compression, TopkKeepsTheLargestMagnitudesOfEachTensor) {
  auto c = make_compressor(layout(), 1, 1, options("topk", 0.25, false));
  std::vector<float> g = {1, -9, 2, 3, 0.5f, 8, -7, 0, 1, 1, 1, 1, /* bias */ 0.1f, -0.3f, 0.2f};
  std::vector<float> avg;
  c->exchange({g}, avg);
  std::vector<float> expected(15, 0.0f);
  expected[1] = -9;
  expected[5] = 8;
  expected[6] = -7;      // k = ceil(0.25 x 12) = 3 of the matrix
  expected[13] = -0.3f;  // k = 1 of the bias
  EXPECT_EQ(avg, expected);
  EXPECT_TRUE(c->residual(0).empty());
}

TEST(Compression, KeepingEverythingIsThePlainAverage) {
  for (const char* type : {"topk", "randk"})
    for (bool feedback : {true, false}) {
      auto c = make_compressor(layout(), 4, 3, options(type, 1, feedback));
      for (int step = 0; step < 3; ++step) {
        const auto grads = random_grads(4, 15, step);
        std::vector<float> avg, plain(15, 0.0f);
        c->exchange(grads, avg);
        for (const auto& g : grads)
          for (size_t k = 0; k < 15; ++k) plain[k] += g[k] / 4.0f;
        EXPECT_EQ(avg, plain) << type;
      }
    }
}

TEST(Compression, RandomKIsSeededAndDiffersAcrossWorkers) {
  auto a = make_compressor(layout(), 2, 11, options("randk", 0.5, false));
  auto b = make_compressor(layout(), 2, 11, options("randk", 0.5, false));
  const std::vector<std::vector<float>> grads = {std::vector<float>(15, 1.0f),
                                                 std::vector<float>(15, 1.0f)};
  std::vector<float> x, y;
  a->exchange(grads, x);
  b->exchange(grads, y);
  EXPECT_EQ(x, y);
  EXPECT_NE(a->transmitted(0), a->transmitted(1));
}

TEST(Compression, SparseExchangeSendsValuesAndFourByteIndices) {
  const CompressorKind* topk = find_compressor("topk");
  ASSERT_NE(topk, nullptr);
  CompressionOptions o = options("topk", 0.01, true);
  o.values.set("select_flops_per_element", {16, ""});
  const CompressedExchange e = topk->plan({1000, 8, 2}, o);
  ASSERT_EQ(e.messages.size(), 1u);
  EXPECT_EQ(e.messages[0].op, CollectiveOp::allgather);
  EXPECT_DOUBLE_EQ(e.messages[0].bytes, 8 * 10 * (2 + 4));  // k = 10 fp16 values + indices
  EXPECT_DOUBLE_EQ(e.messages[0].flops_before, 16 * 1000 + 2 * 1000);
  EXPECT_DOUBLE_EQ(e.flops_after, 8 * 10);
  EXPECT_EQ(find_compressor("none"), nullptr);
  EXPECT_EQ(sparse_count(0.001, 10), 1u);
  EXPECT_EQ(sparse_count(1, 10), 10u);
}

namespace {

CompressionOptions powersgd(int rank, bool feedback) {
  CompressionOptions o;
  o.type = "powersgd";
  o.values.set("rank", {static_cast<double>(rank), ""});
  o.values.set("error_feedback", {feedback ? 1.0 : 0.0, ""});
  return o;
}

}  // namespace

TEST(Compression, PowerSgdAtFullRankIsTheAverageToFloatPrecision) {
  // Rank min(n, m): P is an orthonormal basis of the rows' space, P P^T M = M.
  auto c = make_compressor(layout(), 3, 5, powersgd(3, true));
  for (int step = 0; step < 3; ++step) {
    const auto grads = random_grads(3, 15, 40 + step);
    std::vector<float> avg, plain(15, 0.0f);
    c->exchange(grads, avg);
    for (const auto& g : grads)
      for (size_t k = 0; k < 15; ++k) plain[k] += g[k] / 3.0f;
    for (size_t k = 0; k < 15; ++k) EXPECT_NEAR(avg[k], plain[k], 1e-5) << k;
    for (size_t k = 12; k < 15; ++k) EXPECT_EQ(avg[k], plain[k]);  // the bias, uncompressed
  }
}

TEST(Compression, PowerSgdResidualIsAccumulatedMinusApplied) {
  auto c = make_compressor(layout(), 2, 9, powersgd(1, true));
  std::vector<std::vector<float>> residual(2, std::vector<float>(15, 0.0f));
  std::vector<float> avg;
  for (int step = 0; step < 4; ++step) {
    const auto grads = random_grads(2, 15, 70 + step);
    c->exchange(grads, avg);
    double error = 0;
    for (int w = 0; w < 2; ++w) {
      for (size_t k = 0; k < 15; ++k) {
        const float acc = grads[w][k] + residual[w][k];
        EXPECT_EQ(c->residual(w)[k], acc - c->transmitted(w)[k]);
        error += std::fabs(c->residual(w)[k]);
      }
      residual[w] = c->residual(w);
    }
    EXPECT_GT(error, 0);  // rank 1 of a 3 x 4 matrix drops something
  }
}

TEST(Compression, PowerSgdSendsPAndQOfRankR) {
  const CompressorKind* p = find_compressor("powersgd");
  ASSERT_NE(p, nullptr);
  const CompressedExchange e = p->plan({1e6 + 100, 8, 4, {1e6, 100}}, powersgd(4, false));
  ASSERT_EQ(e.messages.size(), 2u);
  // Layers as square matrices: 1000 x 1000 at rank 4, 10 x 10 at rank 4.
  for (const CompressedMessage& m : e.messages) {
    EXPECT_EQ(m.op, CollectiveOp::allreduce);
    EXPECT_DOUBLE_EQ(m.bytes, (4 * 1000 + 4 * 10) * 4);
  }
  EXPECT_DOUBLE_EQ(e.messages[0].flops_before, 2 * 4 * (1e6 + 100));
  EXPECT_DOUBLE_EQ(e.messages[1].flops_before, 4 * 1000 * 16 + 4 * 10 * 16 + 2 * 4 * (1e6 + 100));
  EXPECT_DOUBLE_EQ(e.flops_after, 2 * 4 * (1e6 + 100));
}

TEST(Compression, SignSgdSendsScaledSignsAndCarriesTheRestExactly) {
  CompressionOptions o;
  o.type = "signsgd";
  o.values.set("error_feedback", {1, ""});
  auto c = make_compressor(layout(), 2, 1, o);
  std::vector<std::vector<float>> residual(2, std::vector<float>(15, 0.0f));
  std::vector<float> avg;
  for (int step = 0; step < 4; ++step) {
    const auto grads = random_grads(2, 15, 90 + step);
    c->exchange(grads, avg);
    for (int w = 0; w < 2; ++w) {
      for (size_t k = 0; k < 15; ++k) {
        const float acc = grads[w][k] + residual[w][k];
        EXPECT_EQ(c->residual(w)[k], acc - c->transmitted(w)[k]);
        EXPECT_EQ(std::signbit(c->transmitted(w)[k]), acc < 0);
      }
      // One magnitude per tensor: |sent| is the same over the matrix.
      for (size_t k = 1; k < 12; ++k)
        EXPECT_EQ(std::fabs(c->transmitted(w)[k]), std::fabs(c->transmitted(w)[0]));
      residual[w] = c->residual(w);
    }
  }
  const CompressedExchange e = find_compressor("signsgd")->plan({1001, 8, 4, {1001}}, o);
  ASSERT_EQ(e.messages.size(), 1u);
  EXPECT_EQ(e.messages[0].op, CollectiveOp::allgather);
  EXPECT_DOUBLE_EQ(e.messages[0].bytes, 8 * (126 + 4));  // ceil(1001 / 8) bytes of signs + scale
}

namespace {

CompressionOptions qsgd(double levels, double bucket, bool feedback) {
  CompressionOptions o;
  o.type = "qsgd";
  o.values.set("levels", {levels, ""});
  o.values.set("bucket_size", {bucket, ""});
  o.values.set("error_feedback", {feedback ? 1.0 : 0.0, ""});
  return o;
}

}  // namespace

TEST(Compression, QsgdIsUnbiasedWithinThePapersVarianceBound) {
  // One vector of d = 64 elements quantized 20,000 times (each exchange draws anew): the mean
  // approaches v, and the mean squared error is the exact variance (||v|| / s)^2 sum p (1 - p)
  // (p the fraction each element rounds up with), which is at most min(d / s^2, sqrt(d) / s)
  // ||v||^2 (Alistarh et al. 2017, Lemma 3.1).
  const size_t d = 64;
  const double s = 4;
  const std::vector<float> v = random_grads(1, d, 5).front();
  double norm2 = 0;
  for (float x : v) norm2 += static_cast<double>(x) * x;
  const double norm = std::sqrt(norm2);
  double variance = 0;  // E ||Q(v) - v||^2
  std::vector<double> sigma(d);
  for (size_t k = 0; k < d; ++k) {
    const double r = s * std::fabs(v[k]) / norm, p = r - std::floor(r);
    variance += norm2 / (s * s) * p * (1 - p);
    sigma[k] = norm / s * std::sqrt(p * (1 - p));
  }
  auto c = make_compressor({{0, 1, d}}, 1, 3, qsgd(s, 1024, false));
  const int trials = 20000;
  std::vector<double> mean(d, 0.0);
  double squared_error = 0;
  std::vector<float> avg;
  for (int t = 0; t < trials; ++t) {
    c->exchange({v}, avg);
    for (size_t k = 0; k < d; ++k) {
      mean[k] += avg[k] / trials;
      squared_error += (avg[k] - v[k]) * static_cast<double>(avg[k] - v[k]) / trials;
    }
  }
  for (size_t k = 0; k < d; ++k)
    EXPECT_NEAR(mean[k], v[k], 5 * sigma[k] / std::sqrt(trials) + 1e-6) << k;
  EXPECT_NEAR(squared_error, variance, 0.05 * variance);
  EXPECT_LE(variance, std::min(d / (s * s), std::sqrt(d) / s) * norm2);
  EXPECT_GT(variance, 0);
}

TEST(Compression, QsgdSendsLevelsOfEachBucketsNormAndCarriesTheRest) {
  // Buckets of 5 over the 3 x 4 matrix (5, 5, 2) and the bias (3): every element sent is
  // sign(v) ||bucket|| l / s with l an integer in [0, s], rounded down or up from s |v| / ||b||.
  const double s = 3;
  auto c = make_compressor(layout(), 2, 8, qsgd(s, 5, true));
  std::vector<std::vector<float>> residual(2, std::vector<float>(15, 0.0f));
  std::vector<float> avg;
  const std::vector<std::pair<size_t, size_t>> buckets = {{0, 5}, {5, 10}, {10, 12}, {12, 15}};
  for (int step = 0; step < 3; ++step) {
    const auto grads = random_grads(2, 15, 30 + step);
    c->exchange(grads, avg);
    for (int w = 0; w < 2; ++w) {
      std::vector<float> acc(15);
      for (size_t k = 0; k < 15; ++k) acc[k] = grads[w][k] + residual[w][k];
      for (auto [lo, hi] : buckets) {
        double n2 = 0;
        for (size_t k = lo; k < hi; ++k) n2 += static_cast<double>(acc[k]) * acc[k];
        const double norm = std::sqrt(n2);
        for (size_t k = lo; k < hi; ++k) {
          const double sent = c->transmitted(w)[k];
          const double level = std::fabs(sent) * s / norm;
          EXPECT_NEAR(level, std::round(level), 1e-4) << k;
          const double exact = s * std::fabs(acc[k]) / norm;
          EXPECT_TRUE(std::round(level) == std::floor(exact) ||
                      std::round(level) == std::floor(exact) + 1)
              << k;
          EXPECT_TRUE(sent == 0 || std::signbit(sent) == std::signbit(acc[k])) << k;
          EXPECT_EQ(c->residual(w)[k], acc[k] - c->transmitted(w)[k]);
        }
      }
      residual[w] = c->residual(w);
    }
  }
  // Seeded: the same seed draws the same, another seed other levels.
  auto a = make_compressor(layout(), 2, 8, qsgd(s, 5, false));
  auto b = make_compressor(layout(), 2, 8, qsgd(s, 5, false));
  auto other = make_compressor(layout(), 2, 9, qsgd(s, 5, false));
  std::vector<float> x, y, z;
  const auto grads = random_grads(2, 15, 1);
  a->exchange(grads, x);
  b->exchange(grads, y);
  other->exchange(grads, z);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  EXPECT_TRUE(a->residual(0).empty());
}

TEST(Compression, QsgdMessageIsLevelAndSignBitsPlusANormPerBucket) {
  const CompressorKind* q = find_compressor("qsgd");
  ASSERT_NE(q, nullptr);
  // s = 7: 3 level bits + sign = 4 bits; s = 8: 4 + 1 = 5; s = 1: 1 + 1 = 2; s = 2^24: 25 + 1.
  for (auto [levels, bits] :
       std::vector<std::pair<double, double>>{{7, 4}, {8, 5}, {1, 2}, {16777216, 26}}) {
    CompressionOptions o = qsgd(levels, 512, true);
    o.values.set("quantize_flops_per_element", {11, ""});
    const CompressedExchange e = q->plan({1001, 8, 2, {1001}}, o);
    ASSERT_EQ(e.messages.size(), 1u);
    EXPECT_EQ(e.messages[0].op, CollectiveOp::allgather);
    // ceil(1001 bits / 8) bytes + ceil(1001 / 512) = 2 norms of 4 bytes, per worker.
    EXPECT_DOUBLE_EQ(e.messages[0].bytes, 8 * (std::ceil(1001 * bits / 8) + 2 * 4)) << levels;
    EXPECT_DOUBLE_EQ(e.messages[0].flops_before, (11 + 2) * 1001);
    EXPECT_DOUBLE_EQ(e.flops_after, 2 * 8 * 1001);
  }
}
