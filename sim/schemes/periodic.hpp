#pragma once
/// The iteration graph of periodic averaging, shared by `local_sgd` and `diloco`: H local steps
/// without communication, then a synchronizing step (a bucketed allreduce of parameter-sized
/// buffers, overlapped as the scheme's overlap says). How the averaged parameters are applied
/// is the scheme's update rule (LocalUpdate), not the graph's. With fragments (Streaming
/// DiLoCo) each fragment's buckets are synchronized at its own iterations (fragment_synchronizes).
#include <string>
#include <utility>

#include "sim/schemes/common.hpp"
#include "sim/schemes/update_rule.hpp"

namespace sgdsim {

/// A scheme that synchronizes every `period` iterations (iterations period-1, 2 period-1, ...).
class PeriodicScheme final : public Scheme {
 public:
  /// `name` is the registered scheme's; `period` its H (>= 1); `fragments` (>= 1, at most the
  /// fusion buckets) the runs of buckets synchronized at staggered iterations.
  PeriodicScheme(const SchemeContext& c, std::string name, int period, int fragments = 1)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        name_(std::move(name)),
        period_(period),
        fragments_(fragments) {
    require_allreduce_buckets(s_, w_);
  }

  std::string name() const override { return name_; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    if (fragments_ == 1 && (iteration + 1) % period_ == 0)
      add_synchronizing_step(f, s_, w_, chains);
    if (fragments_ > 1) {
      std::vector<size_t> due;  // the buckets of the fragments synchronized now
      const size_t buckets = w_.buckets.size();
      for (size_t b = 0; b < buckets; ++b)
        if (fragment_synchronizes(fragment_of_bucket(b, buckets, fragments_), fragments_, period_,
                                  iteration))
          due.push_back(b);
      if (!due.empty()) add_partial_synchronizing_step(f, s_, w_, chains, due);
    }
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  std::string name_;
  int period_;
  int fragments_;
};

}  // namespace sgdsim
