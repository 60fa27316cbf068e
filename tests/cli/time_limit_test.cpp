// --time-limit on every long-running subcommand but `run` (guards_test.cpp covers run's): a tiny
// limit on a big input exits 3 with one line and leaves no output; a normal run exits 0. And the
// activity guard of predict and dag (run's, at fidelity analytic).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
namespace fs = std::filesystem;

namespace {

const std::string kScenario = "experiments/examples/01-resnet50-sync-fat-tree.json";
const std::string kIb = "data/calibration/nccl-tests-echo-azure-a100-ib/";

/// The scenario's arguments at 1,024 workers (predict: seconds; dag: about a second).
std::vector<std::string> big_scenario(const std::string& cmd, int iterations) {
  return {cmd,     kScenario,
          "--set", "workers.count=1024",
          "--set", "platform.generate.nodes=256",
          "--set", "iterations=" + std::to_string(iterations)};
}

/// An OSU allreduce log of `sizes` sizes (400,000: about 6 MB, seconds to fit or summarize).
fs::path osu_log(int sizes, const std::string& tag) {
  const fs::path dir = temp_path(tag);
  fs::create_directories(dir);
  std::ofstream out(dir / "osu.log");
  out << "# OSU MPI Allreduce Latency Test\n# Size       Avg Latency(us)\n";
  for (int i = 1; i <= sizes; ++i) out << i * 64 << " " << 5 + i * 64 * 1e-4 << "\n";
  return dir / "osu.log";
}

/// `sgdsim ARGS --time-limit LIMIT`.
CliResult with_limit(std::vector<std::string> args, const std::string& limit) {
  args.push_back("--time-limit");
  args.push_back(limit);
  return run_sgdsim(args);
}

/// Stopped by the limit: exit 3, run's one line on stderr, nothing on stdout.
void expect_stopped(const CliResult& r) {
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("sgdsim: error: --time-limit reached"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

bool is_empty_dir(const fs::path& dir) {
  return fs::is_directory(dir) && fs::is_empty(dir);
}

}  // namespace

TEST(GuardTimeLimit, StopsPredict) {
  expect_stopped(with_limit(big_scenario("predict", 20), "0.05"));
  const CliResult r = with_limit({"predict", kScenario, "--json"}, "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"iteration_time_s\""), std::string::npos) << r.out;
}

TEST(GuardTimeLimit, StopsDagWithNoFileWritten) {
  std::vector<std::string> text = big_scenario("dag", 20);
  text.insert(text.end(), {"--format", "json", "--iterations", "20"});
  expect_stopped(with_limit(text, "0.05"));
  // --format chakra: none of the 1,024 rank files, nor a temporary one.
  const fs::path dir = temp_path("limit-dag");
  fs::create_directories(dir);
  std::vector<std::string> chakra = big_scenario("dag", 20);
  chakra.insert(chakra.end(), {"--format", "chakra", "--out", (dir / "g").string()});
  expect_stopped(with_limit(chakra, "0.05"));
  EXPECT_TRUE(is_empty_dir(dir));
  const CliResult r = with_limit(
      {"dag", "tests/data/ideal-star.json", "--format", "chakra", "--out", (dir / "g").string()},
      "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "g.0.et"));
  fs::remove_all(dir);
}

TEST(GuardTimeLimit, StopsCalibrate) {
  const fs::path big = osu_log(400000, "limit-osu");
  expect_stopped(with_limit({"calibrate", "osu", big.string(), "--ranks", "4"}, "0.05"));
  // nccl-tests: a fit takes milliseconds; 2,000 --check logs take about half a second.
  std::vector<std::string> nccl = {"calibrate", "nccl-tests", kIb + "nccl_16.log"};
  for (int i = 0; i < 2000; ++i) nccl.insert(nccl.end(), {"--check", kIb + "nccl_128.log"});
  expect_stopped(with_limit(nccl, "0.05"));
  const fs::path small = osu_log(40, "limit-osu-small");
  CliResult r = with_limit(
      {"calibrate", "osu", small.string(), "--ranks", "4", "--min-bytes", "64"}, "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = with_limit({"calibrate", "nccl-tests", kIb + "nccl_2.log"}, "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  fs::remove_all(big.parent_path());
  fs::remove_all(small.parent_path());
}

TEST(GuardTimeLimit, StopsTrace) {
  const fs::path big = osu_log(400000, "limit-trace");
  expect_stopped(with_limit({"trace", big.string(), "--format", "osu", "--ranks", "4"}, "0.05"));
  const CliResult r = with_limit({"trace", "tests/data/chakra/pipe.0.et", "--json"}, "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  fs::remove_all(big.parent_path());
}

TEST(GuardTimeLimit, StopsPlatformWithNoFileWritten) {
  const fs::path dir = temp_path("limit-platform");
  fs::create_directories(dir);
  const std::string xml = (dir / "p.xml").string();
  expect_stopped(with_limit({"platform", "--topology", "fat_tree", "--nodes", "16384",
                             "--devices-per-node", "8", "--output", xml},
                            "0.05"));
  EXPECT_TRUE(is_empty_dir(dir));
  const CliResult r = with_limit({"platform", "--nodes", "4", "--output", xml}, "10min");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(xml));
  fs::remove_all(dir);
}

TEST(GuardGraphs, PredictAndDagRefuseAGraphPastTheActivityLimit) {
  // 1,024 workers x 10^6 iterations: billions of tasks at fidelity analytic.
  CliResult r = run_sgdsim(big_scenario("predict", 1000000));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(kScenario), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the limit of 1e+09"), std::string::npos) << r.err;
  // dag builds only --iterations K of them: 10^6 iterations asked are refused, the default two
  // are not.
  std::vector<std::string> dag = big_scenario("dag", 1000000);
  dag.insert(dag.end(), {"--format", "json", "--iterations", "1000000"});
  r = run_sgdsim(dag);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("more than the limit of 1e+09"), std::string::npos) << r.err;
  // --force: predict starts (and the time limit stops it, after the warning).
  std::vector<std::string> forced = big_scenario("predict", 1000000);
  forced.push_back("--force");
  r = with_limit(forced, "0.5");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("sgdsim: warning: large run"), std::string::npos) << r.err;
}
