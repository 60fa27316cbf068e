// signsgd: scaled sign compression with error feedback (Karimireddy, Rebjock, Stich & Jaggi,
// "Error Feedback Fixes SignSGD and other Gradient Compression Schemes", ICML 2019, EF-SGD with
// C(p) = (|p|_1 / d) sign(p)): each worker sends of every tensor (d elements) of its accumulated
// gradient the signs (1 bit each) and one scale |p|_1 / d; the rest stays in its residual. The
// workers' compressed gradients are all-gathered (signs do not add in 1 bit) and averaged. A zero
// element is sent as +scale (a bit has no zero). Timing: per bucket (one tensor) an all-gather of
// ceil(E / 8) bytes of signs and one scale at the gradient precision per worker; 2 operations per
// element before it (|p|_1, sign), plus 2 with error feedback; the decoding of every worker's
// signs (P per element) with the step. Leaves out signSGD with majority vote (Bernstein et al.
// 2018: a 1-bit reduction back to the workers) and packing the scale per bucket.
#include <cmath>

#include "models/learn/compressor.hpp"

namespace sgdsim::learn {

namespace {

class SignSgd final : public Compressor {
 public:
  SignSgd(std::vector<TensorLayout> layout, int workers, bool feedback)
      : layout_(std::move(layout)),
        feedback_(feedback),
        residual_(static_cast<size_t>(workers)),
        sent_(static_cast<size_t>(workers)) {}

  void exchange(const std::vector<std::vector<float>>& grads,
                std::vector<float>& average) override {
    const size_t n = grads.front().size();
    for (size_t w = 0; w < grads.size(); ++w) {
      std::vector<float> acc = grads[w];
      if (feedback_) {
        if (residual_[w].empty()) residual_[w].assign(n, 0.0f);
        for (size_t k = 0; k < n; ++k) acc[k] += residual_[w][k];
      }
      sent_[w].assign(n, 0.0f);
      for (const TensorLayout& t : layout_) {
        double l1 = 0;
        for (size_t k = t.offset; k < t.offset + t.size(); ++k) l1 += std::fabs(acc[k]);
        const auto scale = static_cast<float>(l1 / static_cast<double>(t.size()));
        for (size_t k = t.offset; k < t.offset + t.size(); ++k)
          sent_[w][k] = acc[k] < 0 ? -scale : scale;
      }
      for (size_t k = 0; feedback_ && k < n; ++k) residual_[w][k] = acc[k] - sent_[w][k];
    }
    average.assign(n, 0.0f);
    for (const auto& s : sent_)
      for (size_t k = 0; k < n; ++k) average[k] += s[k] / static_cast<float>(sent_.size());
  }
  const std::vector<float>& residual(int worker) const override {
    return residual_.at(static_cast<size_t>(worker));
  }
  const std::vector<float>& transmitted(int worker) const override {
    return sent_.at(static_cast<size_t>(worker));
  }

 private:
  std::vector<TensorLayout> layout_;
  bool feedback_;
  std::vector<std::vector<float>> residual_, sent_;
};

CompressedExchange signsgd_plan(const BucketShape& b, const CompressionOptions& o) {
  const bool feedback = o.number("error_feedback") != 0;
  CompressedExchange e;
  e.messages.push_back({(feedback ? 4 : 2) * b.elements, CollectiveOp::allgather,
                        b.workers * (std::ceil(b.elements / 8) + b.value_bytes)});
  e.flops_after = b.workers * b.elements;
  return e;
}

}  // namespace

const CompressorRegistration kSignSgd{CompressorKind{
    .id = "signsgd",
    .params = {error_feedback_param()},
    .plan = signsgd_plan,
    .make = [](const std::vector<TensorLayout>& layout, int workers, uint64_t,
               const CompressionOptions& o) -> std::unique_ptr<Compressor> {
      return std::make_unique<SignSgd>(layout, workers, o.number("error_feedback") != 0);
    }}};

}  // namespace sgdsim::learn
