// randk: random-k sparsification with error feedback (Stich, Cordonnier & Jaggi, "Sparsified
// SGD with Memory", NeurIPS 2018, rand_k): each worker keeps k = ceil(ratio n) elements of each
// tensor of its accumulated gradient chosen uniformly without replacement (seeded by the
// scenario's seed, the worker, the step and the tensor, so every run draws the same), unscaled
// as in the paper; the rest stays in its residual. The workers' sparse gradients are all-gathered
// (k values and k 4-byte indices each: workers draw independently, so the indices travel) and
// averaged. Timing: per bucket k = ceil(ratio x its elements), one operation per kept element to
// draw it, and the scatter-add of every worker's k values after the all-gather. Leaves out the
// shared-seed variant (every worker the same indices: an allreduce of k values, no indices) and
// the unbiased n/k scaling used without memory.
#include <numeric>

#include "models/learn/compressor.hpp"
#include "sim/core/rng.hpp"

namespace sgdsim::learn {

namespace {

/// k distinct indices drawn uniformly (a partial Fisher-Yates shuffle), in drawing order.
std::vector<size_t> draw(size_t n, size_t k, Rng& rng) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  for (size_t i = 0; i < k && i + 1 < n; ++i) std::swap(idx[i], idx[i + rng.next_u64() % (n - i)]);
  idx.resize(k);
  return idx;
}

std::unique_ptr<Compressor> make_randk(const std::vector<TensorLayout>& layout, int workers,
                                       uint64_t seed, const CompressionOptions& o) {
  auto select = [seed](const float*, size_t n, size_t k, int worker, int step, size_t tensor,
                       std::vector<size_t>& out) {
    if (k >= n) {
      out.resize(n);
      std::iota(out.begin(), out.end(), size_t{0});
      return;
    }
    // One stream per worker, step and tensor, so a draw does not depend on the others'.
    Rng rng(seed ^ (0x52414E444BULL + static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ULL),
            (static_cast<uint64_t>(worker) << 20) + tensor);
    out = draw(n, k, rng);
  };
  return std::make_unique<SparseCompressor>(layout, workers, o.number("ratio"),
                                            o.number("error_feedback") != 0, select);
}

}  // namespace

const CompressorRegistration kRandk{CompressorKind{
    .id = "randk",
    .params = {sparse_ratio_param(), error_feedback_param()},
    .plan =
        [](const BucketShape& b, const CompressionOptions& o) {
          return sparse_exchange(b, o,
                                 static_cast<double>(sparse_count(
                                     o.number("ratio"), static_cast<size_t>(b.elements))));
        },
    .make = make_randk}};

}  // namespace sgdsim::learn
