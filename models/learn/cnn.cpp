// A LeNet-style convolutional network on Eigen: convolutions as im2col + one GEMM per layer
// and batch, ReLU, 2 x 2 max-pooling, then the dense stack of the MLP. Leaves out padding,
// strides, batch normalisation and dropout.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include "models/learn/eigen_util.hpp"
#include "sim/core/rng.hpp"

namespace sgdsim::learn {

namespace {

/// One conv + ReLU + pool layer's geometry and place in the flat parameter vector.
struct ConvLayer {
  int in_c, out_c, k;
  int h, w;    // input rows and columns
  int ho, wo;  // convolution output
  int hp, wp;  // pooled output
  size_t offset;
  size_t patch() const { return size_t(in_c) * k * k; }
  size_t weights() const { return size_t(out_c) * patch(); }
  size_t end() const { return offset + weights() + size_t(out_c); }  // after its biases
};

/// What the backward pass needs of one conv layer's forward pass.
struct ConvCache {
  MatrixF cols;              // im2col of the input: k*k*in_c x ho*wo*batch
  MatrixF act;               // ReLU output: out_c x ho*wo*batch
  std::vector<int32_t> arg;  // per pooled element, the column of `act` it took its max from
};

/// Lays out `in` (c x h*w*batch) as im2col columns (k*k*c x ho*wo*batch; a column holds the
/// patch row by row, the channels of a pixel together, so each pixel is one contiguous copy).
MatrixF im2col(const MatrixF& in, const ConvLayer& L, int batch) {
  const Eigen::Index hw = Eigen::Index(L.h) * L.w, ohw = Eigen::Index(L.ho) * L.wo;
  MatrixF cols(static_cast<Eigen::Index>(L.patch()), ohw * batch);
  for (int b = 0; b < batch; ++b)
    for (int oy = 0; oy < L.ho; ++oy)
      for (int ox = 0; ox < L.wo; ++ox) {
        float* out = cols.data() + (b * ohw + Eigen::Index(oy) * L.wo + ox) * cols.rows();
        for (int ky = 0; ky < L.k; ++ky)
          for (int kx = 0; kx < L.k; ++kx) {
            const float* pixel =
                in.data() + (b * hw + Eigen::Index(oy + ky) * L.w + ox + kx) * L.in_c;
            out = std::copy(pixel, pixel + L.in_c, out);
          }
      }
  return cols;
}

/// Adds im2col columns back onto the image they came from (the adjoint of im2col).
MatrixF col2im(const MatrixF& cols, const ConvLayer& L, int batch) {
  const Eigen::Index hw = Eigen::Index(L.h) * L.w, ohw = Eigen::Index(L.ho) * L.wo;
  MatrixF in = MatrixF::Zero(L.in_c, hw * batch);
  for (int b = 0; b < batch; ++b)
    for (int oy = 0; oy < L.ho; ++oy)
      for (int ox = 0; ox < L.wo; ++ox) {
        const float* src = cols.data() + (b * ohw + Eigen::Index(oy) * L.wo + ox) * cols.rows();
        for (int ky = 0; ky < L.k; ++ky)
          for (int kx = 0; kx < L.k; ++kx) {
            float* pixel = in.data() + (b * hw + Eigen::Index(oy + ky) * L.w + ox + kx) * L.in_c;
            for (int c = 0; c < L.in_c; ++c) pixel[c] += *src++;
          }
      }
  return in;
}

/// The conv layers of `shape`, laid out from offset 0 of the flat parameter vector; throws
/// std::invalid_argument when a layer's input is smaller than the kernel.
std::vector<ConvLayer> conv_layers(const CnnShape& shape) {
  if (shape.channels.empty()) throw std::invalid_argument("a CNN needs at least one conv layer");
  std::vector<ConvLayer> layers;
  int h = shape.height, w = shape.width, c = shape.in_channels;
  size_t offset = 0;
  for (size_t l = 0; l < shape.channels.size(); ++l) {
    if (h < shape.kernel + 1 || w < shape.kernel + 1)
      throw std::invalid_argument(fmt::format(
          "conv layer {} gets {}x{} inputs: too small for a {}x{} kernel and 2x2 pooling", l + 1, h,
          w, shape.kernel, shape.kernel));
    const int ho = h - shape.kernel + 1, wo = w - shape.kernel + 1;
    layers.push_back({c, shape.channels[l], shape.kernel, h, w, ho, wo, ho / 2, wo / 2, offset});
    offset = layers.back().end();
    h = ho / 2;
    w = wo / 2;
    c = shape.channels[l];
  }
  return layers;
}

/// Widths of the dense layers after `conv`: flattened pooled output, hidden..., classes.
std::vector<int> dense_widths(const CnnShape& shape, const std::vector<ConvLayer>& conv) {
  std::vector<int> widths{conv.back().out_c * conv.back().hp * conv.back().wp};
  widths.insert(widths.end(), shape.hidden.begin(), shape.hidden.end());
  widths.push_back(shape.classes);
  return widths;
}

}  // namespace

struct Cnn::Impl {
  std::vector<ConvLayer> conv;
  DenseStack dense;
  std::vector<float> params;

