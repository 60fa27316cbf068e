// flow_symmetry "rotation": simulating rank 0's messages alone (or one block's: a node of a star,
// a leaf of a fat tree) gives the full flow run's outputs byte for byte where the run is
// rotation-symmetric, with P (or P / block) times fewer messages, and refuses (exit 2, one
// line naming /flow_symmetry) every run it cannot stand for exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// 8 nodes of one GPU on a star over 10 GbE TCP (network_model "links"): no link is shared by
// two ranks' ring routes.
const std::vector<std::string> kTcpStar = {"--set", "network_model=links",
                                           "--set", "platform.generate.node_link.technology=tcp",
                                           "--set", "iterations=4"};

struct Outputs {
  std::string iterations, timeline;
  json summary;
};

/// Runs `scenario` with `sets` (--set arguments) and flow_symmetry `symmetry`; its outputs.
Outputs run_scenario(const std::string& scenario, std::vector<std::string> sets,
                     const std::string& symmetry) {
  sets.insert(sets.end(), {"--set", "flow_symmetry=" + symmetry});
  fs::path out = temp_path("symmetry");
  std::vector<std::string> args = {"run", scenario, "--out", out.string(), "--quiet"};
  args.insert(args.end(), sets.begin(), sets.end());
  const CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Outputs o{slurp(out / "iterations.csv"), slurp(out / "timeline.json"),
            json::parse(slurp(out / "summary.json"))};
  fs::remove_all(out);
  return o;
}

Outputs run(const std::vector<std::string>& sets, const std::string& symmetry) {
  return run_scenario(kIdealStar, sets, symmetry);
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

// Example 01 (ResNet-50 sync, WFBP, 4-GPU nodes under a fat tree, SimGrid's LV08 with cross
// traffic) at `workers` GPUs, 4 nodes per leaf: blocks of 16 ranks, one per leaf.
Outputs fat_tree_run(int workers, const std::vector<std::string>& extra,
                     const std::string& symmetry) {
  std::vector<std::string> sets = {
      "--set", "platform.generate.nodes=" + std::to_string(workers / 4),
      "--set", "workers.count=" + std::to_string(workers),
      "--set", "iterations=2",
      "--set", "warmup_iterations=1"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return run_scenario("experiments/examples/01-resnet50-sync-fat-tree.json", sets, symmetry);
}

void expect_same_tree_run(int workers, const std::vector<std::string>& extra,
                          const std::string& what) {
  const Outputs full = fat_tree_run(workers, extra, "none");
  const Outputs reduced = fat_tree_run(workers, extra, "rotation");
  EXPECT_EQ(reduced.iterations, full.iterations) << what;
  EXPECT_EQ(reduced.timeline, full.timeline) << what;
  // One block's messages of workers / 16 (and of its compute tasks where compute is uniform).
  EXPECT_LT(reduced.summary["activities"].get<double>() * 2,
            full.summary["activities"].get<double>())
      << what;
}

std::string refusal(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run",
                                   kIdealStar,
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

TEST(FlowSymmetry, LeafRotationGivesTheFullRunsOutputsOnAFatTreeOfMultiGpuNodes) {
  expect_same_tree_run(64, {}, "ring, 4 leaves");
  expect_same_tree_run(64, {"--set", "collective.algorithm=hierarchical"}, "hierarchical");
  expect_same_tree_run(64, {"--set", "platform.generate.oversubscription=4"},
                       "oversubscribed uplinks");
  // A per-stream cap: FATPIPE links on both nodes' sides, the receiver's among the ghost's.
  expect_same_tree_run(64, {"--set", "platform.generate.node_link.stream_bandwidth=5Gbps"},
                       "a per-stream cap");
}

// More settings on the same fat tree (release only: the code paths above under other options).
TEST(FlowSymmetry, LeafRotationGivesTheFullRunsOutputsUnderOtherSettings) {
  expect_same_tree_run(64,
                       {"--set", "collective.algorithm=nccl", "--set", "collective.chunk_bytes=1MB",
                        "--set", "collective.channels=2"},
                       "NCCL's ring, pipelined, 2 channels");
  expect_same_tree_run(64, {"--set", "network_model=links", "--set", "scheme.type=pseudo_sync"},
                       "pseudo_sync over links");
  expect_same_tree_run(64, {"--set", "platform.generate.topology=star"},
                       "a star of 4-GPU nodes: blocks of one node");
  expect_same_tree_run(64, {"--set", "variability.compute_jitter=0.1"},
                       "compute jitter: every worker's compute simulated");
  expect_same_tree_run(64,
                       {"--set", "platform.generate.node_link.stream_bandwidth=5Gbps", "--set",
                        "platform.generate.topology=star"},
                       "a per-stream cap on a star of 4-GPU nodes");
  expect_same_tree_run(64, {"--set", "scheme.accumulation_steps=3"},
                       "gradient accumulation: the micro-batches' compute mirrored too");
  expect_same_tree_run(64, {"--set", "device.overlap_slowdown=0.189"},
                       "compute slowed beside the collectives: every worker's pstate switched");
}

TEST(FlowSymmetry, LeafRotationAt256Gpus) {
  expect_same_tree_run(256, {}, "ring, 16 leaves");
  expect_same_tree_run(256, {"--set", "collective.algorithm=hierarchical"}, "hierarchical");
}

TEST(FlowSymmetry, RefusesWhatItCannotStandFor) {
  EXPECT_NE(refusal({"--set", "collective.algorithm=tree"}).find("next rank"), std::string::npos);
  EXPECT_NE(refusal({"--set", "scheme.type=async"}).find("point-to-point"), std::string::npos);
  EXPECT_NE(refusal({"--set", "network_model=default"}).find("cross traffic"), std::string::npos);
  // On nodes of 4 GPUs (blocks of a node): what by nodes cannot stand for.
  auto on_4_gpu_nodes = [](int nodes, std::vector<std::string> extra) {
    std::vector<std::string> sets = {"--set", "platform.generate.nodes=" + std::to_string(nodes),
                                     "--set", "platform.generate.devices_per_node=4",
                                     "--set", "workers.per_node=4"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    return refusal(sets);
  };
  EXPECT_NE(on_4_gpu_nodes(2, {"--set", "workers.placement=cyclic"}).find("whole blocks in order"),
            std::string::npos);
  EXPECT_NE(on_4_gpu_nodes(
                4, {"--set", "workers.count=8", "--set", "collective.algorithm=double_binary_tree"})
                .find("every block of 4 ranks"),
            std::string::npos);
  // Rank by rank (one-GPU nodes), where the routes do not look alike: leaves under hashed
  // spines, where r -> r + 1 leaves its leaf only at the leaf's last rank.
  EXPECT_NE(
      refusal({"--set", "network_model=links", "--set", "platform.generate.topology=fat_tree",
               "--set", "platform.generate.nodes=8", "--set", "platform.generate.nodes_per_leaf=4",
               "--set", "platform.generate.spines=2", "--set", "workers.count=8"})
          .find("the route from rank 3 to rank 4 differs"),
      std::string::npos);
  EXPECT_NE(on_4_gpu_nodes(2, {"--set", "variability.link_noise=0.1"}).find("link_noise"),
            std::string::npos);
}
