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

std::vector<TensorLayout> Mlp::tensors() const {
  std::vector<TensorLayout> out;
  impl_->dense.append_tensors(out);
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

AdamW::AdamW(size_t n, AdamWOptions options) : o_(options), m_(n, 0.0f), v_(n, 0.0f) {}

void AdamW::step(std::vector<float>& params, const std::vector<float>& grad, double lr) {
  beta1_power_ *= o_.beta1;
  beta2_power_ *= o_.beta2;
  const auto decay = static_cast<float>(1 - lr * o_.weight_decay);
  const auto b1 = static_cast<float>(o_.beta1), b2 = static_cast<float>(o_.beta2);
  const auto step_size = static_cast<float>(lr / (1 - beta1_power_));
  const auto correction2 = static_cast<float>(std::sqrt(1 - beta2_power_));
  const auto eps = static_cast<float>(o_.eps);
  for (size_t k = 0; k < params.size(); ++k) {
    params[k] *= decay;
    m_[k] = b1 * m_[k] + (1 - b1) * grad[k];
    v_[k] = b2 * v_[k] + (1 - b2) * grad[k] * grad[k];
    params[k] -= step_size * m_[k] / (std::sqrt(v_[k]) / correction2 + eps);
  }
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