  /// Logits (classes x batch) of the samples `x` (dim x batch); fills the caches if given.
  MatrixF forward(const std::vector<float>& p, const MatrixF& x, std::vector<ConvCache>* caches,
                  std::vector<MatrixF>& dense_acts) const {
    const auto batch = static_cast<int>(x.cols());
    const Eigen::Index dim = Eigen::Index(conv[0].in_c) * conv[0].h * conv[0].w;
    if (x.rows() != dim)
      throw std::invalid_argument(
          fmt::format("the CNN takes {} features per sample, the dataset has {}", dim, x.rows()));
    // Channel-major samples (c, pixel) to c x pixels*batch.
    const Eigen::Index hw0 = Eigen::Index(conv[0].h) * conv[0].w;
    MatrixF in(conv[0].in_c, hw0 * batch);
    for (int b = 0; b < batch; ++b)
      for (int c = 0; c < conv[0].in_c; ++c)
        for (Eigen::Index q = 0; q < hw0; ++q) in(c, b * hw0 + q) = x(c * hw0 + q, b);
    if (caches != nullptr) caches->assign(conv.size(), ConvCache());
    for (size_t l = 0; l < conv.size(); ++l) {
      const ConvLayer& L = conv[l];
      MatrixF cols = im2col(in, L, batch);
      CMapRows w(p.data() + L.offset, L.out_c, static_cast<Eigen::Index>(L.patch()));
      CMapVec bias(p.data() + L.offset + L.weights(), L.out_c);
      MatrixF act = w * cols;
      act.colwise() += bias;
      act = act.cwiseMax(0.0f);
      const Eigen::Index ohw = Eigen::Index(L.ho) * L.wo, phw = Eigen::Index(L.hp) * L.wp;
      MatrixF pooled(L.out_c, phw * batch);
      std::vector<int32_t> arg(static_cast<size_t>(pooled.size()));
      for (int b = 0; b < batch; ++b)
        for (int py = 0; py < L.hp; ++py)
          for (int px = 0; px < L.wp; ++px) {
            const Eigen::Index j = b * phw + Eigen::Index(py) * L.wp + px;
            const Eigen::Index base = b * ohw + Eigen::Index(2 * py) * L.wo + 2 * px;
            const Eigen::Index cand[4] = {base, base + 1, base + L.wo, base + L.wo + 1};
            for (int c = 0; c < L.out_c; ++c) {
              Eigen::Index best = cand[0];
              for (int t = 1; t < 4; ++t)
                if (act(c, cand[t]) > act(c, best)) best = cand[t];
              pooled(c, j) = act(c, best);
              arg[static_cast<size_t>(j * L.out_c + c)] = static_cast<int32_t>(best);
            }
          }
      if (caches != nullptr) {
        (*caches)[l].cols = std::move(cols);
        (*caches)[l].act = std::move(act);
        (*caches)[l].arg = std::move(arg);
      }
      in = std::move(pooled);
    }
    // Flatten c x pixels*batch to (c, pixel) x batch for the dense layers.
    const ConvLayer& last = conv.back();
    const Eigen::Index phw = Eigen::Index(last.hp) * last.wp;
    MatrixF flat(last.out_c * phw, batch);
    for (int b = 0; b < batch; ++b)
      for (int c = 0; c < last.out_c; ++c)
        for (Eigen::Index q = 0; q < phw; ++q) flat(c * phw + q, b) = in(c, b * phw + q);
    dense.forward(p, std::move(flat), dense_acts);
    return dense_acts.back();
  }
};

Cnn::Cnn(const CnnShape& shape, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  pin_cache_sizes();
  impl_->conv = conv_layers(shape);
  impl_->params.assign(
      impl_->dense.layout(dense_widths(shape, impl_->conv), impl_->conv.back().end()), 0.0f);
  Rng rng(seed, 0x434E4EULL);
  for (const ConvLayer& L : impl_->conv) {
    const double scale = std::sqrt(2.0 / static_cast<double>(L.patch()));  // He; biases at 0
    for (size_t k = 0; k < L.weights(); ++k)
      impl_->params[L.offset + k] = static_cast<float>(rng.normal() * scale);
  }
  impl_->dense.init(impl_->params, [&] { return rng.normal(); });
}

Cnn::~Cnn() = default;
Cnn::Cnn(const Cnn& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
std::unique_ptr<Model> Cnn::clone() const {
  return std::make_unique<Cnn>(*this);
}
std::vector<float>& Cnn::parameters() {
  return impl_->params;
}
const std::vector<float>& Cnn::parameters() const {
  return impl_->params;
}

std::vector<size_t> Cnn::layer_parameters() const {
  std::vector<size_t> out;
  for (const ConvLayer& L : impl_->conv) out.push_back(L.end() - L.offset);
  const DenseStack& d = impl_->dense;
  for (size_t l = 0; l < d.layers(); ++l) out.push_back(d.weight_count(l) + d.sizes[l + 1]);
  return out;
}

std::vector<TensorLayout> Cnn::tensors() const {
  std::vector<TensorLayout> out;
  for (const ConvLayer& L : impl_->conv) {
    out.push_back({L.offset, size_t(L.out_c), L.patch()});
    out.push_back({L.offset + L.weights(), 1, size_t(L.out_c)});
  }
  impl_->dense.append_tensors(out);
  return out;
}

double Cnn::gradient(const std::vector<float>& params, const Dataset& data,
                     std::span<const int> batch, std::vector<float>& grad) const {
  const Impl& m = *impl_;
  const auto n = static_cast<int>(batch.size());
  std::vector<ConvCache> caches;
  std::vector<MatrixF> dense_acts;
  const MatrixF logits = m.forward(params, gather(data, batch), &caches, dense_acts);
  MatrixF delta;
  const double loss = softmax_cross_entropy(logits, data, batch, delta);
  grad.assign(params.size(), 0.0f);
  MatrixF dflat = m.dense.backward(params, dense_acts, std::move(delta), grad, true);
  // Unflatten (c, pixel) x batch to c x pixels*batch: the gradient at the last pooled output.
  const ConvLayer& last = m.conv.back();
  Eigen::Index phw = Eigen::Index(last.hp) * last.wp;
  MatrixF dpool(last.out_c, phw * n);
  for (int b = 0; b < n; ++b)
    for (int c = 0; c < last.out_c; ++c)
      for (Eigen::Index q = 0; q < phw; ++q) dpool(c, b * phw + q) = dflat(c * phw + q, b);
  for (size_t l = m.conv.size(); l-- > 0;) {
    const ConvLayer& L = m.conv[l];
    const ConvCache& cache = caches[l];
    // Max-pool routes each gradient to the element it took; ReLU masks.
    MatrixF dact = MatrixF::Zero(L.out_c, cache.act.cols());
    for (Eigen::Index j = 0; j < dpool.cols(); ++j)
      for (int c = 0; c < L.out_c; ++c) {
        const Eigen::Index from = cache.arg[static_cast<size_t>(j * L.out_c + c)];
        if (cache.act(c, from) > 0.0f) dact(c, from) = dpool(c, j);  // pool windows are disjoint
      }
    const auto patch = static_cast<Eigen::Index>(L.patch());
    MapRows gw(grad.data() + L.offset, L.out_c, patch);
    MapVec gb(grad.data() + L.offset + L.weights(), L.out_c);
    gw.noalias() = dact * cache.cols.transpose();
    gb = dact.rowwise().sum();
    if (l > 0) {
      CMapRows w(params.data() + L.offset, L.out_c, patch);
      MatrixF dcols = w.transpose() * dact;
      dpool = col2im(dcols, L, n);
    }
  }
  return loss;
}

Evaluation Cnn::evaluate(const Dataset& data) const {
  Evaluation e;
  const int chunk = 256;
  std::vector<int> idx;
  std::vector<MatrixF> dense_acts;
  for (int start = 0; start < data.size(); start += chunk) {
    const int end = std::min(data.size(), start + chunk);
    idx.resize(static_cast<size_t>(end - start));
    std::iota(idx.begin(), idx.end(), start);
    add_evaluation(impl_->forward(impl_->params, gather(data, idx), nullptr, dense_acts), data,
                   start, e);
  }
  e.loss /= data.size();
  e.accuracy /= data.size();
  return e;
}

}  // namespace sgdsim::learn

namespace sgdsim::learn {

StepBenchmark benchmark_cnn_step(const CnnShape& shape, int batch, int repeats) {
  Cnn m(shape, 1);
  Dataset d =
      gaussian_mixture(batch, shape.in_channels * shape.height * shape.width, shape.classes, 1);
  std::vector<int> idx(static_cast<size_t>(batch));
  std::iota(idx.begin(), idx.end(), 0);
  // The GEMMs of one step: per conv layer forward W cols, dW = D cols^T and (but the first)
  // dcols = W^T D; per dense layer W X, D X^T and W^T D (the conv layers below need it).
  struct Gemm {
    MatrixF a, b;
    bool transpose_a, transpose_b;
  };
  std::vector<Gemm> gemms;
  double flops = 0;
  auto add = [&](Eigen::Index m_rows, Eigen::Index k, Eigen::Index n_cols, bool ta, bool tb) {
    gemms.push_back({ta ? MatrixF::Random(k, m_rows) : MatrixF::Random(m_rows, k),
                     tb ? MatrixF::Random(n_cols, k) : MatrixF::Random(k, n_cols), ta, tb});
    flops += 2.0 * double(m_rows) * double(k) * double(n_cols);
  };
  const std::vector<ConvLayer> conv = conv_layers(shape);
  for (size_t l = 0; l < conv.size(); ++l) {
    const auto patch = static_cast<Eigen::Index>(conv[l].patch());
    const Eigen::Index cols = Eigen::Index(conv[l].ho) * conv[l].wo * batch;
    add(conv[l].out_c, patch, cols, false, false);            // forward
    add(conv[l].out_c, cols, patch, false, true);             // dW
    if (l > 0) add(patch, conv[l].out_c, cols, true, false);  // dcols
  }
  const std::vector<int> widths = dense_widths(shape, conv);
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    add(widths[l + 1], widths[l], batch, false, false);
    add(widths[l + 1], batch, widths[l], false, true);
    add(widths[l], widths[l + 1], batch, true, false);
  }
  auto now = [] { return std::chrono::steady_clock::now(); };
  std::vector<float> g;
  m.gradient(m.parameters(), d, idx, g);
  auto t0 = now();
  for (int r = 0; r < repeats; ++r) m.gradient(m.parameters(), d, idx, g);
  const double step_s = std::chrono::duration<double>(now() - t0).count();
  MatrixF out;
  float sink = 0;
  t0 = now();
  for (int r = 0; r < repeats; ++r)
    for (const Gemm& x : gemms) {
      if (x.transpose_a)
        out.noalias() = x.a.transpose() * x.b;
      else if (x.transpose_b)
        out.noalias() = x.a * x.b.transpose();
      else
        out.noalias() = x.a * x.b;
      sink += out(0, 0);
    }
  const double gemm_s = std::chrono::duration<double>(now() - t0).count();
  (void)sink;
  return {flops * repeats / step_s / 1e9, flops * repeats / gemm_s / 1e9};
}

}  // namespace sgdsim::learn
