#pragma once
/// The `run` fuzz target's body: the run path itself, not only its parser. A scenario is set up
/// as `sgdsim run` sets it up (make_setup, at fidelity analytic), goes through the resource
/// guard with small limits, and runs on sim/analytic's scheduler with contention-free costs
/// from the generated platform (no SimGrid engine: one per process would not reset), recorded
/// by the RunRecorder into a scratch folder. Invariants: the run ends, and its timeline.json
/// and summary.json are JSON. Left out: platform files (their costs come from SimGrid) and
/// scenarios that train a model (the math has its own tests).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_common.hpp"
#include "sim/analytic/predict.hpp"
#include "sim/analytic/scheduler.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/setup.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/report/recorder.hpp"
#include "sim/schemes/update_rule.hpp"

namespace sgdsim::fuzz {

/// The guard's limits for one fuzzer execution: runs of at most 20,000 activities and 512 MiB.
inline GuardLimits run_limits() {
  GuardLimits l;
  l.max_activities = 2e4;
  l.warn_activities = 2e4;
  l.available_bytes = 512.0 * 1024 * 1024;
  return l;
}

/// Scenario JSON -> make_setup (fidelity analytic) -> resource guard -> run_analytic -> the
/// recorder's files, which must parse as JSON.
inline void run(const uint8_t* data, size_t size) {
  static const ScratchDir dir("run");
  const std::string file = dir.write("scenario.json", data, size);
  std::unique_ptr<Setup> setup;
  try {
    setup = make_setup(file, {"fidelity=analytic"}, {});
    if (!setup->platform || setup->scenario.training.enabled) return;
    const RunEstimate e = estimate_run(setup->scenario, setup->workload);
    (void)check_run_resources(setup->scenario, e, run_limits(), false);
  } catch (const InputError&) {
    return;
  }
  const Scenario& sc = setup->scenario;
  const PlatformModel& pm = *setup->platform;
  AnalyticCosts costs;
  costs.group = setup->engine.group;
  costs.group.ranks = sc.workers;
  const std::vector<int> ranks(setup->worker_host.begin(), setup->worker_host.begin() + sc.workers);
  costs.network =
      route_network_cost(pm, ranks, sc.workers_per_node, sc.network_model, sc.reduction_Bps);
  const double gamma = sc.reduction_Bps > 0 ? 1.0 / sc.reduction_Bps : 0.0;
  costs.route = [&](int src, int dst) {
    const RouteCost r = pm.route(setup->worker_host[static_cast<size_t>(src)],
                                 setup->worker_host[static_cast<size_t>(dst)]);
    return AlphaBeta{r.latency_s, 1.0 / r.bandwidth_Bps, gamma};
  };
  const double speed = sc.device.speed_flops.value_or(pm.spec().device_speed_flops);
  costs.host_speed_flops.assign(setup->worker_host.size(), speed);
  const std::filesystem::path out = dir.path() / "out";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  try {
    RunRecorder recorder(sc, setup->workload, out, update_lag(scheme_update_rule(sc)));
    const EngineResult r =
        run_analytic(*setup->scheme, sc.iterations, *setup->collective, costs, recorder);
    (void)recorder.finish(r, 0.0);
  } catch (const InputError&) {
    return;  // a run may still refuse what only running finds (a Chakra deadlock)
  }
  for (const char* name : {"summary.json", "timeline.json"}) {
    if (!std::filesystem::exists(out / name)) continue;
    if (!nlohmann::json::accept(read_file(out / name))) fail(std::string(name) + " is not JSON");
  }
}

}  // namespace sgdsim::fuzz
