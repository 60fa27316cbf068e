// powersgd: PowerSGD (Vogels, Karimireddy & Jaggi, "PowerSGD: Practical Low-Rank Gradient
// Compression for Distributed Optimization", NeurIPS 2019, Algorithm 1 with error feedback):
// each worker's accumulated gradient (gradient + residual) of every weight matrix M (n x m; a
// conv layer's out x k*k*in) is compressed to rank r by one step of subspace iteration: P_i =
// M_i Q, P = mean P_i (allreduce of n x r), P orthonormalised (Gram-Schmidt), Q_i = M_i^T P,
// Q = mean Q_i (allreduce of m x r); every worker applies P Q^T, and its residual becomes M_i -
// P Q^T. Q starts from a seeded standard normal draw and is reused from the step before (warm
// start). Vectors (biases) are averaged uncompressed, as in the paper. Timing: per bucket two
// allreduces, r x the rows and r x the columns of its layers at the gradient precision (the
// uncompressed vectors are not told apart in a model profile: every layer is taken as a square
// matrix of side sqrt(its parameters), rank min(r, side)); device operations 2 r E for P_i =
// M_i Q before the first (plus E to accumulate with error feedback), 2 r E for Q_i = M_i^T P and
// 4 n r^2 for the orthogonalisation (two Gram-Schmidt passes) between them, and 2 r E to decompress
// after the second (plus E for the residual). Leaves out the paper's packing of all layers into one
// flat allreduce per phase (here per bucket), its rank-1 special case and query reuse across
// layers, and the compute's real GPU efficiency (a small matrix product runs far below peak).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "models/learn/compressor.hpp"
#include "models/learn/eigen_util.hpp"
#include "sim/core/rng.hpp"

namespace sgdsim::learn {

namespace {

using RowMap = Eigen::Map<RowMatrixF>;

/// Orthonormalises the columns of `p` in place (modified Gram-Schmidt, each projection done
/// twice: in single precision one pass loses orthogonality as P's condition number grows; a
/// zero column stays 0).
void orthonormalise(MatrixF& p) {
  for (Eigen::Index j = 0; j < p.cols(); ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (Eigen::Index i = 0; i < j; ++i) p.col(j) -= p.col(i).dot(p.col(j)) * p.col(i);
    const float norm = p.col(j).norm();
    if (norm > 1e-30f) p.col(j) /= norm;
  }
}

class PowerSgd final : public Compressor {
 public:
  PowerSgd(std::vector<TensorLayout> layout, int workers, int rank, bool feedback, uint64_t seed)
      : layout_(std::move(layout)),
        feedback_(feedback),
        residual_(static_cast<size_t>(workers)),
        sent_(static_cast<size_t>(workers)) {
    Rng rng(seed, 0x504F574552ULL);
    for (const TensorLayout& t : layout_) {
      if (t.rows <= 1) {
        q_.emplace_back();
        continue;
      }
      const auto r =
          static_cast<Eigen::Index>(std::min({static_cast<size_t>(rank), t.rows, t.cols}));
      MatrixF q(static_cast<Eigen::Index>(t.cols), r);
      for (Eigen::Index j = 0; j < r; ++j)
        for (Eigen::Index i = 0; i < q.rows(); ++i) q(i, j) = static_cast<float>(rng.normal());
      q_.push_back(std::move(q));
    }
  }

