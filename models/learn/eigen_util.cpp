#include "models/learn/eigen_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/core/det_math.hpp"

namespace sgdsim::learn {

void pin_cache_sizes() {
  Eigen::setCpuCacheSizes(kPinnedCacheSizes.l1_bytes, kPinnedCacheSizes.l2_bytes,
                          kPinnedCacheSizes.l3_bytes);
}

CacheSizes eigen_cache_sizes() {
  return {static_cast<long>(Eigen::l1CacheSize()), static_cast<long>(Eigen::l2CacheSize()),
          static_cast<long>(Eigen::l3CacheSize())};
}

void simulate_detected_cache_sizes(const CacheSizes& sizes) {
  Eigen::setCpuCacheSizes(sizes.l1_bytes, sizes.l2_bytes, sizes.l3_bytes);
}

namespace {
/// SGDSIM_SIMULATE_CPU_CACHES, applied once at start-up as if the CPU reported those sizes
/// (a test knob: with the pinning in place it changes nothing; ignored when malformed).
bool simulate_from_environment() {
  const char* v = std::getenv("SGDSIM_SIMULATE_CPU_CACHES");
  CacheSizes s;
  if (v == nullptr || std::sscanf(v, "%ld,%ld,%ld", &s.l1_bytes, &s.l2_bytes, &s.l3_bytes) != 3 ||
      s.l1_bytes <= 0 || s.l2_bytes <= 0 || s.l3_bytes <= 0)
    return false;
  simulate_detected_cache_sizes(s);
  return true;
}
[[maybe_unused]] const bool kSimulatedAtStartup = simulate_from_environment();
}  // namespace

MatrixF gather(const Dataset& d, std::span<const int> batch) {
  MatrixF x(d.dim, static_cast<Eigen::Index>(batch.size()));
  for (size_t j = 0; j < batch.size(); ++j)
    x.col(static_cast<Eigen::Index>(j)) =
        CMapVec(d.x.data() + static_cast<size_t>(batch[j]) * d.dim, d.dim);
  return x;
}

namespace {
/// Softmax probabilities of logits (classes x batch), computed stably.
MatrixF softmax(const MatrixF& logits) {
  MatrixF p = logits;
  for (Eigen::Index j = 0; j < p.cols(); ++j) {
    p.col(j).array() -= p.col(j).maxCoeff();
    // detmath, not Eigen/libm exp: the scalar tail would call glibc expf (CPU-dependent ifunc).
    p.col(j) =
        p.col(j).unaryExpr([](float v) -> float { return static_cast<float>(detmath::exp(v)); });
    p.col(j) /= p.col(j).sum();
  }
  return p;
}
}  // namespace

double softmax_cross_entropy(const MatrixF& logits, const Dataset& d, std::span<const int> batch,
                             MatrixF& delta) {
  const auto n = static_cast<Eigen::Index>(batch.size());
  delta = softmax(logits);
  double loss = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const int label = d.y[static_cast<size_t>(batch[j])];
    loss -= detmath::log(std::max(1e-30, static_cast<double>(delta(label, j))));
    delta(label, j) -= 1.0f;
  }
  delta /= static_cast<float>(n);
  return loss / static_cast<double>(n);
}

void add_evaluation(const MatrixF& logits, const Dataset& d, int first, Evaluation& sum) {
  MatrixF p = softmax(logits);
  for (Eigen::Index j = 0; j < p.cols(); ++j) {
    const int label = d.y[static_cast<size_t>(first + j)];
    sum.loss -= detmath::log(std::max(1e-30, static_cast<double>(p(label, j))));
    Eigen::Index best;
    p.col(j).maxCoeff(&best);
    sum.accuracy += best == label;
  }
}

size_t DenseStack::layout(std::vector<int> widths, size_t offset) {
  sizes = std::move(widths);
  offsets.clear();
  for (size_t l = 0; l < layers(); ++l) {
    offsets.push_back(offset);
    offset += weight_count(l) + sizes[l + 1];
  }
  return offset;
}

void DenseStack::forward(const std::vector<float>& p, MatrixF x, std::vector<MatrixF>& acts) const {
  acts.assign(layers() + 1, MatrixF());
  acts[0] = std::move(x);
  for (size_t l = 0; l < layers(); ++l) {
    const int out = sizes[l + 1], in = sizes[l];
    CMapRows w(p.data() + offsets[l], out, in);
    CMapVec b(p.data() + offsets[l] + weight_count(l), out);
    MatrixF z = w * acts[l];
    z.colwise() += b;
    if (l + 1 < layers()) z = z.cwiseMax(0.0f);
    acts[l + 1] = std::move(z);
  }
}

MatrixF DenseStack::backward(const std::vector<float>& p, const std::vector<MatrixF>& acts,
                             MatrixF delta, std::vector<float>& grad, bool input_grad) const {
  for (size_t l = layers(); l-- > 0;) {
    const int out = sizes[l + 1], in = sizes[l];
    MapRows gw(grad.data() + offsets[l], out, in);
    MapVec gb(grad.data() + offsets[l] + weight_count(l), out);
    gw.noalias() = delta * acts[l].transpose();
    gb = delta.rowwise().sum();
    if (l == 0 && !input_grad) return {};
    CMapRows w(p.data() + offsets[l], out, in);
    MatrixF back = w.transpose() * delta;
    if (l > 0) back = back.cwiseProduct((acts[l].array() > 0.0f).cast<float>().matrix());
    delta = std::move(back);
  }
  return delta;
}

}  // namespace sgdsim::learn
