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

class SignSgd final : public PerWorkerCompressor {
 public:
  SignSgd(std::vector<TensorLayout> layout, int workers, bool feedback)
      : PerWorkerCompressor(workers, feedback), layout_(std::move(layout)) {}

 private:
  void encode(const std::vector<float>& acc, size_t /*worker*/, std::vector<float>& sent) override {
    for (const TensorLayout& t : layout_) {
      double l1 = 0;
      for (size_t k = t.offset; k < t.offset + t.size(); ++k) l1 += std::fabs(acc[k]);
      const auto scale = static_cast<float>(l1 / static_cast<double>(t.size()));
      for (size_t k = t.offset; k < t.offset + t.size(); ++k) sent[k] = acc[k] < 0 ? -scale : scale;
    }
  }

  std::vector<TensorLayout> layout_;
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
