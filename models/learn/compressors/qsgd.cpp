// qsgd: stochastic quantization of QSGD (Alistarh, Grubic, Li, Tomioka & Vojnovic, "QSGD:
// Communication-Efficient SGD via Gradient Quantization and Encoding", NeurIPS 2017, Section 3.1
// with the bucketing of its Section 4): every tensor of a worker's accumulated gradient (gradient,
// plus its residual with error feedback) is cut into buckets of `bucket_size` consecutive elements;
// an element v_i of a bucket v is sent as ||v||_2 sign(v_i) l_i / s, where l_i is floor(s |v_i| /
// ||v||) or that plus one with probability the fraction left (stochastic rounding, unbiased). The
// draws are seeded by the scenario's seed, the worker, the step and the tensor. The workers'
// quantized gradients are all-gathered (levels do not add in a few bits) and averaged. Timing: per
// bucket of the schedule (one tensor), each worker sends ceil(E b / 8) bytes, b = ceil(log2(s + 1))
// + 1 bits per element (level and sign: the paper's fixed-width encoding), plus one 32-bit float
// norm per quantization bucket; `quantize_flops_per_element` operations per element before it
// (default 11: the element-wise operations of GRACE's QSGD, sands-lab/grace,
// grace_dl/torch/compressor/qsgd.py: norm (square, add), abs, scale, floor, uniform draw, subtract,
// compare, add, sign, multiply), plus 2 with error feedback; decoding, 2 per element per worker
// (scale, add), with the step. Leaves out the paper's Elias coding of the levels (a data-dependent
// size), its max-norm variant, and a GPU's real cost of drawing random numbers. Error feedback
// (on by default, as for every compressor; the paper has none) contracts the residual only when
// E ||Q(v) - v||^2 < ||v||^2, which the paper's bound min(d / s^2, sqrt(d) / s) guarantees for
// s > sqrt(d): hence the default s = 127 (8 bits) for buckets of 512.
#include <algorithm>
#include <cmath>

#include "models/learn/compressor.hpp"
#include "sim/core/rng.hpp"

namespace sgdsim::learn {

namespace {

/// Bytes of one bucket's norm: the paper's encoding sends it as a 32-bit float.
constexpr double kNormBytes = 4;

class Qsgd final : public PerWorkerCompressor {
 public:
  Qsgd(std::vector<TensorLayout> layout, int workers, uint64_t seed, const CompressionOptions& o)
      : PerWorkerCompressor(workers, o.number("error_feedback") != 0),
        layout_(std::move(layout)),
        seed_(seed),
        levels_(o.number("levels")),
        bucket_(static_cast<size_t>(o.number("bucket_size"))) {}

 private:
  void encode(const std::vector<float>& acc, size_t w, std::vector<float>& sent) override {
    for (size_t t = 0; t < layout_.size(); ++t) quantize_tensor(acc, w, t, sent);
  }

  /// Quantizes tensor `t` of worker `w`'s accumulated gradient into `sent`, bucket by bucket.
  void quantize_tensor(const std::vector<float>& acc, size_t w, size_t t,
                       std::vector<float>& sent) const {
    // One stream per worker, step and tensor, so a draw does not depend on the others'.
    Rng rng(seed_ ^ (0x51534744ULL + static_cast<uint64_t>(step()) * 0x9E3779B97F4A7C15ULL),
            (static_cast<uint64_t>(w) << 20) + t);
    const size_t end = layout_[t].offset + layout_[t].size();
    for (size_t b = layout_[t].offset; b < end; b += bucket_)
      quantize_bucket(acc.data() + b, std::min(bucket_, end - b), sent.data() + b, rng);
  }

  /// Sends v[0..n) as ||v|| sign(v_i) l_i / s with l_i stochastically rounded (unbiased).
  void quantize_bucket(const float* v, size_t n, float* out, Rng& rng) const {
    double squares = 0;
    for (size_t k = 0; k < n; ++k) squares += static_cast<double>(v[k]) * v[k];
    const double norm = std::sqrt(squares);
    if (norm == 0) return;  // an all-zero bucket sends zeros (and draws nothing)
    for (size_t k = 0; k < n; ++k) {
      const double scaled = levels_ * std::fabs(static_cast<double>(v[k])) / norm;
      const double floor = std::floor(scaled);
      const double level = std::min(levels_, floor + (rng.uniform() < scaled - floor ? 1 : 0));
      const double magnitude = norm * level / levels_;
      out[k] = static_cast<float>(v[k] < 0 ? -magnitude : magnitude);
    }
  }

  std::vector<TensorLayout> layout_;
  uint64_t seed_;
  double levels_;
  size_t bucket_;
};

/// Bits of one element: the level 0..s (ceil(log2(s + 1)) bits) and the sign.
double bits_per_element(double levels) {
  double bits = 0;
  while (std::ldexp(1.0, static_cast<int>(bits)) < levels + 1) ++bits;
  return bits + 1;
}

CompressedExchange qsgd_plan(const BucketShape& b, const CompressionOptions& o) {
  const bool feedback = o.number("error_feedback") != 0;
  const double per_worker = std::ceil(b.elements * bits_per_element(o.number("levels")) / 8) +
                            std::ceil(b.elements / o.number("bucket_size")) * kNormBytes;
  CompressedExchange e;
  e.messages.push_back({(o.number("quantize_flops_per_element") + (feedback ? 2 : 0)) * b.elements,
                        CollectiveOp::allgather, b.workers * per_worker});
  e.flops_after = 2 * b.workers * b.elements;
  return e;
}

std::vector<Param> qsgd_params() {
  return {
      {.key = "levels",
       .type = ParamType::integer,
       .default_value = 127,
       .brief = "s: quantization levels of an element's magnitude over its bucket's norm "
                "(0, 1/s, ..., 1); ceil(log2(s + 1)) + 1 bits per element with the sign (127: "
                "8 bits; error feedback needs s > sqrt(bucket_size) to contract)",
       .min = 1,
       .max = 1 << 30},
      {.key = "bucket_size",
       .type = ParamType::integer,
       .default_value = 512,
       .brief = "elements per quantization bucket, each with its own norm (the paper's d; 512 as "
                "IST-DASLab's smart-quantizer)",
       .min = 1,
       .max = 1e12},
      error_feedback_param(),
      {.key = "quantize_flops_per_element",
       .type = ParamType::number,
       .default_value = 11,
       .brief = "operations per element of the quantization on the device (11: GRACE's QSGD, "
                "norm, abs, scale, floor, draw, compare, sign and the rest element-wise)",
       .min = 0,
       .max = 1e6}};
}

}  // namespace

const CompressorRegistration kQsgd{
    CompressorKind{.id = "qsgd",
                   .params = qsgd_params(),
                   .plan = qsgd_plan,
                   .make = [](const std::vector<TensorLayout>& layout, int workers, uint64_t seed,
                              const CompressionOptions& o) -> std::unique_ptr<Compressor> {
                     return std::make_unique<Qsgd>(layout, workers, seed, o);
                   }}};

}  // namespace sgdsim::learn
