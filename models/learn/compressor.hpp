#pragma once
/// Gradient compressors of the synchronous schemes (`scheme.compression`): the interface the
/// trainer drives, the messages and compute a compressed exchange costs, and the registry
/// every compressor joins with one line in its own file (models/learn/compressors/NAME.cpp),
/// its options declared there as Params (keys of the `scheme.compression` object). No Eigen
/// here.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/collective_op.hpp"
#include "sim/core/param.hpp"

namespace sgdsim::learn {

/// The values of a compressor's declared options (a key without a value: its default).
struct CompressionOptions {
  std::string type{};    ///< a registered compressor
  ParamValues values{};  ///< declared options by key
  /// The number of option `key` (its declared default if not set; 0 for a word).
  double number(const std::string& key) const;
};

/// What the math knows of the proxy model's parameters: tensors in the flat vector's order.
struct TensorLayout {
  size_t offset = 0;  ///< first element in the flat vector
  size_t rows = 1;    ///< a weight matrix's rows (output units); 1 for a vector
  size_t cols = 1;    ///< its columns; a vector (bias) has rows 1 and cols = its length
  /// Number of elements.
  size_t size() const { return rows * cols; }
};

/// A compressed exchange of every worker's gradient: each worker compresses its own (plus its
/// error-feedback residual when on), the workers' compressed parts are averaged, and every
/// replica applies that average (the same on every worker, as sync's averaged gradient).
class Compressor {
 public:
  virtual ~Compressor() = default;
  /// The average of the workers' decompressed compressed gradients of one step (`grads`: one
  /// per worker, in worker order) written to `average`; updates each worker's residual.
  virtual void exchange(const std::vector<std::vector<float>>& grads,
                        std::vector<float>& average) = 0;
  /// Worker `worker`'s error-feedback residual after the last exchange (empty when off).
  virtual const std::vector<float>& residual(int worker) const = 0;
  /// What worker `worker` transmitted in the last exchange, decompressed (its contribution).
  virtual const std::vector<float>& transmitted(int worker) const = 0;
};

/// A compressor whose workers encode on their own: each encodes its gradient plus its residual
/// (with error feedback), keeps what it did not send, and the sent gradients are averaged in
/// sync's summation order.
class PerWorkerCompressor : public Compressor {
 public:
  /// `workers` replicas; `feedback`: error feedback on.
  PerWorkerCompressor(int workers, bool feedback);
  /// Encodes every worker's gradient, updates the residuals, averages what was sent.
  void exchange(const std::vector<std::vector<float>>& grads, std::vector<float>& average) final;
  /// Worker `worker`'s residual after the last exchange (empty when off).
  const std::vector<float>& residual(int worker) const final;
  /// What worker `worker` sent in the last exchange, decompressed.
  const std::vector<float>& transmitted(int worker) const final;

 protected:
  /// Writes to `sent` (zeroed, the size of `acc`) what worker `worker` sends for `acc`.
  virtual void encode(const std::vector<float>& acc, size_t worker, std::vector<float>& sent) = 0;
  /// Exchanges done before the current one (a stream index for stochastic encoders).
  int step() const { return step_; }

