#pragma once
/// The iteration graph of sharded data parallelism (ZeRO, FSDP, HSDP), shared by the `zero` and
/// `fsdp` schemes: units of wrapping are the fusion buckets, parameters are all-gathered per
/// unit, gradients reduce-scattered (or allreduced), the optimizer steps each rank's shard.
#include <string>
#include <utility>
#include <vector>

#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// When a unit's backward all-gather is issued (FSDP's BackwardPrefetch).
enum class BackwardPrefetch : uint8_t {
  none,  ///< at the unit's own pre-backward, after the previous unit's gradient collective
  pre,   ///< one unit ahead, at the previous unit's pre-backward (BACKWARD_PRE)
  post,  ///< at the previous unit's post-backward, before its gradient collective (BACKWARD_POST)
};

/// What a sharded scheme does per unit and iteration.
struct ShardingPlan {
  bool gather_forward = true;     ///< parameters all-gathered before each unit's forward
  bool gather_backward = true;    ///< and again before its backward (resharded after forward)
  bool forward_prefetch = false;  ///< unit u+1's all-gather issued as unit u's forward starts
  BackwardPrefetch backward_prefetch = BackwardPrefetch::none;  ///< see BackwardPrefetch
  /// The gradient collective per unit: reduce_scatter (ZeRO-2/3, FSDP) or allreduce (ZeRO-1).
  CollectiveOp gradient_op = CollectiveOp::reduce_scatter;
  bool gather_after_step = false;  ///< ZeRO-1/2: updated parameters all-gathered after the step
  int shard_group = 1;  ///< ranks one copy of the model state is sharded over (Nd, or HSDP's)
  /// Bytes of the gradient collectives over those of the all-gathers (FSDP's reduce_dtype
  /// against its param_dtype: 2 for fp32 reductions of bf16 parameters).
  double gradient_bytes_factor = 1.0;
  int micro_batches = 1;  ///< forward and backward passes per optimizer step (accumulation)
  /// Micro-batches before the last: reduce-scatter their gradients (else keep them unsharded).
  bool reduce_every_micro_batch = true;
  /// Micro-batches before the last: HSDP's allreduce of the shards too (else only the last's).
  bool allreduce_every_micro_batch = true;
};

/// Builds iteration `iteration` of a sharded scheme; `workers` ranks, shard groups of
/// plan.shard_group consecutive ranks (the rest: replica groups, allreducing the shards).
Fragment build_sharded_iteration(const Scenario& s, const Workload& w, const ComputeVariability& v,
                                 const ShardingPlan& plan, int iteration);

/// Messages of the plan's collectives per iteration against one ring allreduce per unit (an
/// all-gather or reduce-scatter is half of it), for the resource estimate
/// (SchemeTraits::activities): the all-gathers of every micro-batch, the gradient collectives
/// of those that reduce, the all-gather after the step.
double sharded_message_factor(const ShardingPlan& plan);

/// Checks that the scenario can run the plan: a profile workload (not Chakra), shard groups
/// that divide the workers, and a collective algorithm that runs the plan's operations (an
/// InputError naming the field otherwise).
void check_sharding(const Scenario& s, const Workload& w, const ShardingPlan& plan);

/// Forward time of each fusion bucket's layers (bucket 0 = the last layers).
std::vector<double> bucket_forward_s(const Workload& w);

/// A sharded scheme (zero, fsdp): its iterations built from its plan, checked once.
class ShardedScheme final : public Scheme {
 public:
  /// `name` is the registered scheme's; `plan` what its options make of the scenario.
  ShardedScheme(const SchemeContext& c, std::string name, ShardingPlan plan)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        name_(std::move(name)),
        plan_(plan) {
    check_sharding(s_, w_, plan_);
  }

  std::string name() const override { return name_; }

  Fragment build(int iteration) const override {
    return build_sharded_iteration(s_, w_, v_, plan_, iteration);
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  std::string name_;
  ShardingPlan plan_;
};

}  // namespace sgdsim
