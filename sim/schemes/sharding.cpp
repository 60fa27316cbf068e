// The iteration graph of sharded data parallelism (ZeRO, Rajbhandari et al. 2020; PyTorch FSDP,
// Zhao et al. 2023; HSDP). A unit of wrapping is a fusion bucket (scheme.fusion_bytes, in
// backward order like DDP's buckets); its parameters travel at the gradient precision (the
// mixed-precision copy). Every collective of a worker goes through one stream in the order
// FSDP issues it (one NCCL communicator runs its kernels one after the other): forward
// all-gathers in forward order; in backward, per unit, its all-gather (before its gradients
// are computed) and its gradient collective (after), the prefetch option deciding which comes
// first. Gradient accumulation (plan.micro_batches) repeats forward, backward and their
// all-gathers per micro-batch (the parameters are resharded after each backward), the gradient
// collectives after every micro-batch or only the last, and steps once. Leaves out the CPU side
// (FSDP issues from Python hooks that may run late or early), FSDP's rate limiter
// (limit_all_gathers), the root unit's exemption from resharding, and the copies in and out of the
// flat parameter.
#include "sim/schemes/sharding.hpp"

#include <fmt/format.h>

#include <optional>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {

std::vector<double> bucket_forward_s(const Workload& w) {
  std::vector<double> out;
  for (const Bucket& b : w.buckets) {
    double t = 0;
    for (int l = b.first_layer; l <= b.last_layer; ++l) t += w.layers[l].forward_s;
    out.push_back(t);
  }
  return out;
}

double sharded_message_factor(const ShardingPlan& plan) {
  const int gathers = (plan.gather_forward ? 1 : 0) + (plan.gather_backward ? 1 : 0);
  const double reducing = plan.reduce_every_micro_batch ? plan.micro_batches : 1;
  return 0.5 * (gathers * plan.micro_batches + reducing + (plan.gather_after_step ? 1 : 0));
}

void check_sharding(const Scenario& s, const Workload& w, const ShardingPlan& plan) {
  const std::string& file = s.source_file;
  if (w.chakra)
    throw InputError(file, "/workload/chakra",
                     "a Chakra workload (scheme \"" + s.scheme.type +
                         "\" builds its units from a model profile's layers: expected \"model\")");
  const int p = s.workers, g = plan.shard_group;
  if (g < 1 || p % g != 0 || g > 32767)
    throw InputError(
        file, "/scheme/shard_group",
        fmt::format("{} (expected a divisor of workers.count {}, at most 32767)", g, p));
  const Collective& c = collective_by_name(s.collective);
  const CollectiveGroup all = collective_group(s);
  auto need = [&](CollectiveOp op, int subgroup) {
    if (const auto why = c.unsupported(op, subgroup_of(all, subgroup)))
      throw InputError(file, "/collective/algorithm",
                       fmt::format("\"{}\" (scheme \"{}\" needs {}: {})", s.collective,
                                   s.scheme.type, collective_op_name(op), *why));
  };
  const int shard = g == p ? 0 : g;
  if (plan.gather_forward || plan.gather_after_step) need(CollectiveOp::allgather, shard);
  need(plan.gradient_op, plan.gradient_op == CollectiveOp::allreduce ? 0 : shard);
  if (g < p) need(CollectiveOp::allreduce, -g);
}

namespace {

/// One iteration's tasks, added in a fixed order (cross-iteration edges rely on the indices).
class ShardedBuilder {
 public:
  ShardedBuilder(const Scenario& s, const Workload& w, const ComputeVariability& v,
                 const ShardingPlan& plan, Fragment& f)
      : s_(s),
        w_(w),
        v_(v),
        plan_(plan),
        f_(f),
        units_(static_cast<int>(w.buckets.size())),
        micros_(std::max(1, plan.micro_batches)),
        starts_(micros_),
        fwd_(micros_),
        bwd_(micros_) {}

