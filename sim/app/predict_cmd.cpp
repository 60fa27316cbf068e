// `sgdsim predict`: the contention-free analytic iteration time of a scenario (the longest path
// through its task graph, sim/analytic), without SimGrid.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"

using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kPredictHelpHead =
    R"(usage: sgdsim predict SCENARIO.json [--set PATH=VALUE]... [--json] [--time-limit T] [--force]

Contention-free analytic model of the scenario (the DAG papers' model): the longest path
through the task graph of all iterations, collectives timed by their schedule with each
message costing route latency + size / route bandwidth. No SimGrid simulation. With
network_model "default", SimGrid's LV08 factors are applied (latency x13.01, bandwidth x0.97).
Needs a generated platform.

)";

const std::vector<OptionSpec> kPredictOptions = {
    {"--set", "PATH=VALUE", "override one scenario field; repeatable"},
    {"--json", "",
     "print {\"iteration_time_s\", \"throughput_samples_per_s\", \"compute_s\",\n"
     "\"comm_s\", \"iteration_end_s\"} instead of a table"},
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed"},
    {"--force", "",
     "predict even when the task graph exceeds run's activity limit at\n"
     "fidelity analytic (1e9)"},
};

int cmd_predict(const std::vector<std::string>& argv) {
  if (wants_help(argv))
    return std::cout << kPredictHelpHead << options_help(kPredictOptions, 23), 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(argv, kPredictOptions);
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim predict SCENARIO.json [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  for (const auto& w : setup->warnings) std::cerr << "sgdsim: warning: " << w << "\n";
  const Scenario& sc = setup->scenario;
  check_graph_resources(*setup, sc.iterations, a.has("--force"));
  Prediction p = predict(*setup);
  disarm_time_limit();
  double throughput = sc.workers * sc.samples_per_iteration() / p.iteration_time_s;
  if (a.has("--json")) {
    json j = {{"scenario", sc.name},
              {"iteration_time_s", p.iteration_time_s},
              {"throughput_samples_per_s", throughput},
              {"compute_s", p.compute_s},
              {"comm_s", p.comm_s},
              {"iteration_end_s", p.iteration_end_s}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("sgdsim predict: {} (contention-free critical path, network {})\n",
                           sc.name, network_model_name(sc.network_model));
  std::cout << fmt::format("  {:<28}{:>16}\n", "iteration time (mean)",
                           fmt_time(p.iteration_time_s));
  std::cout << fmt::format("  {:<28}{:>16.1f} samples/s\n", "throughput", throughput);
  std::cout << fmt::format("  {:<28}{:>16}\n", "compute per iteration", fmt_time(p.compute_s));
  std::cout << fmt::format("  {:<28}{:>16}\n", "allreduce per iteration", fmt_time(p.comm_s));
  return 0;
}

const RegisterSubcommand kPredict(
    {"predict", "predict SCENARIO.json",
     "contention-free analytic iteration time (critical path, no SimGrid)", 30, cmd_predict});

}  // namespace
}  // namespace sgdsim
