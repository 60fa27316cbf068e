#pragma once
/// The iteration graph of periodic averaging, shared by `local_sgd` and `diloco`: H local steps
/// without communication, then a synchronizing step (a bucketed allreduce of parameter-sized
/// buffers, overlapped as the scheme's overlap says). How the averaged parameters are applied
/// is the scheme's update rule (LocalUpdate), not the graph's.
#include <string>
#include <utility>

#include "sim/schemes/common.hpp"

namespace sgdsim {

/// A scheme that synchronizes every `period` iterations (iterations period-1, 2 period-1, ...).
class PeriodicScheme final : public Scheme {
 public:
  /// `name` is the registered scheme's; `period` its H (>= 1).
  PeriodicScheme(const SchemeContext& c, std::string name, int period)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        name_(std::move(name)),
        period_(period) {}

  std::string name() const override { return name_; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    if ((iteration + 1) % period_ == 0) add_synchronizing_step(f, s_, w_, chains);
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  std::string name_;
  int period_;
};

}  // namespace sgdsim
