#pragma once
/// Building blocks shared by the scheme builders: one worker's compute chain and the bucket
/// collectives of data-parallel iterations. Tasks are always added in the same order, so a
/// task has the same index in every iteration's fragment (cross-iteration edges rely on it).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/dag/task_graph.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// Task indices, the first few inline: a fragment of 10^5 workers builds a list per worker
/// every iteration, and an allocation each (and its free) cost more than the list.
class TaskList {
 public:
  /// Number of tasks.
  size_t size() const { return size_; }
  /// Task `i`.
  uint32_t& operator[](size_t i) { return i < kInline ? inline_[i] : more_[i - kInline]; }
  /// Task `i`.
  uint32_t operator[](size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }
  /// The last task.
  uint32_t& back() { return (*this)[size_ - 1]; }
  /// Appends `t`.
  void push_back(uint32_t t) {
    if (size_ < kInline)
      inline_[size_] = t;
    else
      more_.push_back(t);
    ++size_;
  }
  /// Makes the list `n` copies of `t`.
  void assign(size_t n, uint32_t t) {
    size_ = 0;
    more_.clear();
    for (size_t i = 0; i < n; ++i) push_back(t);
  }

 private:
  static constexpr size_t kInline = 8;
  uint32_t inline_[kInline] = {};
  size_t size_ = 0;
  std::vector<uint32_t> more_;
};

/// Indices of one worker's compute tasks in a fragment.
struct WorkerChain {
  uint32_t first = 0;     ///< io if any, else fwd
  TaskList bwd;           ///< bwd of each bucket, bucket 0 first
  uint32_t last_bwd = 0;  ///< bwd of the last bucket (or fwd when there are no buckets)
  uint32_t update = 0;    ///< the optimizer step
  uint32_t predict = 0;   ///< the gradient prediction (pseudo_sync only)
  /// Chakra workloads: tasks of this worker that wait for collective b (empty for profiles).
  std::vector<std::vector<uint32_t>> after_comm;
};

/// Adds [io ->] fwd -> bwd[0..B-1] for every worker (or only `only_worker`), then an update (and a
/// predict task of `predict_s` when > 0, between the backward pass and the update) per worker;
/// durations get the scenario's variability.
std::vector<WorkerChain> add_worker_chains(Fragment& f, const Scenario& s, const Workload& w,
                                           const ComputeVariability& v, double predict_s = 0,
                                           int only_worker = -1);

/// Adds the bucket collectives of one iteration as one stream (bucket b after b-1): with
/// WFBP bucket b waits for every worker's bwd[b], otherwise for the whole backward pass.
/// Returns their indices, bucket 0 first. With in_flight_bytes >= 0 (byteps's scheduling
/// queue) bucket b waits only for the bucket before the latest run of buckets ending at b whose
/// bytes fit in it (credit_waits_for).
std::vector<uint32_t> add_bucket_collectives(Fragment& f, const Scenario& s, const Workload& w,
                                             const std::vector<WorkerChain>& chains,
                                             double in_flight_bytes = -1);

/// The bucket whose collective bucket b's waits for when buckets may be in flight together up
/// to `in_flight_bytes` (finishing in order): -1 for none. Bucket b alone may exceed the credit.
int credit_waits_for(const Workload& w, size_t b, double in_flight_bytes);

/// Throws InputError at /scheme/type when `w` has buckets other than allreduces (a Chakra
/// trace's ALL_GATHER or REDUCE_SCATTER): for schemes whose update averages each bucket.
void require_allreduce_buckets(const Scenario& s, const Workload& w);

/// Throws InputError at /collective/algorithm when the scenario's collective cannot run the
/// operation of one of `w`'s buckets.
void check_bucket_ops(const Scenario& s, const Workload& w);

/// A synchronizing step: the bucket collectives, and every worker's update after the last.
void add_synchronizing_step(Fragment& f, const Scenario& s, const Workload& w,
                            const std::vector<WorkerChain>& chains);
/// A synchronizing step of part of the parameters: the collectives of fusion buckets `buckets`
/// (ascending) one after the other, each after its bucket's backward pass (WFBP) or the whole
/// pass, and every worker's update after the last (Streaming DiLoCo's fragments).
void add_partial_synchronizing_step(Fragment& f, const Scenario& s, const Workload& w,
                                    const std::vector<WorkerChain>& chains,
                                    const std::vector<size_t>& buckets);
/// The fragment of bucket `bucket` when `buckets` fusion buckets (backward order) are split into
/// `fragments` <= buckets runs in forward order: fragment p holds the buckets at forward
/// positions floor(p B / F) .. floor((p + 1) B / F) - 1.
int fragment_of_bucket(size_t bucket, size_t buckets, int fragments);

/// The next iteration's first task of every worker waits for this iteration's update.
void chain_iterations(Fragment& f, const std::vector<WorkerChain>& chains);

/// Time of one optimizer-side pass over the parameters at `flops_per_parameter`.
double per_parameter_time_s(const Workload& w, double flops_per_parameter);

/// Device time of `operations` element-wise operations (the optimizer step's rate per FLOP).
double device_operations_s(const Workload& w, double operations);

/// The compressed exchange of each bucket (scheme.compression), bucket 0 first; empty without
/// compression.
std::vector<learn::CompressedExchange> bucket_exchanges(const Scenario& s, const Workload& w);

/// Checks that the scenario can run its compression: a profile workload (not Chakra) and a
/// collective algorithm that runs the compressor's operations (an InputError otherwise).
void check_compression(const Scenario& s, const Workload& w);

/// `scheme.accumulation_steps`, gradient accumulation: one declaration for every scheme whose
/// worker chain (add_worker_chains) repeats micro-batches before its exchange.
SchemeParam accumulation_steps_param();
/// Refuses accumulation with a Chakra workload: its traces are whole steps.
void check_accumulation(JsonObject& scheme, Scenario& s);

}  // namespace sgdsim