  void build() {
    add_chains();
    for (micro_ = 0; micro_ < micros_; ++micro_) {
      add_forward_gathers();
      add_backward_collectives();
      // Without overlap the collectives share the compute's stream: the next micro-batch
      // starts once they are done.
      if (s_.scheme.overlap != "wfbp" && micro_ + 1 < micros_ && last_comm_)
        for (uint32_t t : starts_[micro_ + 1]) f_.graph.add_edge(*last_comm_, t);
    }
    for (int k = 0; k < s_.workers; ++k)
      if (last_comm_) f_.graph.add_edge(*last_comm_, update_[k]);
    if (plan_.gather_after_step) {
      for (int b = 0; b < units_; ++b)
        add_comm(CollectiveOp::allgather, b, w_.buckets[b].bytes, 0, b == 0 ? update_ : none_);
      for (int k = 0; f_.iteration > 0 && k < s_.workers; ++k)
        f_.cross.push_back({1, *last_comm_, starts_[0][k]});
    } else {
      for (int k = 0; f_.iteration > 0 && k < s_.workers; ++k) {
        f_.cross.push_back({1, update_[k], starts_[0][k]});
        // The first all-gather reads the shards the optimizer has just stepped.
        if (first_gather_) f_.cross.push_back({1, update_[k], *first_gather_});
      }
    }
  }

 private:
  /// Bucket (backward index) of forward unit u.
  int bucket_of(int u) const { return units_ - 1 - u; }
  int shard_subgroup() const { return plan_.shard_group == s_.workers ? 0 : plan_.shard_group; }

  /// Every worker's compute in one stream: per micro-batch io, forward per unit, backward per
  /// unit; then the sharded optimizer step.
  void add_chains() {
    const std::vector<double> fwd_s = bucket_forward_s(w_);
    const int fwd_units = std::max(1, units_);
    for (int k = 0; k < s_.workers; ++k) {
      int slot = 0;
      std::optional<uint32_t> prev;
      bool starts = true;  // the next task starts a micro-batch
      int m = 0;
      auto then = [&](TaskKind kind, int index, double duration) {
        const uint32_t t = f_.graph.add_task(
            {kind, k, f_.iteration, index, duration * v_.factor(k, f_.iteration, slot++), 0});
        if (prev) f_.graph.add_edge(*prev, t);
        if (starts && m < micros_) starts_[m].push_back(t);
        starts = false;
        return *(prev = t);
      };
      for (m = 0; m < micros_; ++m, starts = true) {
        if (w_.io_s > 0) then(TaskKind::io, m, w_.io_s);
        for (int u = 0; u < fwd_units; ++u)
          fwd_[m].push_back(
              then(TaskKind::fwd, u, units_ > 0 ? fwd_s[bucket_of(u)] : w_.forward_s));
        for (int b = 0; b < units_; ++b)
          bwd_[m].push_back(then(TaskKind::bwd, b, w_.buckets[b].backward_s));
      }
      // The sharded optimizer step: each rank steps its 1/shard_group of the parameters.
      update_.push_back(then(TaskKind::update, 0, w_.update_s / plan_.shard_group));
    }
  }

  /// Every worker's task `index` of a per-worker list of `per` tasks each.
  std::vector<uint32_t> of_all(const std::vector<uint32_t>& list, int per, int index) const {
    std::vector<uint32_t> out;
    for (int k = 0; k < s_.workers; ++k) out.push_back(list[static_cast<size_t>(k) * per + index]);
    return out;
  }

  /// Adds a collective after `after` (tasks of every worker) and the stream's previous one.
  uint32_t add_comm(CollectiveOp op, int bucket, double bytes, int subgroup,
                    const std::vector<uint32_t>& after) {
    Task t{TaskKind::comm, -1, f_.iteration, bucket, 0, bytes};
    t.op = op;
    t.subgroup = static_cast<int16_t>(subgroup);
    const uint32_t c = f_.graph.add_task(t);
    for (uint32_t a : after) f_.graph.add_edge(a, c);
    if (last_comm_) f_.graph.add_edge(*last_comm_, c);
    last_comm_ = c;
    return c;
  }

