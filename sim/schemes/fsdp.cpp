// PyTorch FullyShardedDataParallel (Zhao et al., "PyTorch FSDP: Experiences on Scaling Fully
// Sharded Data Parallel", VLDB 2023; torch.distributed.fsdp): every unit's parameters are
// all-gathered before its forward, and, with reshard_after_forward (ShardingStrategy.FULL_SHARD;
// false = SHARD_GRAD_OP), again before its backward; its gradients are reduce-scattered after
// it; each rank steps its shard. forward_prefetch issues unit u+1's all-gather as unit u's
// forward starts; backward_prefetch "backward_pre" issues the next unit's all-gather before the
// current unit's gradient computation, "backward_post" after it (before its reduce-scatter),
// "none" at the next unit's own pre-backward hook (FSDP's BackwardPrefetch). hybrid (HSDP,
// ShardingStrategy.HYBRID_SHARD) shards over groups of shard_group consecutive ranks (default:
// a node) and allreduces each rank's gradient shard across the replica groups (the ranks
// equal modulo shard_group). Units are the fusion buckets (FSDP's size-based auto-wrap
// policy). reduce_precision is MixedPrecision's reduce_dtype against its param_dtype (the
// all-gathers move gradient_precision's elements, the gradient collectives reduce_precision's).
// Gradient accumulation (accumulation_steps) runs every micro-batch's forward and backward with
// their all-gathers; accumulation_sync says which micro-batches reduce their gradients, the
// flavours of FSDP2 (pytorch/pytorch#126166): "every" (the default: reduce-scatter, and HSDP's
// allreduce, after each micro-batch, keeping sharded gradients), "last" (set_requires_gradient_
// sync(False) before the last: no collective, unsharded gradients held; FSDP1's no_sync) and,
// with hybrid, "reduce_scatter" (set_requires_all_reduce(False): reduce-scatter every
// micro-batch, allreduce the last's). Leaves out set_reshard_after_backward(False).
// Leaves out CPU offload, the casts' compute, the rate limiter and the root unit's exemption from
// resharding.
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"
#include "sim/schemes/sharding.hpp"

