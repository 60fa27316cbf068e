// The guards of `sgdsim run`: the resource estimate (checked against the schedules and against
// summary.json's activities), its limits (refuse, warn, --force) and --time-limit.
#include "sim/app/guards.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"
#include "sim/core/errors.hpp"
#include "sim/workload/workload.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A folder with `scenario.json` holding `scenario`; returns the scenario path.
fs::path write_scenario(const json& scenario, const std::string& tag) {
  fs::path dir = temp_path(tag);
  fs::create_directories(dir);
  std::ofstream(dir / "scenario.json") << scenario.dump(2);
  return dir / "scenario.json";
}

/// 256 MLP workers on a star: one bucket, a 130,560-message ring per iteration at flow fidelity.
json ring_256(int iterations) {
  return {{"model", "mlp"},
          {"workers", {{"count", 256}}},
          {"iterations", iterations},
          {"warmup_iterations", 1},
          {"output", {{"timeline", false}}}};
}

bool has_temp_file(const fs::path& dir) {
  if (!fs::exists(dir)) return false;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(ResourceGuard, MessageCountsMatchTheSchedules) {
  for (const std::string algorithm : {"ring", "recursive_halving_doubling", "recursive_doubling",
                                      "tree", "hierarchical", "ps", "auto", "double_binary_tree"})
    for (int p : {1, 2, 3, 5, 8, 12, 37, 64}) {
      for (double bytes : {1024.0, 1e6, 1e8}) {
        sgdsim::CollectiveGroup g{p, algorithm == "hierarchical" ? 4 : 1, algorithm == "ps" ? 2 : 0,
                                  "ring"};
        const double steps = static_cast<double>(
            sgdsim::collective_by_name(algorithm).schedule(g, bytes).steps.size());
        const double estimate = sgdsim::collective_messages(algorithm, g, bytes);
        // Exact but for self-messages (ps) that the schedules leave out.
        EXPECT_GE(estimate, steps) << algorithm << " p=" << p << " bytes=" << bytes;
        EXPECT_LE(estimate, steps + 2 * p) << algorithm << " p=" << p << " bytes=" << bytes;
      }
    }
}

TEST(ResourceGuard, IntraRingMessageCountsMatchTheSchedules) {
  for (int p : {4, 8, 12, 64})
    for (const char* among : {"ring", "double_binary_tree", "recursive_doubling"}) {
      sgdsim::CollectiveGroup g{p, 4, 0, among};
      g.intra_algorithm = "ring";
      g.chunk_bytes = 65536;
      const double steps = static_cast<double>(
          sgdsim::collective_by_name("hierarchical").schedule(g, 1e7).steps.size());
      EXPECT_EQ(sgdsim::collective_messages("hierarchical", g, 1e7), steps) << p << among;
    }
}

TEST(ResourceGuard, PipelinedMessageCountsMatchTheSchedules) {
  for (const std::string algorithm : {"ring", "double_binary_tree", "hierarchical", "nccl"})
    for (const char* intra : {"binomial", "chain"})
      for (int p : {2, 5, 12, 37})
        for (double bytes : {1024.0, 1e6, 1e8}) {
          sgdsim::CollectiveGroup g{p, algorithm == "hierarchical" || algorithm == "nccl" ? 4 : 1,
                                    0, "double_binary_tree"};
          g.chunk_bytes = 65536;
          g.channels = 2;
          g.intra_algorithm = intra;
          const sgdsim::AlphaBeta ab{1e-6, 1e-10, 0};
          g.tuning_cost = sgdsim::NetworkCost{ab, ab};
          const double steps = static_cast<double>(
              sgdsim::collective_by_name(algorithm).schedule(g, bytes).steps.size());
          const double estimate = sgdsim::collective_messages(algorithm, g, bytes);
          const std::string what = algorithm + " " + intra + " p=" + std::to_string(p);
          if (algorithm == "nccl")  // an upper bound: the larger candidate
            EXPECT_GE(estimate, steps) << what;
          else
            EXPECT_EQ(estimate, steps) << what << " bytes=" << bytes;
        }
}

TEST(ResourceGuard, EstimateMatchesTheActivitiesOfRuns) {
  const std::vector<std::pair<std::string, json>> variants = {
      {"sync ring", json::object()},
      {"pseudo_sync rhd",
       {{"scheme", {{"type", "pseudo_sync"}}}, {"collective", {{"algorithm", "rhd"}}}}},
      {"local_sgd tree",
       {{"scheme", {{"type", "local_sgd"}, {"period", 2}}},
        {"collective", {{"algorithm", "tree"}}}}},
      {"analytic", {{"fidelity", "analytic"}}},
      {"async", {{"scheme", {{"type", "async"}, {"servers", 2}}}}},
      {"sync, 4 micro-batches", {{"scheme", {{"accumulation_steps", 4}}}}},
      {"pseudo_sync, 3 micro-batches",
       {{"scheme", {{"type", "pseudo_sync"}, {"accumulation_steps", 3}}}}},
  };
  for (const auto& [what, patch] : variants) {
    json s = {{"model", "resnet50"},
              {"workers", {{"count", 8}}},
              {"iterations", 6},
              {"warmup_iterations", 1},
              {"output", {{"timeline", false}}}};
    s.merge_patch(patch);
    fs::path file = write_scenario(s, "estimate");
    const sgdsim::Scenario sc = sgdsim::load_scenario(file.string());
    const sgdsim::RunEstimate e = sgdsim::estimate_run(sc, sgdsim::load_workload(sc));
    fs::path out = file.parent_path() / "out";
    CliResult r = run_sgdsim({"run", file.string(), "--out", out.string(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
    const double activities = json::parse(slurp(out / "summary.json"))["activities"];
    // An upper bound that stays close: skipped zero-time tasks and self-messages aside.
    EXPECT_GE(e.activities, activities) << what;
    EXPECT_LE(e.activities, 1.3 * activities) << what;
    fs::remove_all(file.parent_path());
  }
}

TEST(ResourceGuard, RefusesARunOfBillionsOfActivitiesWithOneLineAndNoOutput) {
  // 256 workers x 2 million iterations of a 130,560-message ring: about 2.6e11 activities.
  fs::path file = write_scenario(ring_256(2'000'000), "guard-refuse");
  fs::path out = file.parent_path() / "out";
  CliResult r = run_sgdsim({"run", file.string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(file.string() + ": this run would simulate about 2.6e+11 SimGrid "
                                       "activities"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\"fidelity\": \"analytic\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(file.parent_path());
}

TEST(ResourceGuard, RefusesARunNeedingMoreMemoryThanAvailable) {
  // One iteration of a 16,384-worker flow ring: 5.4e8 messages (under the activity limit) whose
  // schedule needs tens of GiB.
  json s = ring_256(2);
  s["workers"]["count"] = 16384;
  s["iterations"] = 1;
  s["warmup_iterations"] = 0;
  fs::path file = write_scenario(s, "guard-memory");
  const sgdsim::Scenario sc = sgdsim::load_scenario(file.string());
  const sgdsim::RunEstimate e = sgdsim::estimate_run(sc, sgdsim::load_workload(sc));
  EXPECT_LT(e.activities, 1e9);
  EXPECT_GT(e.memory_bytes, 5.4e8 * 64);
  sgdsim::GuardLimits limits;
  limits.available_bytes = 8e9;
  try {
    sgdsim::check_run_resources(sc, e, limits, false);
    ADD_FAILURE() << "not refused";
  } catch (const sgdsim::InputError& err) {
    EXPECT_NE(std::string(err.what()).find("this run would need about "), std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what())
                  .find("of memory (16384 workers, 1 iterations, flow "
                        "fidelity, ring allreduce of 5.37e+08 messages), "
                        "more than the 7.5 GiB available"),
              std::string::npos)
        << err.what();
  }
  EXPECT_NE(sgdsim::check_run_resources(sc, e, limits, true), "") << "--force: a warning";
  // The same through the CLI, when this machine has less memory than the estimate.
  if (sgdsim::default_guard_limits().available_bytes < e.memory_bytes) {
    fs::path out = file.parent_path() / "out";
    CliResult r = run_sgdsim({"run", file.string(), "--out", out.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("(MemAvailable, /proc/meminfo)"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  fs::remove_all(file.parent_path());
}

TEST(ResourceGuard, AnalyticFidelityOfTheSameRunIsAccepted) {
  json s = ring_256(3);
  s["workers"]["count"] = 131072;
  s["fidelity"] = "analytic";
  fs::path file = write_scenario(s, "guard-analytic");
  const sgdsim::Scenario sc = sgdsim::load_scenario(file.string());
  const sgdsim::RunEstimate e = sgdsim::estimate_run(sc, sgdsim::load_workload(sc));
  sgdsim::GuardLimits limits;
  limits.available_bytes = 8e9;
  EXPECT_EQ(sgdsim::check_run_resources(sc, e, limits, false), "");
  EXPECT_LT(e.activities, 1e7);
  fs::remove_all(file.parent_path());
}

TEST(ResourceGuard, WarnsAboutALargeRunAndForceRunsARefusedOne) {
  // 2,000 iterations: about 2.6e8 activities, above the warning threshold (1e8).
  fs::path file = write_scenario(ring_256(2000), "guard-warn");
  fs::path out = file.parent_path() / "out";
  CliResult r =
      run_sgdsim({"run", file.string(), "--out", out.string(), "--time-limit", "1", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("sgdsim: warning: large run: about 2.6e+08 SimGrid activities"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(has_temp_file(out));
  // --force: the refused run starts (and the time limit stops it).
  fs::path big = write_scenario(ring_256(2'000'000), "guard-force");
  r = run_sgdsim({"run", big.string(), "--out", out.string(), "--force", "--time-limit", "1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("sgdsim: warning: large run"), std::string::npos) << r.err;
  EXPECT_FALSE(has_temp_file(out));
  fs::remove_all(file.parent_path());
  fs::remove_all(big.parent_path());
}

TEST(TimeLimit, StopsARunCleanlyWithExitCodeThree) {
  const std::string scenario = "experiments/examples/01-resnet50-sync-fat-tree.json";
  // A fresh output folder is removed again; an existing one keeps what it held, nothing more.
  fs::path fresh = temp_path("limit-fresh");
  // 3,000 iterations: long enough, and under the guard's warning threshold (one stderr line).
  CliResult r = run_sgdsim({"run", scenario, "--set", "iterations=3000", "--out", fresh.string(),
                            "--time-limit", "1.5", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--time-limit reached"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh)) << "the run's own empty output folder was left behind";

  fs::path existing = temp_path("limit-existing");
  fs::create_directories(existing);
  std::ofstream(existing / "notes.txt") << "mine\n";
  // notes.txt is foreign: --overwrite lets the run in, and the stopped run leaves only it.
  r = run_sgdsim({"run", scenario, "--set", "iterations=3000", "--out", existing.string(),
                  "--time-limit", "1s", "--quiet", "--overwrite"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(existing)) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"notes.txt"});
  fs::remove_all(existing);
}

TEST(TimeLimit, LeavesAQuickRunAloneAndRejectsBadValues) {
  fs::path out = temp_path("limit-quick");
  CliResult r = run_sgdsim({"run", "tests/data/ideal-star.json", "--out", out.string(),
                            "--time-limit", "10min", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  fs::remove_all(out);
  for (const std::string bad : {"0", "-5", "abc", "5 s", "inf", ""}) {
    CliResult b = run_sgdsim(
        {"run", "tests/data/ideal-star.json", "--out", out.string(), "--time-limit", bad});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(count_lines(b.err), 1) << b.err;
    EXPECT_NE(b.err.find("--time-limit: expected a time > 0"), std::string::npos) << b.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

TEST(ResourceGuard, AnalyticAdviceFitsTheTimeAndMemoryItQuotes) {
  // ResNet-50 on 16,384 workers at flow fidelity: refused (rings of 5.4e8 messages); the
  // advice quotes the analytic run's estimate, and that run stays within it.
  json s = {{"model", "resnet50"},
            {"workers", {{"count", 16384}}},
            {"iterations", 5},
            {"warmup_iterations", 1},
            {"output", {{"timeline", false}}}};
  fs::path file = write_scenario(s, "guard-advice");
  const sgdsim::Scenario sc = sgdsim::load_scenario(file.string());
  const sgdsim::RunEstimate e = sgdsim::estimate_run(sc, sgdsim::load_workload(sc));
  ASSERT_TRUE(e.as_analytic);
  const sgdsim::RunEstimate& a = *e.as_analytic;
  fs::path out = file.parent_path() / "out";
  CliResult r = run_sgdsim({"run", file.string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("use \"fidelity\": \"analytic\" (one activity per collective: about "),
            std::string::npos)
      << r.err;
  const auto t0 = std::chrono::steady_clock::now();
  r = run_sgdsim(
      {"run", file.string(), "--out", out.string(), "--quiet", "--set", "fidelity=analytic"});
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Wall time is the bench's to report (make bench), not a test's to assert: it is printed only.
  std::cout << "analytic run: " << wall_s << " s, estimate " << a.time_low_s << " s to "
            << a.time_high_s << " s\n";
  // AddressSanitizer's shadow memory and quarantine double the footprint; the estimate is for
  // the release build.
  if (!sgdsim_sanitized()) {
    EXPECT_LE(static_cast<double>(r.max_rss_kb) * 1024, a.memory_bytes);
  }
  const double activities = json::parse(slurp(out / "summary.json"))["activities"];
  EXPECT_GE(a.activities, activities);
  fs::remove_all(file.parent_path());
}

TEST(HugePages, TunablesAskForThemOnceAndNotUnderAPreload) {
  EXPECT_EQ(sgdsim::huge_page_tunables(nullptr, false), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(sgdsim::huge_page_tunables("", false), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(sgdsim::huge_page_tunables("glibc.malloc.arena_max=2", false),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // Set already (by the user, or by the restart itself): no restart.
  EXPECT_EQ(sgdsim::huge_page_tunables("glibc.malloc.hugetlb=1", false), "");
  EXPECT_EQ(sgdsim::huge_page_tunables("glibc.malloc.hugetlb=0", false), "");
  // A preloaded tool (valgrind) would lose the restarted process.
  EXPECT_EQ(sgdsim::huge_page_tunables(nullptr, true), "");
}

TEST(HugePages, ARestartedRunWritesWhatARunWithoutRestartWrites) {
  // Large enough to restart (its --set options must survive the restart), small enough to run in
  // seconds; the second run does not restart (hugetlb already set, to 0).
  const std::vector<std::string> sets = {
      "--set", "workers.count=17000", "--set", "iterations=100",       "--set", "fidelity=analytic",
      "--set", "network_model=ideal", "--set", "output.timeline=false"};
  json s = {{"model", "resnet50"}, {"workers", {{"count", 8}}}};
  fs::path file = write_scenario(s, "huge-pages");
  sgdsim::Scenario sc = sgdsim::load_scenario(file.string());
  sc.workers = 17000;
  sc.iterations = 100;
  sc.fidelity = sgdsim::Fidelity::analytic;
  ASSERT_GE(sgdsim::estimate_run(sc, sgdsim::load_workload(sc)).activities,
            sgdsim::kHugePageActivities);
  std::vector<fs::path> outs;
  for (const char* tunables : {"", "glibc.malloc.hugetlb=0"}) {
    if (*tunables != '\0') ::setenv("GLIBC_TUNABLES", tunables, 1);
    outs.push_back(file.parent_path() / (*tunables != '\0' ? "kept" : "restarted"));
    std::vector<std::string> args = {"run", file.string(), "--out", outs.back().string(),
                                     "--quiet"};
    args.insert(args.end(), sets.begin(), sets.end());
    CliResult r = run_sgdsim(args);
    ::unsetenv("GLIBC_TUNABLES");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(slurp(outs[0] / "iterations.csv"), slurp(outs[1] / "iterations.csv"));
  json a = json::parse(slurp(outs[0] / "summary.json"));
  json b = json::parse(slurp(outs[1] / "summary.json"));
  EXPECT_EQ(a["workers"], 17000);
  a.erase("wall_time_s");
  b.erase("wall_time_s");
  EXPECT_EQ(a, b);
  fs::remove_all(file.parent_path());
}
