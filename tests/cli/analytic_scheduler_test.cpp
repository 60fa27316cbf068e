// fidelity "analytic" on sim/analytic's scheduler equals the same fidelity on SimGrid (the
// runner kept behind SGDSIM_ANALYTIC_ON_SIMGRID=1): every scheme, with stragglers, jitter and the
// real math, at 4-64 workers. summary.json to 1e-9 relative, iterations.csv and convergence.csv
// byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

// Named, not anonymous: a TEST_P fixture derives from TestWithParam<Case>, and the
// test binaries compile in batches of files (GCC's -Wsubobject-linkage).
namespace analytic_scheduler_test {
struct Case {
  std::string name;
  std::vector<std::string> sets;
};
/// gtest shows a case by its name.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}
}  // namespace analytic_scheduler_test
using analytic_scheduler_test::Case;

namespace {

const std::string kVariability =
    R"(variability={"compute_jitter": 0.05, "stragglers": {"fraction": 0.25, "slowdown": 1.5}})";
const std::string kTraining =
    R"(training={"model": {"type": "mlp", "hidden": [16]}, "dataset": "synthetic", )"
    R"("learning_rate": 0.05, "momentum": 0.9, "eval_every": 5})";

std::vector<Case> cases() {
  return {
      {"sync_ring_16", {"workers.count=16", kVariability}},
      // Without variability sync's fragments repeat (Scheme::repeats_from): from the fourth
      // iteration on the scheduler runs a retired fragment again instead of building one.
      {"sync_repeated_hierarchical_16",
       {"workers.count=16", "workers.per_node=4",
        R"(platform={"generate": {"topology": "fat_tree", "nodes": 4, "devices_per_node": 4}})",
        "collective.algorithm=hierarchical", "scheme.accumulation_steps=2"}},
      {"sync_none_tree_8", {"workers.count=8", "scheme.overlap=none", "collective.algorithm=tree"}},
      {"sync_hierarchical_64",
       {"workers.count=64", "workers.per_node=4",
        R"(platform={"generate": {"topology": "fat_tree", "nodes": 16, "devices_per_node": 4}})",
        "collective.algorithm=hierarchical", kVariability}},
      {"pseudo_sync_32", {"workers.count=32", "scheme.type=pseudo_sync", kVariability}},
      // device.overlap_slowdown: every worker's speed changes at each collective's start and
      // end (SimGrid's pstates), with tasks mid-way on jittered hosts.
      {"sync_overlap_slowdown_16",
       {"workers.count=16", "device.overlap_slowdown=0.25", kVariability}},
      {"pseudo_sync_overlap_slowdown_8",
       {"workers.count=8", "scheme.type=pseudo_sync", "device.overlap_slowdown=0.4",
        "scheme.fusion_bytes=0", kVariability}},
      {"fsdp_overlap_slowdown_8",
       {"workers.count=8", "scheme.type=fsdp", "device.overlap_slowdown=0.189", kVariability}},
      {"ssp_16", {"workers.count=16", "scheme.type=ssp", "scheme.staleness=2", kVariability}},
      {"local_sgd_8",
       {"workers.count=8", "scheme.type=local_sgd", "scheme.period=3", kVariability}},
      {"async_colocated_8", {"workers.count=8", "scheme.type=async", "scheme.servers=4"}},
      {"async_colocated_jitter_8",
       {"workers.count=8", "scheme.type=async", "scheme.servers=4", kVariability}},
      // Without variability a worker's fragments repeat (Scheme::repeats_from): the scheduler
      // copies them instead of building them.
      {"async_dedicated_bucket_16",
       {"workers.count=16", "scheme.type=async", "scheme.servers=2",
        "scheme.server_placement=dedicated", "scheme.granularity=bucket"}},
      {"async_dedicated_layer_16",
       {"workers.count=16", "scheme.type=async", "scheme.servers=2",
        "scheme.server_placement=dedicated", "scheme.granularity=layer", kVariability}},
      {"sync_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", kVariability, kTraining}},
      {"pseudo_sync_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", "scheme.type=pseudo_sync", kVariability,
        kTraining}},
      {"async_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", "scheme.type=async", "scheme.servers=2",
        kVariability, kTraining}},
      {"local_sgd_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", "scheme.type=local_sgd", "scheme.period=4",
        kVariability, kTraining}},
      {"dpsgd_exponential_8",
       {"workers.count=8", "scheme.type=dpsgd", "scheme.topology=exponential", kVariability}},
      {"adpsgd_torus_8",
       {"workers.count=8", "scheme.type=adpsgd", "scheme.peers=torus", kVariability}},
      {"dpsgd_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", "scheme.type=dpsgd", kVariability,
        kTraining}},
      {"adpsgd_training_4",
       {"model=mlp", "workers.count=4", "iterations=20", "scheme.type=adpsgd", kVariability,
        kTraining}},
  };
}