namespace sgdsim {

namespace {

const std::vector<std::string> kBackwardPrefetch = {"backward_pre", "backward_post", "none"};
const std::vector<std::string> kReducePrecision = {"gradient", "fp32", "bf16", "fp16"};
const std::vector<std::string> kAccumulationSync = {"every", "last", "reduce_scatter"};

/// The gradient collectives' bytes over the all-gathers': reduce_precision's element size over
/// gradient_precision's ("gradient": the same).
double reduce_factor(const Scenario& s) {
  const std::string& r = s.scheme.params.text("reduce_precision");
  if (r == "gradient") return 1.0;
  return (r == "fp32" ? 4.0 : 2.0) / s.gradient_bytes_per_parameter;
}

ShardingPlan fsdp_plan(const Scenario& s) {
  const ParamValues& o = s.scheme.params;
  ShardingPlan p;
  p.gather_forward = true;
  p.gather_backward = o.number("reshard_after_forward") != 0;
  p.forward_prefetch = o.number("forward_prefetch") != 0;
  const std::string& bp = o.text("backward_prefetch");
  p.backward_prefetch = bp == "backward_pre"    ? BackwardPrefetch::pre
                        : bp == "backward_post" ? BackwardPrefetch::post
                                                : BackwardPrefetch::none;
  p.gradient_op = CollectiveOp::reduce_scatter;
  const int group = static_cast<int>(o.number("shard_group"));
  p.shard_group = o.number("hybrid") == 0 ? s.workers : group > 0 ? group : s.workers_per_node;
  p.gradient_bytes_factor = reduce_factor(s);
  p.micro_batches = s.scheme.accumulation_steps;
  const std::string& sync = o.text("accumulation_sync");
  p.reduce_every_micro_batch = sync != "last";
  p.allreduce_every_micro_batch = sync == "every";
  return p;
}

/// `shard_group` and `accumulation_sync: "reduce_scatter"` only with HSDP; shard_group's
/// default (0) is accepted without it, as a resolved scenario (scenario.resolved.json, a sweep's
/// sweep-scenario.json) writes every default.
void check_fsdp_options(JsonObject& sc, Scenario& s) {
  const bool hybrid = s.scheme.params.number("hybrid") != 0;
  if (sc.has("shard_group") && s.scheme.params.number("shard_group") != 0 && !hybrid)
    sc.fail("shard_group", "no shard_group without \"hybrid\": true");
  if (s.scheme.params.text("accumulation_sync") == "reduce_scatter" && !hybrid)
    sc.fail("accumulation_sync",
            "\"every\" or \"last\" (\"reduce_scatter\" skips HSDP's allreduce: needs "
            "\"hybrid\": true)");
  check_accumulation(sc, s);
}

std::vector<SchemeParam> fsdp_params() {
  return {{{.key = "reshard_after_forward",
            .type = ParamType::boolean,
            .default_value = true,
            .brief = "`fsdp` only: free each unit's gathered parameters after its forward and "
                     "all-gather them again for its backward (FULL_SHARD; false = SHARD_GRAD_OP)"}},
          {{.key = "forward_prefetch",
            .type = ParamType::boolean,
            .default_value = false,
            .brief = "`fsdp` only: issue the next unit's all-gather as a unit's forward starts"}},
          {{.key = "backward_prefetch",
            .type = ParamType::choice,
            .default_value = "backward_pre",
            .brief = "`fsdp` only: the next unit's backward all-gather before the current "
                     "unit's gradient computation (`backward_pre`), after it (`backward_post`) "
                     "or at its own turn (`none`)",
            .choices = kBackwardPrefetch}},
          {{.key = "reduce_precision",
            .type = ParamType::choice,
            .default_value = "gradient",
            .brief = "`fsdp` only: element type of the reduce-scatters (and HSDP's allreduces): "
                     "`gradient` (`gradient_precision`, the all-gathers' type), `fp32`, `bf16` or "
                     "`fp16` (MixedPrecision's reduce_dtype against its param_dtype)",
            .choices = kReducePrecision}},
          {{.key = "accumulation_sync",
            .type = ParamType::choice,
            .default_value = "every",
            .brief = "`fsdp` with `accumulation_steps`: micro-batches that reduce their "
                     "gradients: `every` (reduce-scatter after each), `last` (FSDP2's "
                     "set_requires_gradient_sync(False) before it, FSDP1's no_sync), "
                     "`reduce_scatter` (`hybrid`: reduce-scatter after each, allreduce the last)",
            .choices = kAccumulationSync}},
          accumulation_steps_param(),
          {{.key = "hybrid",
            .type = ParamType::boolean,
            .default_value = false,
            .brief = "`fsdp` only: HSDP (HYBRID_SHARD): shard within groups of `shard_group` "
                     "workers, allreduce the shards across the groups"}},
          {{.key = "shard_group",
            .type = ParamType::integer,
            .default_value = 0,
            .brief = "`fsdp` with `hybrid`: consecutive workers one copy is sharded over (a "
                     "divisor of workers.count); `0` = `workers.per_node`",
            .min = 0,
            .max = 32767}}};
}

SchemeTraits fsdp_traits() {
  SchemeTraits t;
  t.activities = [](const Scenario& s, ActivityCount& a) {
    a.comms *= sharded_message_factor(fsdp_plan(s));
    a.execs *= 2;
  };
  t.memory = [](const Scenario& s) {
    const ShardingPlan plan = fsdp_plan(s);
    ShardedStates m;
    m.degree = plan.shard_group;
    m.optimizer = m.parameters = m.unit_gradient_buffer = true;
    // Accumulating without reduce-scatters holds the unsharded gradients until the last one.
    m.gradients = plan.reduce_every_micro_batch || plan.micro_batches == 1;
    const bool ahead = plan.forward_prefetch || plan.backward_prefetch != BackwardPrefetch::none;
    m.units_gathered = !plan.gather_backward ? -1 : ahead ? 2 : 1;
    return m;
  };
  return t;
}

const SchemeRegistration fsdp_registration{
    {"fsdp", fsdp_params(), check_fsdp_options, nullptr, nullptr},
    [](const SchemeContext& c) {
      return std::make_unique<ShardedScheme>(c, "fsdp", fsdp_plan(*c.scenario));
    },
    [](const Scenario&) {
      return UpdateRule{AveragedUpdate{0, false}};
    },
    fsdp_traits()};

}  // namespace

}  // namespace sgdsim
