#pragma once
/// The analytic scheduler: runs the schemes' task DAG without SimGrid. Every task lasts what
/// `fidelity: analytic` on SimGrid gives it (compute as built, with its variability; a
/// collective its closed form on the route costs; a point-to-point message alpha + n beta of its
/// route), hosts share their processor among the compute tasks running on them (as SimGrid's
/// CPU model does), queues serialize their tasks in ready order, and an event heap advances
/// the clock in O(tasks log tasks). Fragments are built just in time and retired when done.
#include <functional>
#include <vector>

#include "sim/analytic/observer.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// The contention-free costs an analytic run needs from the platform.
struct AnalyticCosts {
  CollectiveGroup group;  ///< layout of the ranks (ranks = workers)
  NetworkCost network;    ///< alpha-beta-gamma of the collectives' formulas
  /// Speed of each host (workers, then dedicated servers): compute runs as work of duration
  /// x speed, shared equally by the tasks on one host, with SimGrid's arithmetic.
  std::vector<double> host_speed_flops;
  /// With device.overlap_slowdown, the workers' speeds while a collective runs (SimGrid's
  /// second pstate); empty: no slowdown.
  std::vector<double> host_slowed_speed_flops;
  /// Alpha-beta of the route from rank or server host `src` to `dst` (asked once per pair).
  std::function<AlphaBeta(int src, int dst)> route;
};

/// Simulates `iterations` iterations of `scheme` analytically, building fragments just in
/// time; reports every task to `observer` in simulated-time order.
EngineResult run_analytic(const Scheme& scheme, int iterations, const Collective& collective,
                          const AnalyticCosts& costs, TaskObserver& observer);

}  // namespace sgdsim
