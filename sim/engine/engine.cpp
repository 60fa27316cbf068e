// The engine's entry points: the SimGrid options of each network model, and the runs
// (platform.cpp builds the platform, runner.cpp runs on SimGrid, sim/analytic the analytic
// fidelity).
#include "sim/engine/engine.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <memory>
#include <stdexcept>

#include "sim/analytic/scheduler.hpp"
#include "sim/engine/platform.hpp"
#include "sim/engine/runner.hpp"

XBT_LOG_NEW_CATEGORY(sgdsim, "sgdsim: distributed SGD training simulator");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(sgdsim_engine, sgdsim,
                                "sgdsim engine: SimGrid execution of task DAGs");

namespace sgdsim {

std::vector<std::string> network_model_cfg(NetworkModel model) {
  // SimGrid 3.32's lazy bandwidth-sharing update misallocates rates when flows of different
  // fan-in share links (a parameter-server push came out 10 % slow), and its default time
  // precision (1e-9 s) blurs microsecond collectives: sgdsim trades some speed for exactness.
  std::vector<std::string> cfg = {"network/optim:Full", "surf/precision:1e-12"};
  // "links" starts from the ideal model: the link technologies add every per-message cost.
  if (model == NetworkModel::ideal || model == NetworkModel::links)
    cfg.insert(cfg.end(), {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0"});
  if (model == NetworkModel::smpi) cfg.push_back("network/model:SMPI");
  return cfg;
}

std::string scale_factor_thresholds(const std::string& spec, double scale) {
  std::string out;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(';', start);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(start, end - start);
    size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("malformed factor list: " + spec);
    double threshold = std::stod(item.substr(0, colon));
    if (!out.empty()) out += ';';
    out += fmt::format("{}", threshold * scale);
    out += item.substr(colon);
    start = end + 1;
  }
  return out;
}

EngineResult run_training(const EngineConfig& config, const Scheme& scheme, int iterations,
                          const Collective& collective, TaskObserver& observer) {
  auto owned = std::make_unique<Platform>(config);
  Platform& platform = *owned;
  // Tearing down 10^5 hosts and links costs about as much as a third of building them; a
  // process that exits after this run leaves that to the exit (EngineConfig says when).
  if (config.keep_platform_at_exit) static_cast<void>(owned.release());
  if (config.fidelity == Fidelity::analytic && !config.analytic_on_simgrid) {
    // SimGrid only routes: the costs are those the SimGrid runner would time its activities
    // with, the execution is sim/analytic's (no activity list to scan per completion).
    AnalyticCosts costs;
    costs.group = config.group;
    costs.group.ranks = platform.size();
    costs.network = platform.network_cost(costs.group, config.reduction_Bps);
    costs.route = [&platform](int src, int dst) { return platform.route_cost(src, dst); };
    for (int h = 0; h < platform.hosts(); ++h) costs.host_speed_flops.push_back(platform.speed(h));
    if (config.overlap_slowdown > 0)
      for (int h = 0; h < platform.size(); ++h)
        costs.host_slowed_speed_flops.push_back(platform.slowed_speed(h));
    XBT_VERB("analytic run of %d iterations of %s on %d workers", iterations, scheme.name().c_str(),
             platform.size());
    return run_analytic(scheme, iterations, collective, costs, observer);
  }
  XBT_VERB("simulating %d iterations of %s on %d workers", iterations, scheme.name().c_str(),
           platform.size());
  return simulate_training(config, platform, scheme, iterations, collective, observer);
}

EngineResult run_single_collective(const EngineConfig& config, const Collective& collective,
                                   double bytes) {
  Platform platform(config);
  return simulate_collective(config, platform, collective, bytes);
}

namespace {
/// Each job's last operation's end (jobs are the comm tasks' indices).
class JobEnds final : public TaskObserver {
 public:
  explicit JobEnds(int jobs) : end_s(static_cast<size_t>(jobs), 0.0) {}
  void task_done(const Task& task, double /*start_s*/, double end_s_now) override {
    if (task.kind == TaskKind::comm) end_s[static_cast<size_t>(task.index)] = end_s_now;
  }
  std::vector<double> end_s;
};
}  // namespace

JobsResult run_concurrent_jobs(const EngineConfig& config, const Collective& collective,
                               double bytes, int jobs, int operations, double offset_s) {
  EngineConfig with_timer = config;
  with_timer.start_delays = true;  // the jobs' offsets are delays on the timer host
  Platform platform(with_timer);
  JobEnds ends(jobs);
  const EngineResult r =
      simulate_jobs(with_timer, platform, collective, bytes, jobs, operations, offset_s, ends);
  JobsResult out{{}, r.activities};
  for (int j = 0; j < jobs; ++j)
    out.mean_operation_s.push_back((ends.end_s[static_cast<size_t>(j)] - j * offset_s) /
                                   operations);
  return out;
}

}  // namespace sgdsim
