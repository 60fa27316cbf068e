// ZeRO data parallelism (Rajbhandari, Rasley, Ruwase & He, "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", SC 2020), stages of DeepSpeed's zero_optimization:
// stage 1 shards the optimizer state (gradients reduce-scattered per bucket, each rank steps
// its 1/Nd, the updated parameters all-gathered: DDP's 2 x parameters of traffic, section
// 7.2.1, as DeepSpeed's stage 1 with its default reduce_scatter: true), stage 2 also the
// gradients (the same messages; only what each rank keeps differs, section 7.2.1), stage 3 also the
// parameters (all-gathered per unit before its forward and again before its backward, gradients
// reduce-scattered: 3 x parameters, section 7.2.2). Units are the fusion buckets; `prefetch` (stage
// 3) fetches one unit ahead in forward and backward, standing for DeepSpeed's
// stage3_prefetch_bucket_size. Leaves out ZeRO-R (activation partitioning, constant buffers),
// CPU/NVMe offload, DeepSpeed's contiguous gradient buffers and its bucket sizes
// (reduce_bucket_size, allgather_bucket_size). Gradient accumulation (accumulation_steps) as
// DeepSpeed's engine runs it (deepspeed/runtime/engine.py, allreduce_gradients): stages 2 and 3
// reduce-scatter after every micro-batch ("ZeRO stage >= 2 communicates during non gradient
// accumulation boundaries as well"), stage 1 only at the boundary, the last micro-batch; stage 3
// all-gathers every micro-batch's parameters.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"
#include "sim/schemes/sharding.hpp"

namespace sgdsim {

namespace {

/// The declared option `stage` (1-3).
int zero_stage(const Scenario& s) {
  return static_cast<int>(s.scheme.params.number("stage"));
}

ShardingPlan zero_plan(const Scenario& s) {
  const int stage = zero_stage(s);
  const bool prefetch = s.scheme.params.number("prefetch") != 0;
  ShardingPlan p;
  p.shard_group = s.workers;
  p.gather_forward = p.gather_backward = stage == 3;
  p.forward_prefetch = stage == 3 && prefetch;
  p.backward_prefetch = stage == 3 && prefetch ? BackwardPrefetch::pre : BackwardPrefetch::none;
  p.gradient_op = CollectiveOp::reduce_scatter;
  p.gather_after_step = stage < 3;
  p.micro_batches = s.scheme.accumulation_steps;
  p.reduce_every_micro_batch = stage >= 2;
  return p;
}

std::vector<SchemeParam> zero_params() {
  return {{{.key = "stage",
            .type = ParamType::integer,
            .default_value = 3,
            .brief = "`zero` only: what is sharded over the workers (DeepSpeed's "
                     "zero_optimization.stage): 1 optimizer state, 2 also gradients, 3 also "
                     "parameters",
            .min = 1,
            .max = 3}},
          {{.key = "prefetch",
            .type = ParamType::boolean,
            .default_value = true,
            .brief = "`zero` stage 3: all-gather one unit ahead in forward and backward "
                     "(DeepSpeed's prefetching)"}},
          accumulation_steps_param()};
}

SchemeTraits zero_traits() {
  SchemeTraits t;
  // Messages against DDP's allreduce (sharded_message_factor); forward runs per unit.
  t.activities = [](const Scenario& s, ActivityCount& a) {
    a.comms *= sharded_message_factor(zero_plan(s));
    a.execs *= 2;
  };
  t.memory = [](const Scenario& s) {
    const int stage = zero_stage(s);
    ShardedStates m;
    m.degree = s.workers;
    m.optimizer = true;
    m.gradients = m.unit_gradient_buffer = stage >= 2;
    m.parameters = stage == 3;
    m.units_gathered = stage == 3 ? (s.scheme.params.number("prefetch") != 0 ? 2 : 1) : 0;
    return m;
  };
  return t;
}

const SchemeRegistration zero_registration{
    {"zero", zero_params(), check_accumulation, nullptr, nullptr},
    [](const SchemeContext& c) {
      return std::make_unique<ShardedScheme>(c, "zero", zero_plan(*c.scenario));
    },
    [](const Scenario&) {
      return UpdateRule{AveragedUpdate{0, false}};
    },
    zero_traits()};

}  // namespace

}  // namespace sgdsim