void expect_close(const json& got, const json& want, const std::string& where) {
  if (want.is_number_float() || (want.is_number() && got.is_number_float())) {
    const double g = got.get<double>(), w = want.get<double>();
    EXPECT_NEAR(g, w, 1e-9 * std::max(1.0, std::abs(w))) << where;
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << where;
    EXPECT_EQ(got.size(), want.size()) << where;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << where << "/" << k;
      expect_close(got[k], v, where + "/" + k);
    }
  } else if (want.is_array()) {
    ASSERT_TRUE(got.is_array()) << where;
    ASSERT_EQ(got.size(), want.size()) << where;
    for (size_t i = 0; i < want.size(); ++i)
      expect_close(got[i], want[i], where + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

}  // namespace

class AnalyticScheduler : public ::testing::TestWithParam<Case> {};

TEST_P(AnalyticScheduler, EqualsSimGridAnalytic) {
  std::vector<std::string> sets = {"fidelity=analytic", "iterations=8", "warmup_iterations=2",
                                   "output.timeline=false"};
  sets.insert(sets.end(), GetParam().sets.begin(), GetParam().sets.end());
  const std::string scenario = "experiments/examples/02-minimal.json";
  fs::path own, simgrid;
  json a = run_scenario_summary(scenario, sets, &own);
  ::setenv("SGDSIM_ANALYTIC_ON_SIMGRID", "1", 1);
  json b = run_scenario_summary(scenario, sets, &simgrid);
  ::unsetenv("SGDSIM_ANALYTIC_ON_SIMGRID");
  a.erase("wall_time_s");
  b.erase("wall_time_s");
  expect_close(a, b, GetParam().name);
  EXPECT_EQ(slurp(own / "iterations.csv"), slurp(simgrid / "iterations.csv"));
  EXPECT_EQ(fs::exists(own / "convergence.csv"), fs::exists(simgrid / "convergence.csv"));
  if (fs::exists(simgrid / "convergence.csv")) {
    EXPECT_EQ(slurp(own / "convergence.csv"), slurp(simgrid / "convergence.csv"));
  }
  fs::remove_all(own);
  fs::remove_all(simgrid);
}

INSTANTIATE_TEST_SUITE_P(Schemes, AnalyticScheduler, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// steady_state: a deterministic run ends once K iterations took the same time, reports the
// iterations it simulated, and has the full run's iteration time; jitter keeps it running.
TEST(SteadyState, StopsADeterministicRunWithTheFullRunsIterationTime) {
  for (const std::string fidelity : {"analytic", "flow"}) {
    const std::vector<std::string> base = {"workers.count=8", "iterations=40",
                                           "output.timeline=false", "fidelity=" + fidelity};
    std::vector<std::string> sets = base;
    sets.push_back("steady_state=4");
    json full = run_scenario_summary("experiments/examples/02-minimal.json", base);
    json stopped = run_scenario_summary("experiments/examples/02-minimal.json", sets);
    EXPECT_EQ(full["iterations"], 40) << fidelity;
    EXPECT_LT(stopped["iterations"].get<int>(), 12) << fidelity;
    EXPECT_GE(stopped["iterations"].get<int>(), 2 + 4) << fidelity;  // warm-up + window
    EXPECT_TRUE(stopped["steady_state"]["stopped"].get<bool>()) << fidelity;
    EXPECT_EQ(stopped["steady_state"]["iterations_requested"], 40) << fidelity;
    const double want = full["iteration_time_s"]["mean"].get<double>();
    EXPECT_NEAR(stopped["iteration_time_s"]["mean"].get<double>(), want, 1e-9 * want) << fidelity;
    EXPECT_FALSE(full.contains("steady_state")) << fidelity;
  }
}

TEST(SteadyState, IsOffWhenJitterMakesIterationsDiffer) {
  json s = run_scenario_summary(
      "experiments/examples/02-minimal.json",
      {"workers.count=8", "iterations=30", "output.timeline=false", "fidelity=analytic",
       "steady_state=3", R"(variability={"compute_jitter": 0.05})"});
  EXPECT_EQ(s["iterations"], 30);
  EXPECT_FALSE(s["steady_state"]["active"].get<bool>());
  EXPECT_FALSE(s["steady_state"]["stopped"].get<bool>());
}
