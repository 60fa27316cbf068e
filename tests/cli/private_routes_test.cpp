// flow_private_routes "closed_form": messages on routes no other pair uses are timed by SimGrid's
// own formula instead of being SimGrid communications, and handed over to SimGrid when another
// pair's message needs one of their links. The outputs equal those of every message on SimGrid
// to rounding (1e-9 relative), with and without handovers, and the runs it cannot time are
// refused (exit 2, one line naming /flow_private_routes).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct ModeOutputs {
  std::vector<std::vector<double>> rows;  // iterations.csv's numbers
  json summary;
};

std::vector<std::vector<double>> csv_numbers(const std::string& csv) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    rows.emplace_back();
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) rows.back().push_back(std::stod(cell));
  }
  return rows;
}

ModeOutputs run_mode(const std::string& scenario, std::vector<std::string> sets,
                     const std::string& mode) {
  sets.insert(sets.end(), {"--set", "flow_private_routes=" + mode});
  const fs::path out = temp_path("private-routes");
  std::vector<std::string> args = {"run", scenario, "--out", out.string(), "--quiet"};
  args.insert(args.end(), sets.begin(), sets.end());
  const CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ModeOutputs o{csv_numbers(slurp(out / "iterations.csv")),
                json::parse(slurp(out / "summary.json"))};
  fs::remove_all(out);
  return o;
}

/// Runs `scenario` both ways; the closed-form run's summary.
json expect_same_times(const std::string& scenario, const std::vector<std::string>& sets,
                       const std::string& what) {
  const ModeOutputs simgrid = run_mode(scenario, sets, "simgrid");
  const ModeOutputs closed = run_mode(scenario, sets, "closed_form");
  EXPECT_FALSE(simgrid.summary.contains("closed_form")) << what;
  EXPECT_EQ(closed.summary["activities"], simgrid.summary["activities"]) << what;
  const double t = simgrid.summary["simulated_time_s"].get<double>();
  EXPECT_NEAR(closed.summary["simulated_time_s"].get<double>(), t, 1e-9 * t) << what;
  EXPECT_EQ(closed.rows.size(), simgrid.rows.size()) << what;
  for (size_t i = 0; i < std::min(closed.rows.size(), simgrid.rows.size()); ++i)
    for (size_t j = 0; j < simgrid.rows[i].size(); ++j)
      // (iterations.csv prints nanoseconds: a last digit may differ where the times do by less)
      EXPECT_NEAR(closed.rows[i][j], simgrid.rows[i][j],
                  1e-9 * std::abs(simgrid.rows[i][j]) + 1.5e-9)
          << what << ": row " << i << ", column " << j;
  return closed.summary["closed_form"];
}

const std::vector<std::string> kLinksTcpStar = {
    "--set", "network_model=links", "--set", "platform.generate.node_link.technology=tcp",
    "--set", "iterations=4"};

std::vector<std::string> links_tcp_star(std::vector<std::string> extra) {
  extra.insert(extra.begin(), kLinksTcpStar.begin(), kLinksTcpStar.end());
  return extra;
}

}  // namespace

TEST(PrivateRoutes, RingsOnAStarRunInClosedFormWithSimGridsTimes) {
  json c = expect_same_times(kIdealStar, {}, "ideal star, ring");
  EXPECT_GT(c["messages"].get<double>(), 1000);
  EXPECT_EQ(c["handed_over"], 0);
  c = expect_same_times(kIdealStar, links_tcp_star({}), "TCP star (network_model links)");
  EXPECT_GT(c["messages"].get<double>(), 1000);
  // Channels: several messages of one pair at once share its route.
  expect_same_times(
      kIdealStar,
      links_tcp_star({"--set", "collective.algorithm=nccl_tuner", "--set",
                      "collective.chunk_bytes=1MB", "--set", "collective.channels=2"}),
      "nccl_tuner, pipelined, 2 channels");
  expect_same_times(kIdealStar,
                    links_tcp_star({"--set", "platform.generate.node_link.stream_bandwidth=5Gbps"}),
                    "a per-stream cap (FATPIPE links)");
  expect_same_times(kIdealStar, links_tcp_star({"--set", "collective.algorithm=rhd"}),
                    "recursive halving and doubling (pairs change every step)");
}

TEST(PrivateRoutes, MessagesThatMeetAreHandedOverToSimGridWithWhatIsLeft) {
  // Servers receive from every worker through one downlink.
  json c = expect_same_times(
      kIdealStar, links_tcp_star({"--set", "scheme.type=async", "--set", "collective.servers=2"}),
      "async, 2 parameter servers");
  EXPECT_GT(c["handed_over"].get<double>(), 0);
  c = expect_same_times("experiments/examples/21-background-traffic.json",
                        {"--set", "iterations=3", "--set", "warmup_iterations=1"},
                        "another job's allreduces on the same ranks");
  EXPECT_GT(c["messages"].get<double>(), 0);
  expect_same_times("experiments/examples/01-resnet50-sync-fat-tree.json",
                    {"--set", "network_model=links", "--set",
                     "platform.generate.oversubscription=4", "--set", "iterations=3", "--set",
                     "warmup_iterations=1", "--set", "collective.algorithm=hierarchical"},
                    "hierarchical on an oversubscribed fat tree of 4-GPU nodes");
}

TEST(PrivateRoutes, AutoTimesPrivateRoutesInClosedFormWhereItAppliesAndSimGridElsewhere) {
  // "auto": closed form on the ideal star; every message on SimGrid under LV08's cross traffic
  // and with rotation, without an error. The default, "simgrid": every message on SimGrid.
  EXPECT_FALSE(run_on_ideal_star({}).contains("closed_form"));
  const json ideal = run_on_ideal_star({"flow_private_routes=auto"});
  EXPECT_GT(ideal["closed_form"]["messages"].get<double>(), 1000);
  for (const char* set : {"network_model=default", "flow_symmetry=rotation"}) {
    const json other = run_on_ideal_star({set, "flow_private_routes=auto"});
    EXPECT_FALSE(other.contains("closed_form")) << set;
    EXPECT_GT(other["activities"].get<double>(), 500) << set;
  }
}

TEST(PrivateRoutes, RefusesRunsItCannotTime) {
  for (const auto& [sets, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--set", "flow_symmetry=rotation"}, "flow_symmetry"},
           {{"--set", "network_model=default"}, "cross traffic"},
           {{"--set", "network_model=smpi"}, "SMPI"}}) {
    std::vector<std::string> args = {"run",
                                     kIdealStar,
                                     "--out",
                                     temp_path("pr-bad").string(),
                                     "--quiet",
                                     "--set",
                                     "flow_private_routes=closed_form"};
    args.insert(args.end(), sets.begin(), sets.end());
    const CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("/flow_private_routes"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  }
}
