// topk: top-k sparsification (Aji & Heafield, "Sparse Communication for Distributed Gradient
// Descent", EMNLP 2017; Lin et al., "Deep Gradient Compression", ICLR 2018, which also selects
// per layer) with error feedback (Stich, Cordonnier & Jaggi, "Sparsified SGD with Memory",
// NeurIPS 2018): each worker keeps the k = ceil(ratio n) elements of largest magnitude of each
// tensor of its accumulated gradient (gradient + residual), the rest stays in its residual;
// the workers' sparse gradients are all-gathered (k values and k 4-byte indices each) and
// averaged. Ties are broken by the lower index, so the choice is the same on every machine.
// Timing: per bucket k = ceil(ratio x its elements) (the math rounds per tensor), a selection
// cost of `select_flops_per_element` operations per element at the device's FLOP rate (default
// 16: PyTorch's radix selection, aten/src/ATen/native/cuda/SortingRadixSelect.cuh, makes one
// counting pass per 2-bit digit, RADIX_BITS = 2, so 16 passes over a 32-bit key), and the
// scatter-add of every worker's k values after the all-gather. Leaves out DGC's momentum
// correction, local gradient clipping, warm-up of the ratio and its sampled threshold, and the
// memory traffic of the selection (a GPU's top-k is memory-bound: the FLOP-rate cost is a floor).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/learn/compressor.hpp"

namespace sgdsim::learn {

namespace {

/// The k indices of largest |acc[i]|, ties to the lower index.
void largest(const float* acc, size_t n, size_t k, int, int, size_t, std::vector<size_t>& out) {
  out.resize(n);
  std::iota(out.begin(), out.end(), size_t{0});
  if (k >= n) return;
  auto before = [acc](size_t a, size_t b) {
    const float x = std::fabs(acc[a]), y = std::fabs(acc[b]);
    return x > y || (x == y && a < b);
  };
  std::nth_element(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), out.end(), before);
  out.resize(k);
}

Param select_flops_param() {
  return {.key = "select_flops_per_element",
          .type = ParamType::number,
          .default_value = 16,
          .brief =
              "operations per element of the top-k selection on the device (16: "
              "PyTorch's radix select, one pass per 2-bit digit of a 32-bit key)",
          .min = 0,
          .max = 1e6};
}

}  // namespace

const CompressorRegistration kTopk{CompressorKind{
    .id = "topk",
    .params = {sparse_ratio_param(), error_feedback_param(), select_flops_param()},
    .plan =
        [](const BucketShape& b, const CompressionOptions& o) {
          return sparse_exchange(b, o, o.number("select_flops_per_element") * b.elements);
        },
    .make = [](const std::vector<TensorLayout>& layout, int workers, uint64_t,
               const CompressionOptions& o) -> std::unique_ptr<Compressor> {
      return std::make_unique<SparseCompressor>(layout, workers, o.number("ratio"),
                                                o.number("error_feedback") != 0, largest);
    }}};

}  // namespace sgdsim::learn