  void add_forward_gathers() {
    if (!plan_.gather_forward) return;
    const int ahead = plan_.forward_prefetch ? 1 : 0;
    for (int u = 0; u < units_; ++u) {
      // Issued at unit u - ahead's pre-forward, i.e. once unit u - 1 - ahead's forward is done
      // (at the micro-batch's start: once the previous one's backward is done).
      const int after = u - 1 - ahead;
      const uint32_t c =
          add_comm(CollectiveOp::allgather, bucket_of(u), w_.buckets[bucket_of(u)].bytes,
                   shard_subgroup(), after >= 0 ? of_all(fwd_[micro_], units_, after) : start());
      if (u == 0 && micro_ == 0) first_gather_ = c;
      for (uint32_t t : of_all(fwd_[micro_], units_, u)) f_.graph.add_edge(c, t);
    }
  }

  /// Tasks of every worker after which point `e` of the current micro-batch comes: -1 the
  /// forward pass, j bucket j's bwd.
  std::vector<uint32_t> point(int e) const {
    return e < 0 ? of_all(fwd_[micro_], std::max(1, units_), std::max(1, units_) - 1)
                 : of_all(bwd_[micro_], units_, e);
  }

  /// Tasks of every worker the current micro-batch starts after: none for the first, else the
  /// previous one's last backward.
  std::vector<uint32_t> start() const {
    return micro_ == 0 ? none_ : of_all(bwd_[micro_ - 1], units_, units_ - 1);
  }

  void gather_for_backward(int b, int e) {
    if (!plan_.gather_backward || b >= units_) return;
    const uint32_t c =
        add_comm(CollectiveOp::allgather, b, w_.buckets[b].bytes, shard_subgroup(), point(e));
    for (uint32_t t : of_all(bwd_[micro_], units_, b)) f_.graph.add_edge(c, t);
  }

  /// Bucket b's gradient collectives after point e, unless the micro-batch keeps its gradient
  /// (FSDP's set_requires_gradient_sync(False) or set_requires_all_reduce(False)).
  void reduce_gradient(int b, int e) {
    const bool last = micro_ == micros_ - 1;
    if (!last && !plan_.reduce_every_micro_batch) return;
    const double bytes = w_.buckets[b].bytes * plan_.gradient_bytes_factor;
    const bool scatter = plan_.gradient_op == CollectiveOp::reduce_scatter;
    add_comm(plan_.gradient_op, b, bytes, scatter ? shard_subgroup() : 0, point(e));
    // HSDP: each rank's shard of the gradient is averaged with its replicas'.
    if (plan_.shard_group < s_.workers && (last || plan_.allreduce_every_micro_batch))
      add_comm(CollectiveOp::allreduce, b, bytes / plan_.shard_group, -plan_.shard_group, none_);
  }

  void add_backward_collectives() {
    const bool wfbp = s_.scheme.overlap == "wfbp";
    const BackwardPrefetch pf = plan_.backward_prefetch;
    gather_for_backward(0, -1);
    if (pf == BackwardPrefetch::pre) gather_for_backward(1, -1);
    for (int j = 0; j < units_; ++j) {
      if (pf == BackwardPrefetch::post) gather_for_backward(j + 1, j);
      if (wfbp) reduce_gradient(j, j);
      if (pf == BackwardPrefetch::none) gather_for_backward(j + 1, j);
      if (pf == BackwardPrefetch::pre) gather_for_backward(j + 2, j);
    }
    if (!wfbp)
      for (int j = 0; j < units_; ++j) reduce_gradient(j, units_ - 1);
  }

  const Scenario& s_;
  const Workload& w_;
  const ComputeVariability& v_;
  const ShardingPlan& plan_;
  Fragment& f_;
  const int units_;
  const int micros_;
  int micro_ = 0;  // the micro-batch whose collectives are being added
  const std::vector<uint32_t> none_{};
  std::vector<uint32_t> update_;                           // per worker
  std::vector<std::vector<uint32_t>> starts_, fwd_, bwd_;  // per micro-batch, worker (and unit)
  std::optional<uint32_t> last_comm_, first_gather_;
};

}  // namespace

Fragment build_sharded_iteration(const Scenario& s, const Workload& w, const ComputeVariability& v,
                                 const ShardingPlan& plan, int iteration) {
  Fragment f;
  f.iteration = iteration;
  ShardedBuilder(s, w, v, plan, f).build();
  return f;
}

}  // namespace sgdsim
