// flow_symmetry "rotation": simulating rank 0's messages alone gives the full flow run's
// outputs byte for byte where the run is rotation-symmetric, with P times fewer messages, and
// refuses (exit 2, one line naming /flow_symmetry) every run it cannot stand for exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// 8 nodes of one GPU on a star over 10 GbE TCP (network_model "links"): no link is shared by
// two ranks' ring routes.
const std::string kStar = "tests/data/ideal-star.json";
const std::vector<std::string> kTcpStar = {"--set", "network_model=links",
                                           "--set", "platform.generate.node_link.technology=tcp",
                                           "--set", "iterations=4"};

struct Outputs {
  std::string iterations, timeline;
  json summary;
};

Outputs run(std::vector<std::string> sets, const std::string& symmetry) {
  sets.insert(sets.end(), {"--set", "flow_symmetry=" + symmetry});
  fs::path out = temp_path("symmetry");
  std::vector<std::string> args = {"run", kStar, "--out", out.string(), "--quiet"};
  args.insert(args.end(), sets.begin(), sets.end());
  const CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Outputs o{slurp(out / "iterations.csv"), slurp(out / "timeline.json"),
            json::parse(slurp(out / "summary.json"))};
  fs::remove_all(out);
  return o;
}

void expect_same_run(const std::vector<std::string>& extra, const std::string& what) {
  std::vector<std::string> sets = kTcpStar;
  sets.insert(sets.end(), extra.begin(), extra.end());
  const Outputs full = run(sets, "none"), reduced = run(sets, "rotation");
  EXPECT_EQ(reduced.iterations, full.iterations) << what;
  EXPECT_EQ(reduced.timeline, full.timeline) << what;
  EXPECT_LT(reduced.summary["activities"].get<double>(),
            full.summary["activities"].get<double>() / 2)
      << what;
}

std::string refusal(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run",
                                   kStar,
                                   "--out",
                                   temp_path("symmetry-bad").string(),
                                   "--quiet",
                                   "--set",
                                   "flow_symmetry=rotation"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/flow_symmetry"), std::string::npos) << r.err;
  return r.err;
}

}  // namespace

TEST(FlowSymmetry, RotationGivesTheFullRunsOutputs) {
  expect_same_run({}, "sync, WFBP, ring");
  expect_same_run({"--set", "scheme.overlap=none", "--set", "model=vgg16"}, "sync, no overlap");
  expect_same_run({"--set", "scheme.type=pseudo_sync"}, "pseudo_sync");
  expect_same_run({"--set", "scheme.type=local_sgd"}, "local_sgd");
  expect_same_run({"--set", "collective.algorithm=nccl_tuner", "--set",
                   "collective.chunk_bytes=1MB", "--set", "collective.channels=2"},
                  "nccl_tuner, pipelined, 2 channels");
  expect_same_run({"--set", "variability.compute_jitter=0.1", "--set", "scheme.type=ssp"},
                  "ssp with jitter (collectives start when all ranks are in)");
  expect_same_run({"--set", "platform.generate.node_link.stream_bandwidth=5Gbps"},
                  "a per-stream cap (FATPIPE links shared by a node's routes)");
}

TEST(FlowSymmetry, RefusesWhatItCannotStandFor) {
  EXPECT_NE(refusal({"--set", "collective.algorithm=tree"}).find("next rank"), std::string::npos);
  EXPECT_NE(refusal({"--set", "scheme.type=async"}).find("point-to-point"), std::string::npos);
  EXPECT_NE(refusal({"--set", "network_model=default"}).find("cross traffic"), std::string::npos);
  EXPECT_NE(refusal({"--set", "platform.generate.nodes=2", "--set",
                     "platform.generate.devices_per_node=4", "--set", "workers.per_node=4"})
                .find("route from rank"),
            std::string::npos);
}
