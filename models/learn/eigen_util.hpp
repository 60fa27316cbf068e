#pragma once
/// Eigen helpers shared by the networks of models/learn (private to the library): matrix
/// types, batch gathering, the softmax cross-entropy head and a stack of dense layers.
#include <Eigen/Dense>
#include <cmath>
#include <span>
#include <vector>

#include "models/learn/learn.hpp"

namespace sgdsim::learn {

/// Column-major float matrix; activations are features x samples.
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
/// Read-only view of a float vector.
using CMapVec = Eigen::Map<const Eigen::VectorXf>;
/// Writable view of a float vector.
using MapVec = Eigen::Map<Eigen::VectorXf>;
/// Row-major float matrix: layer weights (out x in) in the flat parameter vector.
using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// Writable row-major view into the flat parameter vector.
using MapRows = Eigen::Map<RowMatrixF>;
/// Read-only row-major view into the flat parameter vector.
using CMapRows = Eigen::Map<const RowMatrixF>;

/// The samples `batch` of `d` as columns (dim x batch).
MatrixF gather(const Dataset& d, std::span<const int> batch);

/// Mean cross-entropy of `logits` (classes x batch) against the labels of `batch` in `d`;
/// `delta` receives its gradient with respect to the logits.
double softmax_cross_entropy(const MatrixF& logits, const Dataset& d, std::span<const int> batch,
                             MatrixF& delta);

/// Adds the summed cross-entropy and the number of correct argmax predictions of `logits`
/// for samples first, first + 1, ... of `d` to `sum`.
void add_evaluation(const MatrixF& logits, const Dataset& d, int first, Evaluation& sum);

/// Fully connected ReLU layers (no ReLU after the last) stored from `offset` in a flat
/// parameter vector: per layer, weights (out x in, row-major) then biases.
struct DenseStack {
  std::vector<int> sizes;       ///< input width, hidden widths..., output width
  std::vector<size_t> offsets;  ///< start of each layer's weights in the flat vector

  /// Lays the layers out from `offset`; returns the offset after the last one.
  size_t layout(std::vector<int> widths, size_t offset);
  /// Number of layers.
  size_t layers() const { return sizes.size() - 1; }
  /// Weights of layer l (without biases).
  size_t weight_count(size_t l) const { return size_t(sizes[l + 1]) * sizes[l]; }
  /// Appends each layer's weight matrix (out x in) and bias vector to `out`.
  void append_tensors(std::vector<TensorLayout>& out) const {
    for (size_t l = 0; l < layers(); ++l) {
      out.push_back({offsets[l], size_t(sizes[l + 1]), size_t(sizes[l])});
      out.push_back({offsets[l] + weight_count(l), 1, size_t(sizes[l + 1])});
    }
  }
  /// He initialisation of the weights (biases stay 0) with `normal()` draws.
  template <typename Draw>
  void init(std::vector<float>& p, Draw normal) const {
    for (size_t l = 0; l < layers(); ++l) {
      const double scale = std::sqrt(2.0 / sizes[l]);
      for (size_t k = 0; k < weight_count(l); ++k)
        p[offsets[l] + k] = static_cast<float>(normal() * scale);
    }
  }
  /// Forward pass of input columns `x`; `acts` receives the input and every layer's output.
  void forward(const std::vector<float>& p, MatrixF x, std::vector<MatrixF>& acts) const;
  /// Backward pass from `delta` (gradient at the last layer's output); writes the weight and
  /// bias gradients into `grad` and returns the gradient at the stack's input (empty unless
  /// `input_grad`: a network's first layer does not need it).
  MatrixF backward(const std::vector<float>& p, const std::vector<MatrixF>& acts, MatrixF delta,
                   std::vector<float>& grad, bool input_grad) const;
};

}  // namespace sgdsim::learn