  void exchange(const std::vector<std::vector<float>>& grads,
                std::vector<float>& average) override {
    const size_t n = grads.front().size(), p = grads.size();
    std::vector<std::vector<float>> acc = grads;
    for (size_t w = 0; feedback_ && w < p; ++w) {
      if (residual_[w].empty()) residual_[w].assign(n, 0.0f);
      for (size_t k = 0; k < n; ++k) acc[w][k] += residual_[w][k];
    }
    average.assign(n, 0.0f);
    for (size_t t = 0; t < layout_.size(); ++t) {
      const TensorLayout& L = layout_[t];
      if (L.rows <= 1) {  // a vector: averaged whole, as sync does
        for (const auto& a : acc)
          for (size_t k = L.offset; k < L.offset + L.size(); ++k)
            average[k] += a[k] / static_cast<float>(p);
        continue;
      }
      approximate(acc, t, average);
    }
    // A worker sends a vector whole (nothing left over); of a matrix it keeps what the applied
    // P Q^T misses of its own accumulated gradient, as the paper's reference code does.
    for (size_t w = 0; w < p; ++w) {
      sent_[w] = average;
      for (const TensorLayout& L : layout_)
        if (L.rows <= 1)
          std::copy(acc[w].begin() + L.offset, acc[w].begin() + L.offset + L.size(),
                    sent_[w].begin() + L.offset);
      for (size_t k = 0; feedback_ && k < n; ++k) residual_[w][k] = acc[w][k] - sent_[w][k];
    }
  }

  const std::vector<float>& residual(int worker) const override {
    return residual_.at(static_cast<size_t>(worker));
  }
  /// A matrix's applied P Q^T and the worker's own vectors.
  const std::vector<float>& transmitted(int worker) const override {
    return sent_.at(static_cast<size_t>(worker));
  }

 private:
  /// P Q^T of tensor t from every worker's accumulated gradient, into `average`.
  void approximate(std::vector<std::vector<float>>& acc, size_t t, std::vector<float>& average) {
    const TensorLayout& L = layout_[t];
    const auto rows = static_cast<Eigen::Index>(L.rows), cols = static_cast<Eigen::Index>(L.cols);
    const auto workers = static_cast<float>(acc.size());
    MatrixF& q = q_[t];
    MatrixF pm = MatrixF::Zero(rows, q.cols());
    for (auto& a : acc) pm += RowMap(a.data() + L.offset, rows, cols) * q / workers;
    orthonormalise(pm);
    MatrixF qm = MatrixF::Zero(cols, q.cols());
    for (auto& a : acc) qm += RowMap(a.data() + L.offset, rows, cols).transpose() * pm / workers;
    q = qm;  // warm start of the next step
    RowMap(average.data() + L.offset, rows, cols) = pm * qm.transpose();
  }

  std::vector<TensorLayout> layout_;
  bool feedback_;
  std::vector<MatrixF> q_;
  std::vector<std::vector<float>> residual_, sent_;
};

Param rank_param() {
  return {.key = "rank",
          .type = ParamType::integer,
          .default_value = 2,
          .brief = "rank r of each weight matrix's approximation (the paper's 1 to 4)",
          .min = 1,
          .max = 1 << 16};
}

CompressedExchange powersgd_plan(const BucketShape& b, const CompressionOptions& o) {
  const double r = o.number("rank");
  const bool feedback = o.number("error_feedback") != 0;
  double sides = 0, orth = 0, low_rank = 0;  // sums of r n, 4 n r^2, r E over the layers
  for (double e : b.tensors) {
    const double side = std::sqrt(e), rr = std::min(r, std::floor(side));
    sides += rr * side;
    orth += 4 * side * rr * rr;  // two Gram-Schmidt passes of about 2 n r^2 each
    low_rank += rr * e;
  }
  CompressedExchange x;
  x.messages.push_back(
      {2 * low_rank + (feedback ? b.elements : 0), CollectiveOp::allreduce, sides * b.value_bytes});
  x.messages.push_back({orth + 2 * low_rank, CollectiveOp::allreduce, sides * b.value_bytes});
  x.flops_after = 2 * low_rank + (feedback ? b.elements : 0);
  return x;
}

}  // namespace

const CompressorRegistration kPowerSgd{CompressorKind{
    .id = "powersgd",
    .params = {rank_param(), error_feedback_param()},
    .plan = powersgd_plan,
    .make = [](const std::vector<TensorLayout>& layout, int workers, uint64_t seed,
               const CompressionOptions& o) -> std::unique_ptr<Compressor> {
      return std::make_unique<PowerSgd>(layout, workers, static_cast<int>(o.number("rank")),
                                        o.number("error_feedback") != 0, seed);
    }}};

}  // namespace sgdsim::learn
