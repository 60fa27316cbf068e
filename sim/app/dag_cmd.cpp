// `sgdsim dag`: the task graph of a scenario's first iterations as Graphviz DOT or JSON, or its
// first iteration as per-rank Chakra ET files.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>

#include "sim/app/chakra_export.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"

namespace sgdsim {
namespace {

constexpr const char* kDagHelpHead =
    R"(usage: sgdsim dag SCENARIO.json [--iterations K] [--format dot|json] [--set PATH=VALUE]...
       sgdsim dag SCENARIO.json --format chakra --out PREFIX [--set PATH=VALUE]...
                  [--time-limit T] [--force]

Prints the task graph of the first K iterations (default 2) of the scenario.

)";

const std::vector<OptionSpec> kDagOptions = {
    {"--iterations", "K", "how many iterations to include (default 2)"},
    {"--format", "dot|json",
     "Graphviz DOT (default) or JSON {\"tasks\": [...], \"edges\": [[from, to]...]}"},
    {"--format", "chakra",
     "write iteration 0 as per-rank Chakra ET files PREFIX.0.et ..\n"
     "PREFIX.<P-1>.et (ASTRA-sim's workload format; README, Chakra)"},
    {"--out", "PREFIX", "where --format chakra writes"},
    {"--set", "PATH=VALUE", "override one scenario field; repeatable"},
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed\n"
     "or written"},
    {"--force", "",
     "build the graph even when its K iterations exceed run's activity limit\n"
     "at fidelity analytic (1e9)"},
};

/// dag --format chakra: iteration 0 of the scenario as per-rank ET files.
int dag_to_chakra(const Args& a) {
  auto out = a.get("--out");
  if (!out) throw InputError("usage: dag --format chakra needs --out PREFIX (files PREFIX.<r>.et)");
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  check_graph_resources(*setup, 1, a.has("--force"));
  const TaskGraph g = combine_groups(*setup->scheme, 0).graph;
  const auto streams = chakra_rank_streams(g, setup->scenario.workers);
  disarm_time_limit();  // the files are written whole, all of them
  const auto files = write_chakra_files(streams, *out);
  std::cout << fmt::format("wrote {} Chakra ET files: {} .. {}\n", files.size(), files.front(),
                           files.back());
  return 0;
}

/// The graph of `dag --format dot|json` (k iterations).
int dag_to_text(const Args& a, bool dot) {
  const int k = static_cast<int>(int_option(a, "--iterations", 2, 1, INT32_MAX));
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  const int iterations = std::min(k, setup->scenario.iterations);
  check_graph_resources(*setup, iterations, a.has("--force"));
  TaskGraph g = join_fragments(build_fragments(*setup->scheme, iterations));
  const std::string text = dot ? to_dot(g) : to_json(g);
  disarm_time_limit();
  std::cout << text;
  return 0;
}

int cmd_dag(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kDagHelpHead << options_help(kDagOptions, 23), 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(argv, kDagOptions);
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim dag SCENARIO.json [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  // The output formats, in the order the usage error lists them.
  const std::vector<std::pair<std::string, std::function<int(const Args&)>>> writers = {
      {"dot", [](const Args& x) { return dag_to_text(x, true); }},
      {"json", [](const Args& x) { return dag_to_text(x, false); }},
      {"chakra", dag_to_chakra}};
  const std::string format = a.get("--format").value_or("dot");
  for (const auto& [name, write] : writers)
    if (name == format) return write(a);
  throw InputError("usage: --format: expected dot, json or chakra, got \"" + format + "\"");
}

const RegisterSubcommand kDag({"dag", "dag SCENARIO.json",
                               "print the task graph of the first iterations (DOT or JSON)", 40,
                               cmd_dag});

}  // namespace
}  // namespace sgdsim