 private:
  bool feedback_;
  std::vector<std::vector<float>> residual_, sent_;
  int step_ = 0;
};

/// One collective of a compressed exchange of one bucket, and the compute before it.
struct CompressedMessage {
  double flops_before = 0;  ///< each worker's compute before the message starts (operations)
  CollectiveOp op = CollectiveOp::allreduce;  ///< what the collective computes
  double bytes = 0;  ///< its size as CollectiveOp counts it (all-gather: every rank's part)
};

/// The messages of one bucket's compressed exchange, in order, and the compute after the last.
struct CompressedExchange {
  std::vector<CompressedMessage> messages{};  ///< one after the other
  double flops_after = 0;  ///< each worker's decompression after the last message (operations)
};

/// What the timing of one bucket needs: its elements and the run's workers and precision.
struct BucketShape {
  double elements = 0;            ///< gradient elements in the bucket
  int workers = 1;                ///< ranks exchanging it
  double value_bytes = 4;         ///< bytes of one transmitted value (the gradient precision)
  std::vector<double> tensors{};  ///< elements of each layer in the bucket (its parameters)
};

/// A registered compressor: its name, declared options, timing and math.
struct CompressorKind {
  std::string id;               ///< scheme.compression.type
  std::vector<Param> params{};  ///< its options: keys of the scheme.compression object
  /// The exchange of one bucket (messages and compute) under options `o`.
  std::function<CompressedExchange(const BucketShape& b, const CompressionOptions& o)> plan{};
  /// Builds the math for `workers` workers over tensors `layout`; `seed` seeds any randomness.
  std::function<std::unique_ptr<Compressor>(const std::vector<TensorLayout>& layout, int workers,
                                            uint64_t seed, const CompressionOptions& o)>
      make{};
  /// The registry's key.
  const std::string& name() const { return id; }
};

/// Adds a compressor to the registry during static initialization (one line next to its
/// definition); a name registered twice, or an option key declared twice with another
/// declaration, throws.
class CompressorRegistration {
 public:
  /// Registers `kind`.
  explicit CompressorRegistration(CompressorKind kind);
};

/// The registered compressors' names, sorted.
std::vector<std::string> compressor_names();
/// The compressor registered as `name`, nullptr if none is (`"none"`: no compression).
const CompressorKind* find_compressor(const std::string& name);

/// One declared option and the compressors that declare it.
struct DeclaredCompressorParam {
  std::vector<std::string> owners;  ///< registered names, sorted
  Param param;                      ///< the declaration (the first owner's)
};
/// Every registered compressor's options, a key declared by several listed once with every
/// owner.
std::vector<DeclaredCompressorParam> compressor_params();

/// scheme.compression.error_feedback, the memory of every compressor that has one.
Param error_feedback_param();
/// scheme.compression.ratio, the fraction of every tensor a sparsifier keeps.
Param sparse_ratio_param();
/// The exchange of one bucket by a sparsifier keeping ratio of it: each worker's `flops_before`
/// (selection, plus 2 per element with error feedback: accumulate, residual), a sparse all-gather
/// of k values and k 4-byte indices per worker, and the scatter-add of every worker's k values.
CompressedExchange sparse_exchange(const BucketShape& b, const CompressionOptions& o,
                                   double select_flops);

/// Builds compressor `o.type` for `workers` workers; throws std::out_of_range if unknown.
std::unique_ptr<Compressor> make_compressor(const std::vector<TensorLayout>& layout, int workers,
                                            uint64_t seed, const CompressionOptions& o);

/// Bytes of one transmitted index of a sparse gradient (a 32-bit element index).
inline constexpr double kSparseIndexBytes = 4;

/// Elements a sparsifier keeps of `n` at ratio `ratio`: ceil(ratio n), at least 1, at most n.
size_t sparse_count(double ratio, size_t n);

/// The sparsifiers' shared math: per worker and tensor, the accumulated gradient (gradient +
/// residual with error feedback) keeps the elements `select` picks, the rest becomes the new
/// residual; the kept elements are the worker's contribution.
class SparseCompressor final : public PerWorkerCompressor {
 public:
  /// Picks `k` element indices of `acc` (tensor `tensor` of the layout, `n` elements) for worker
  /// `worker` in exchange `step`.
  using Select = std::function<void(const float* acc, size_t n, size_t k, int worker, int step,
                                    size_t tensor, std::vector<size_t>& out)>;
  /// Keeps ratio of every tensor of `layout` for `workers` workers.
  SparseCompressor(std::vector<TensorLayout> layout, int workers, double ratio, bool error_feedback,
                   Select select);

 private:
  void encode(const std::vector<float>& acc, size_t worker, std::vector<float>& sent) override;

  std::vector<TensorLayout> layout_;
  double ratio_;
  Select select_;
  std::vector<size_t> picked_;
};

}  // namespace sgdsim::learn
