#pragma once
/// Real math on small models (softmax regression, MLP) over real or synthetic data. Eigen is
/// used only inside this library's .cpp files; the interface is plain vectors.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sgdsim::learn {

/// A labelled dataset; sample i is x[i * dim, (i + 1) * dim).
struct Dataset {
  int dim = 0;           ///< features per sample
  int classes = 0;       ///< number of labels
  std::vector<float> x;  ///< features, sample-major
  std::vector<int> y;    ///< labels in [0, classes)
  /// Number of samples.
  int size() const { return static_cast<int>(y.size()); }
};

/// Reads a gzipped IDX image file and its label file (Fashion-MNIST); pixels scaled to [0, 1].
/// Throws InputError naming the file if it is missing or malformed.
Dataset read_idx(const std::string& images_gz, const std::string& labels_gz);
/// Fashion-MNIST from Debian's dataset-fashion-mnist (`train` or `test`); a missing file is an
/// InputError that names the package.
Dataset fashion_mnist(const std::string& split,
                      const std::string& dir = "/usr/share/datasets/fashion-mnist");
/// A seeded Gaussian mixture: `classes` clusters in `dim` dimensions, `n` samples.
Dataset gaussian_mixture(int n, int dim, int classes, uint64_t seed, double spread = 1.0);

/// Loss and accuracy of a model on a dataset.
struct Evaluation {
  double loss = 0;      ///< mean cross-entropy
  double accuracy = 0;  ///< fraction of correct argmax predictions
};

/// A fully connected ReLU network with a softmax cross-entropy head (no hidden layer:
/// softmax regression). Parameters live in one flat vector: layer by layer, weights
/// (row-major, out x in) then biases.
class Mlp {
 public:
  /// He-initialised network input -> hidden... -> classes, seeded.
  Mlp(int input_dim, std::vector<int> hidden, int classes, uint64_t seed);
  ~Mlp();
  Mlp(const Mlp&);
  Mlp& operator=(const Mlp&);
  /// Number of trainable parameters.
  size_t num_parameters() const;
  /// The flat parameter vector.
  std::vector<float>& parameters();
  /// The flat parameter vector (read only).
  const std::vector<float>& parameters() const;
  /// Mean cross-entropy over the samples `batch` of `data` at parameters `params`, and its
  /// gradient (same layout as the parameters) written to `grad`.
  double gradient(const std::vector<float>& params, const Dataset& data, std::span<const int> batch,
                  std::vector<float>& grad) const;
  /// Loss and accuracy at the current parameters over the whole dataset.
  Evaluation evaluate(const Dataset& data) const;
  /// Parameters per layer (weights + biases), input side first.
  std::vector<size_t> layer_parameters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// SGD with momentum and decoupled-from-nothing L2 weight decay: v = m v + g + wd w; w -= lr v.
class Sgd {
 public:
  /// An optimizer for `n` parameters.
  Sgd(size_t n, double momentum, double weight_decay);
  /// One step with learning rate `lr` along `grad`.
  void step(std::vector<float>& params, const std::vector<float>& grad, double lr);

 private:
  double momentum_, weight_decay_;
  std::vector<float> velocity_;
};

/// Predicts the gradient to apply now from the last globally averaged gradient (pseudo-sync).
class Predictor {
 public:
  virtual ~Predictor() = default;
  /// Feeds the newest averaged gradient `g` (of the previous step) and writes the prediction.
  /// `params` and `params_at_g` (the parameters `g` was computed at) serve delay compensation.
  virtual void predict(const std::vector<float>& g, const std::vector<float>& params,
                       const std::vector<float>& params_at_g, std::vector<float>& out) = 0;
  /// Weight prediction: workers compute their next gradient at params - c lr velocity, the
  /// point the delayed step will be applied near; c = 0 computes at the current parameters.
  virtual double lookahead() const { return 0; }
};

/// none | ema | arrses | arrses_level | holt | dc; `beta` is the smoothing constant where one
/// applies; `learning_rate` bounds arrses' curvature estimate (1 / lr).
std::unique_ptr<Predictor> make_predictor(const std::string& name, size_t n, double beta = 0.2,
                                          double learning_rate = 0.05);

}  // namespace sgdsim::learn

namespace sgdsim::learn {

/// Throughput of the MLP's gradient step and of plain Eigen GEMMs of the same shapes.
struct StepBenchmark {
  double step_gflops = 0;  ///< forward + backward of Mlp::gradient
  double gemm_gflops = 0;  ///< the same matrix products, nothing else
};

/// Measures both on random data for `repeats` steps (for `make bench`).
StepBenchmark benchmark_step(int input_dim, const std::vector<int>& hidden, int classes, int batch,
                             int repeats);

}  // namespace sgdsim::learn
