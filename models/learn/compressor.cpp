// The compressor registry and the sparsifiers' shared math (top-k and random-k keep k elements
// of each tensor; what they drop is the worker's error-feedback residual when that is on).
#include "models/learn/compressor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/core/registry.hpp"

namespace sgdsim::learn {

namespace {

// Built on first use: registrations run during static initialization, in any order.
Registry<CompressorKind>& registry() {
  static Registry<CompressorKind> r;
  return r;
}

}  // namespace

PerWorkerCompressor::PerWorkerCompressor(int workers, bool feedback)
    : feedback_(feedback),
      residual_(static_cast<size_t>(workers)),
      sent_(static_cast<size_t>(workers)) {}

void PerWorkerCompressor::exchange(const std::vector<std::vector<float>>& grads,
                                   std::vector<float>& average) {
  const size_t n = grads.front().size();
  for (size_t w = 0; w < grads.size(); ++w) {
    std::vector<float> acc = grads[w];
    if (feedback_) {
      if (residual_[w].empty()) residual_[w].assign(n, 0.0f);
      for (size_t k = 0; k < n; ++k) acc[k] += residual_[w][k];
    }
    sent_[w].assign(n, 0.0f);
    encode(acc, w, sent_[w]);
    for (size_t k = 0; feedback_ && k < n; ++k) residual_[w][k] = acc[k] - sent_[w][k];
  }
  // The same summation as sync's average.
  average.assign(n, 0.0f);
  for (const auto& s : sent_)
    for (size_t k = 0; k < n; ++k) average[k] += s[k] / static_cast<float>(sent_.size());
  ++step_;
}

const std::vector<float>& PerWorkerCompressor::residual(int worker) const {
  return residual_.at(static_cast<size_t>(worker));
}

const std::vector<float>& PerWorkerCompressor::transmitted(int worker) const {
  return sent_.at(static_cast<size_t>(worker));
}

double CompressionOptions::number(const std::string& key) const {
  if (values.has(key)) return values.number(key);
  const CompressorKind* kind = find_compressor(type);
  if (kind != nullptr)
    for (const Param& p : kind->params)
      if (p.key == key) {
        const auto v = default_param_value(p);
        return v ? v->number : 0;
      }
  throw std::out_of_range("compressor option not declared: " + key);
}

CompressorRegistration::CompressorRegistration(CompressorKind kind) {
  for (const CompressorKind* other : registry().all())
    for (const Param& a : other->params)
      for (const Param& b : kind.params)
        if (a.key == b.key && (a.default_value != b.default_value || a.type != b.type))
          throw std::logic_error("compressor option declared twice differently: " + a.key);
  registry().add(std::make_unique<CompressorKind>(std::move(kind)));
}

std::vector<std::string> compressor_names() {
  return registry().names();
}

const CompressorKind* find_compressor(const std::string& name) {
  return registry().find(name);
}

std::vector<DeclaredCompressorParam> compressor_params() {
  std::vector<DeclaredCompressorParam> out;
  for (const CompressorKind* k : registry().all())
    for (const Param& p : k->params) {
      auto same = std::find_if(out.begin(), out.end(), [&](const DeclaredCompressorParam& d) {
        return d.param.key == p.key;
      });
      if (same != out.end())
        same->owners.push_back(k->id);
      else
        out.push_back({{k->id}, p});
    }
  return out;
}

Param error_feedback_param() {
  return {.key = "error_feedback",
          .type = ParamType::boolean,
          .default_value = true,
          .brief =
              "carry what a worker did not transmit into its next step (error feedback, "
              "Stich et al. 2018; Karimireddy et al. 2019)"};
}

Param sparse_ratio_param() {
  return {.key = "ratio",
          .type = ParamType::number,
          .default_value = 0.01,
          .brief =
              "fraction of each tensor's elements a sparsifier keeps, k = ceil(ratio n) "
              "(1: everything, which trains exactly as without compression)",
          .min = 0,
          .min_exclusive = true,
          .max = 1};
}

CompressedExchange sparse_exchange(const BucketShape& b, const CompressionOptions& o,
                                   double select_flops) {
  const double k =
      static_cast<double>(sparse_count(o.number("ratio"), static_cast<size_t>(b.elements)));
  const bool feedback = o.number("error_feedback") != 0;
  CompressedExchange e;
  e.messages.push_back({select_flops + (feedback ? 2 * b.elements : 0), CollectiveOp::allgather,
                        b.workers * k * (b.value_bytes + kSparseIndexBytes)});
  e.flops_after = b.workers * k;
  return e;
}

std::unique_ptr<Compressor> make_compressor(const std::vector<TensorLayout>& layout, int workers,
                                            uint64_t seed, const CompressionOptions& o) {
  const CompressorKind* kind = find_compressor(o.type);
  if (kind == nullptr) throw std::out_of_range("no compressor " + o.type);
  return kind->make(layout, workers, seed, o);
}

size_t sparse_count(double ratio, size_t n) {
  const auto k = static_cast<size_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<size_t>(k, n == 0 ? 0 : 1, n);
}

SparseCompressor::SparseCompressor(std::vector<TensorLayout> layout, int workers, double ratio,
                                   bool error_feedback, Select select)
    : PerWorkerCompressor(workers, error_feedback),
      layout_(std::move(layout)),
      ratio_(ratio),
      select_(std::move(select)) {}

void SparseCompressor::encode(const std::vector<float>& acc, size_t worker,
                              std::vector<float>& sent) {
  for (size_t i = 0; i < layout_.size(); ++i) {
    const TensorLayout& t = layout_[i];
    const size_t size = t.size();
    picked_.clear();
    select_(acc.data() + t.offset, size, sparse_count(ratio_, size), static_cast<int>(worker),
            step(), i, picked_);
    for (size_t k : picked_) sent[t.offset + k] = acc[t.offset + k];
  }
}

}  // namespace sgdsim::learn
