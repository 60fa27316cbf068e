#pragma once
/// Real math on small models (softmax regression, MLP) over real or synthetic data. Eigen is
/// used only inside this library's .cpp files; the interface is plain vectors.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/learn/compressor.hpp"
#include "models/learn/predictor.hpp"

namespace sgdsim::learn {

/// Cache sizes (bytes) that Eigen's matrix products choose their blocking from.
struct CacheSizes {
  long l1_bytes = 0;  ///< level 1 data cache
  long l2_bytes = 0;  ///< level 2
  long l3_bytes = 0;  ///< level 3 (last level)
};

/// The sizes every run uses, whatever the CPU: Eigen 3.4's own x86 fallbacks (32 KiB, 256 KiB,
/// 2 MiB; GeneralBlockPanelKernel.h). Eigen would otherwise query the CPU at run time, and the
/// blocking, hence the summation order of long reductions (the CNN's weight gradient), and the
/// trained numbers would change from one CPU to the next.
inline constexpr CacheSizes kPinnedCacheSizes{32L * 1024, 256L * 1024, 2L * 1024 * 1024};

/// Sets Eigen to kPinnedCacheSizes; every model constructor calls it before any math.
void pin_cache_sizes();

/// The sizes Eigen blocks for now.
CacheSizes eigen_cache_sizes();

/// Sets Eigen's sizes as if another CPU had been detected (tests). At start-up the library
/// applies SGDSIM_SIMULATE_CPU_CACHES="L1,L2,L3" (bytes) this way, so that a test can run the
/// binary "on" a CPU with other caches and check that nothing changes.
void simulate_detected_cache_sizes(const CacheSizes& sizes);

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
/// A seeded Gaussian mixture: `classes` clusters (centers drawn with std 2) in `dim` dimensions,
/// `n` samples with within-class std `spread`; a fraction `label_noise` of the labels is then
/// redrawn uniformly (difficulty knobs: overlap grows with spread, dimension separates centers).
Dataset gaussian_mixture(int n, int dim, int classes, uint64_t seed, double spread = 1.0,
                         double label_noise = 0.0);

/// Loss and accuracy of a model on a dataset.
struct Evaluation {
  double loss = 0;      ///< mean cross-entropy
  double accuracy = 0;  ///< fraction of correct argmax predictions
};

/// A classifier whose parameters live in one flat vector: what training needs of a network.
class Model {
 public:
  virtual ~Model() = default;
  /// A deep copy (parameters included).
  virtual std::unique_ptr<Model> clone() const = 0;
  /// The flat parameter vector.
  virtual std::vector<float>& parameters() = 0;
  /// The flat parameter vector (read only).
  virtual const std::vector<float>& parameters() const = 0;
  /// Number of trainable parameters.
  size_t num_parameters() const { return parameters().size(); }
  /// Mean cross-entropy over the samples `batch` of `data` at parameters `params`, and its
  /// gradient (same layout as the parameters) written to `grad`.
  virtual double gradient(const std::vector<float>& params, const Dataset& data,
                          std::span<const int> batch, std::vector<float>& grad) const = 0;
  /// Loss and accuracy at the current parameters over the whole dataset.
  virtual Evaluation evaluate(const Dataset& data) const = 0;
  /// Parameters per layer (weights + biases), input side first.
  virtual std::vector<size_t> layer_parameters() const = 0;
  /// Each layer's weight matrix (out x in; a conv layer's out x k*k*in) and bias vector, in the
  /// flat vector's order (what a compressor works on).
  virtual std::vector<TensorLayout> tensors() const = 0;
};

/// A fully connected ReLU network with a softmax cross-entropy head (no hidden layer:
/// softmax regression). Parameters live in one flat vector: layer by layer, weights
/// (row-major, out x in) then biases.
class Mlp final : public Model {
 public:
  /// He-initialised network input -> hidden... -> classes, seeded.
  Mlp(int input_dim, std::vector<int> hidden, int classes, uint64_t seed);
  ~Mlp() override;
  /// A deep copy.
  Mlp(const Mlp&);
  /// Copies the other network's shape and parameters.
  Mlp& operator=(const Mlp&);
  std::unique_ptr<Model> clone() const override;
  std::vector<float>& parameters() override;
  const std::vector<float>& parameters() const override;
  double gradient(const std::vector<float>& params, const Dataset& data, std::span<const int> batch,
                  std::vector<float>& grad) const override;
  Evaluation evaluate(const Dataset& data) const override;
  std::vector<size_t> layer_parameters() const override;
  std::vector<TensorLayout> tensors() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Shape of a small convolutional network for single-image inputs.
struct CnnShape {
  int height = 28;                   ///< input image rows
  int width = 28;                    ///< input image columns
  int in_channels = 1;               ///< input image channels
  std::vector<int> channels{8, 16};  ///< output channels of each conv layer
  int kernel = 5;                    ///< square kernel side of every conv layer
  std::vector<int> hidden{64};       ///< dense hidden widths after the conv layers
  int classes = 10;                  ///< output classes
};

/// A LeNet-style network: per conv layer a valid k x k convolution (stride 1), ReLU and 2 x 2
/// max-pooling (stride 2, odd edges dropped); then ReLU dense layers and a softmax
/// cross-entropy head. Leaves out padding, strides, batch normalisation and dropout.
/// Parameters: conv layers (weights out x k*k*in row-major: a row holds the kernel row by row,
/// the input channels of one tap together; then biases), then dense layers as in Mlp. Pixels
/// are channel-major in a sample (c, row, column).
class Cnn final : public Model {
 public:
  /// He-initialised network of that shape, seeded; throws std::invalid_argument when a conv
  /// layer's input is smaller than the kernel.
  Cnn(const CnnShape& shape, uint64_t seed);
  ~Cnn() override;
  /// A deep copy.
  Cnn(const Cnn&);
  std::unique_ptr<Model> clone() const override;
  std::vector<float>& parameters() override;
  const std::vector<float>& parameters() const override;
  double gradient(const std::vector<float>& params, const Dataset& data, std::span<const int> batch,
                  std::vector<float>& grad) const override;
  Evaluation evaluate(const Dataset& data) const override;
  std::vector<size_t> layer_parameters() const override;
  std::vector<TensorLayout> tensors() const override;

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
  /// The momentum buffer after the last step.
  const std::vector<float>& velocity() const { return velocity_; }
  /// Zeroes the momentum buffer (a momentum restart).
  void reset_velocity() { std::fill(velocity_.begin(), velocity_.end(), 0.0f); }

