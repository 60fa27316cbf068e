#pragma once
/// Turns a profile plus device and batch size into per-layer times, gradient bytes and
/// fusion buckets (backward order) for one worker.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/collective_op.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/profile.hpp"

namespace sgdsim {

struct ChakraProgram;

/// Compute and gradient size of one layer for one worker's mini-batch.
struct LayerCost {
  std::string name;           ///< layer name
  double forward_s = 0;       ///< forward time
  double backward_s = 0;      ///< backward time
  double gradient_bytes = 0;  ///< gradient size
};

/// Layers whose gradients travel in one collective; layers [first_layer, last_layer].
struct Bucket {
  int first_layer = 0;    ///< lowest forward index in the bucket
  int last_layer = 0;     ///< highest forward index in the bucket
  double bytes = 0;       ///< gradient bytes of the bucket
  double backward_s = 0;  ///< backward time of the bucket's layers
  /// What its collective computes: allreduce for profiles; a Chakra trace's ALL_GATHER or
  /// REDUCE_SCATTER keeps its own (`bytes` then in CollectiveOp's convention).
  CollectiveOp op = CollectiveOp::allreduce;
};

/// Everything the schemes need to know about one worker's iteration.
struct Workload {
  std::string model_name;         ///< profile name
  bool measured = false;          ///< layer times measured on the profiled device (not FLOPs)
  int64_t parameters = 0;         ///< trainable parameters
  std::vector<LayerCost> layers;  ///< per layer, forward order
  std::vector<Bucket> buckets;    ///< fusion buckets in backward order (bucket 0 first)
  double io_s = 0;                ///< input pipeline time per iteration
  double forward_s = 0;           ///< whole forward pass
  double backward_s = 0;          ///< whole backward pass
  double update_s = 0;            ///< optimizer step
  /// A 4-FLOP-per-parameter pass at the device's speed (sizes pseudo_sync's predict); 0: update_s.
  double flop_pass_s = 0;
  double gradient_bytes = 0;  ///< all gradients
  /// Per-rank Chakra ET nodes when the scenario's workload is `workload.chakra` (the schemes
  /// build their compute and collectives from it); null for profiles.
  std::shared_ptr<const ChakraProgram> chakra;
};

/// FLOPs per parameter of a momentum-SGD optimizer step (v = m v + g; w -= lr v).
inline constexpr double kUpdateFlopsPerParameter = 4.0;

/// Bytes of device memory one optimizer step reads and writes per parameter: "sgd" (momentum,
/// fp32: read w, g, v; write w, v) 20, "adam" (fp32: read w, g, m, v; write w, m, v) 28,
/// "adamw_loop" (PyTorch's AdamW tensor by tensor, fp32: nine element-wise kernels) 88,
/// "adam_amp" (unscale fp16 g into fp32 6, fp32 Adam 28, fp32 master into fp16 copy 6) 40.
double optimizer_bytes_per_parameter(const std::string& optimizer);

/// The optimizer step's time: `device.optimizer` as a memory pass over the parameters when set,
/// else 4 FLOPs per parameter at `effective_flops`.
double optimizer_step_s(const DeviceSpec& device, double parameters, double effective_flops);

/// Groups layers into buckets in backward order: a bucket closes once it holds at least
/// `fusion_bytes` (0: after every layer with parameters), the first one at `first_bucket_bytes`
/// instead when that is > 0 (PyTorch DDP's smaller first bucket); parameter-free layers join
/// the open one.
std::vector<Bucket> make_buckets(const std::vector<LayerCost>& layers, double fusion_bytes,
                                 double first_bucket_bytes = 0);

/// MG-WFBP (Shi, Wang & Chu): walking buckets in backward order, merge the next bucket into
/// the current one when the current one's collective would not have finished by the time the
/// next gradient is ready and it either would not have started or would wait less than
/// `alpha_s` (the start-up cost of one collective); `comm_s(bytes)` is a collective's time.
std::vector<Bucket> merge_buckets_mgwfbp(const std::vector<Bucket>& buckets, double alpha_s,
                                         const std::function<double(double)>& comm_s);

/// Horovod's tensor fusion (horovod/common/operations.cc, its background loop): every
/// `cycle_s` the gradients ready since the last cycle are fused into allreduces of at most
/// `fusion_bytes` each (0: one per tensor), run one after another; the next cycle starts
/// `cycle_s` after this one began or once its allreduces end, whichever is later. Layers are
/// the tensors, ready in backward order at their cumulative backward time; `comm_s(bytes)` is
/// one allreduce's contention-free time. Returns the fused allreduces as buckets.
std::vector<Bucket> fuse_buckets_horovod(const std::vector<LayerCost>& layers, double fusion_bytes,
                                         double cycle_s,
                                         const std::function<double(double)>& comm_s);

/// Builds the workload of one worker; `device_speed_flops` is the device's peak speed.
Workload build_workload(const Scenario& scenario, const Profile& profile,
                        double device_speed_flops);

/// Loads the scenario's profile (file or inline) and builds its workload.
Workload load_workload(const Scenario& scenario);

/// The device speed a scenario implies (device.speed, else the generated platform's);
/// throws InputError if neither is given.
double scenario_device_speed(const Scenario& scenario);

}  // namespace sgdsim
