#pragma once
/// Helpers shared by the tests of models/learn.
#include <cmath>
#include <numeric>
#include <vector>

#include "models/learn/learn.hpp"

namespace sgdsim::learn::test_util {

/// The indices lo, lo + 1, ..., hi - 1.
inline std::vector<int> range(int lo, int hi) {
  std::vector<int> v(static_cast<size_t>(hi - lo));
  std::iota(v.begin(), v.end(), lo);
  return v;
}

/// Parameters after training `start` for `steps` steps two ways on the same samples of `d`:
/// one process with batch n*b, and n workers of batch b whose gradients are averaged.
struct SyncEquivalence {
  double relative_gap = 0;    ///< |single - multi| / |single|
  double single_norm_sq = 0;  ///< |single|^2
};

/// Runs both (SGD, momentum 0.9, weight decay 1e-4, lr 0.05) and compares them.
inline SyncEquivalence sync_equivalence(const Model& start, const Dataset& d, int n, int b,
                                        int steps) {
  std::unique_ptr<Model> single = start.clone(), multi = start.clone();
  Sgd opt_single(single->num_parameters(), 0.9, 1e-4),
      opt_multi(multi->num_parameters(), 0.9, 1e-4);
  std::vector<float> g, sum, part;
  for (int s = 0; s < steps; ++s) {
    const int base = s * n * b;
    single->gradient(single->parameters(), d, range(base, base + n * b), g);
    opt_single.step(single->parameters(), g, 0.05);
    sum.assign(multi->num_parameters(), 0.0f);
    for (int w = 0; w < n; ++w) {
      multi->gradient(multi->parameters(), d, range(base + w * b, base + (w + 1) * b), part);
      for (size_t k = 0; k < sum.size(); ++k) sum[k] += part[k] / static_cast<float>(n);
    }
    opt_multi.step(multi->parameters(), sum, 0.05);
  }
  double diff = 0, norm = 0;
  for (size_t k = 0; k < single->parameters().size(); ++k) {
    diff += std::pow(single->parameters()[k] - multi->parameters()[k], 2);
    norm += std::pow(single->parameters()[k], 2);
  }
  return {std::sqrt(diff / norm), norm};
}

}  // namespace sgdsim::learn::test_util