 private:
  double momentum_, weight_decay_;
  std::vector<float> velocity_;
};

/// AdamW's hyper-parameters (Loshchilov & Hutter, "Decoupled Weight Decay Regularization",
/// ICLR 2019), as torch.optim.AdamW names them.
struct AdamWOptions {
  double beta1 = 0.9;         ///< decay of the first moment
  double beta2 = 0.999;       ///< decay of the second moment
  double eps = 1e-8;          ///< added to the second moment's square root
  double weight_decay = 0.0;  ///< decoupled: w -= lr wd w before the Adam step
};

/// AdamW as torch.optim.AdamW (no amsgrad) steps it: w -= lr wd w; m = b1 m + (1 - b1) g;
/// v = b2 v + (1 - b2) g^2; w -= lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps).
class AdamW {
 public:
  /// An optimizer for `n` parameters.
  AdamW(size_t n, AdamWOptions options);
  /// One step with learning rate `lr` along `grad`.
  void step(std::vector<float>& params, const std::vector<float>& grad, double lr);
  /// The first moment after the last step.
  const std::vector<float>& first_moment() const { return m_; }
  /// The second moment after the last step.
  const std::vector<float>& second_moment() const { return v_; }

 private:
  AdamWOptions o_;
  std::vector<float> m_, v_;
  double beta1_power_ = 1, beta2_power_ = 1;  // b^t, by products (no pow: the same bits anywhere)
};

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

/// The same for the CNN: its gradient step against the GEMMs of its conv (im2col) and dense
/// layers alone; the difference is im2col, pooling, ReLU and the layout changes.
StepBenchmark benchmark_cnn_step(const CnnShape& shape, int batch, int repeats);

}  // namespace sgdsim::learn
