// End-to-end behaviour of sgdsim run / predict / dag / platform.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <random>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json run_summary(const std::vector<std::string>& extra, fs::path* out_dir = nullptr) {
  fs::path out = temp_path("run");
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--out");
  args.push_back(out.string());
  args.push_back("--quiet");
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json s = json::parse(slurp(out / "summary.json"));
  if (out_dir != nullptr)
    *out_dir = out;
  else
    fs::remove_all(out);
  return s;
}

double predicted(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"predict"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--json");
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["iteration_time_s"].get<double>();
}

}  // namespace

class PredictVsRun : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(PredictVsRun, AgreeOnIdealStar) {
  auto [overlap, model] = GetParam();
  std::vector<std::string> args = {kIdealStar, "--set", "scheme.overlap=" + overlap, "--set",
                                   "model=" + model};
  double sim = run_summary(args)["iteration_time_s"]["mean"];
  double pred = predicted(args);
  EXPECT_NEAR(sim, pred, 1e-3 * pred) << overlap << " " << model;
}

INSTANTIATE_TEST_SUITE_P(OverlapModes, PredictVsRun,
                         ::testing::Combine(::testing::Values("wfbp", "none"),
                                            ::testing::Values("resnet50", "vgg16", "googlenet")));

TEST(Run, WfbpIsNeverSlowerThanNoOverlap) {
  for (const char* model : {"resnet50", "vgg16", "alexnet", "inception_v3", "googlenet"}) {
    for (const char* fusion : {"0", "\"25MB\""}) {
      std::vector<std::string> a = {kIdealStar, "--set", std::string("model=") + model, "--set",
                                    std::string("scheme.fusion_bytes=") + fusion};
      auto with = [&](const char* overlap) {
        auto args = a;
        args.push_back("--set");
        args.push_back(std::string("scheme.overlap=") + overlap);
        return run_summary(args)["iteration_time_s"]["mean"].get<double>();
      };
      double wfbp = with("wfbp"), none = with("none");
      EXPECT_LE(wfbp, none * (1 + 1e-12)) << model << " fusion " << fusion;
      // Each of these has a backward pass longer than one bucket's allreduce: WFBP must win.
      EXPECT_LT(wfbp, none * 0.999) << model << " fusion " << fusion;
    }
  }
}

TEST(Run, WritesEveryOutputAndAReadableTimeline) {
  fs::path out;
  json s = run_summary({kIdealStar}, &out);
  for (const char* f :
       {"summary.json", "iterations.csv", "timeline.json", "scenario.resolved.json"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  for (const char* key : {"scenario", "scheme", "workers", "iterations", "simulated_time_s",
                          "throughput_samples_per_s", "compute_s_per_iter", "comm_s_per_iter",
                          "exposed_comm_s_per_iter", "activities", "wall_time_s", "sgdsim_version"})
    EXPECT_TRUE(s.contains(key)) << key;
  json tl = json::parse(slurp(out / "timeline.json"));
  int compute = 0, comm = 0;
  std::set<int> pids;
  for (const auto& e : tl["traceEvents"]) {
    if (e["ph"] != "X") continue;
    pids.insert(e["pid"].get<int>());
    (e["tid"] == 0 ? compute : comm)++;
  }
  EXPECT_EQ(static_cast<int>(pids.size()), s["workers"].get<int>());
  EXPECT_GT(compute, 0);
  EXPECT_GT(comm, 0);
  // One CSV row per worker and iteration.
  EXPECT_EQ(count_lines(slurp(out / "iterations.csv")),
            1 + s["workers"].get<int>() * s["iterations"].get<int>());
  // The resolved scenario runs to the same result.
  json again = run_summary({(out / "scenario.resolved.json").string()});
  EXPECT_EQ(again["iteration_time_s"], s["iteration_time_s"]);
  fs::remove_all(out);
}

TEST(Run, SameSeedGivesIdenticalOutputs) {
  const std::string scenario = "experiments/examples/06-stragglers-and-jitter.json";
  fs::path a, b;
  json sa = run_summary({scenario}, &a), sb = run_summary({scenario}, &b);
  EXPECT_EQ(slurp(a / "iterations.csv"), slurp(b / "iterations.csv"));
  EXPECT_EQ(slurp(a / "timeline.json"), slurp(b / "timeline.json"));
  sa.erase("wall_time_s");
  sb.erase("wall_time_s");
  EXPECT_EQ(sa.dump(), sb.dump());
  // A different seed changes the jittered timeline.
  fs::path c;
  run_summary({scenario, "--set", "seed=8"}, &c);
  EXPECT_NE(slurp(a / "iterations.csv"), slurp(c / "iterations.csv"));
  for (auto& d : {a, b, c}) fs::remove_all(d);
}

TEST(Run, MemoryDoesNotGrowWithIterations) {
  if (sgdsim_sanitized())
    GTEST_SKIP() << "ASan's quarantine holds freed memory, so peak RSS is not the program's";
  auto rss = [](int iterations) {
    fs::path out = temp_path("rss");
    CliResult r =
        run_sgdsim({"run", kIdealStar, "--set", "workers.count=16", "--set",
                    "platform.generate.nodes=16", "--set", "model=mlp", "--set",
                    "iterations=" + std::to_string(iterations), "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    fs::remove_all(out);
    return r.max_rss_kb;
  };
  long small = rss(200), large = rss(2000);
  EXPECT_LE(large, small * 1.15) << "200 iterations: " << small << " kB, 2000: " << large << " kB";
}

TEST(Dag, JsonAndDotExports) {
  CliResult r = run_sgdsim({"dag", kIdealStar, "--iterations", "2", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json g = json::parse(r.out);
  EXPECT_GT(g["tasks"].size(), 0u);
  int iter1 = 0;
  for (const auto& t : g["tasks"]) iter1 += t["iteration"] == 1;
  EXPECT_EQ(iter1 * 2, static_cast<int>(g["tasks"].size()));
  CliResult dot = run_sgdsim({"dag", kIdealStar});
  EXPECT_EQ(dot.exit_code, 0);
  EXPECT_EQ(dot.out.rfind("digraph", 0), 0u);
}

TEST(Platform, WritesLoadableXml) {
  fs::path xml = temp_path("platform.xml");
  CliResult r =
      run_sgdsim({"platform", "--topology", "fat_tree", "--nodes", "8", "--devices-per-node", "2",
                  "--nodes-per-leaf", "4", "--output", xml.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult c = run_sgdsim(
      {"collective", "--ranks", "16", "--bytes", "1MB", "--platform", xml.string(), "--json"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  fs::remove(xml);
}

TEST(Cli, HelpAndUsage) {
  for (const char* cmd : {"run", "predict", "dag", "collective", "platform"}) {
    CliResult r = run_sgdsim({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("usage: sgdsim"), std::string::npos) << cmd;
  }
  EXPECT_EQ(run_sgdsim({}).exit_code, 2);
  EXPECT_EQ(run_sgdsim({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_sgdsim({"run"}).exit_code, 2);
}

namespace {

/// Starts `sgdsim run ARGS --out OUT --quiet`, sends `sig` after `delay_us` microseconds and
/// returns the wait status.
int interrupted_run(const std::vector<std::string>& args, const fs::path& out, int sig,
                    long delay_us) {
  std::vector<std::string> argv = {sgdsim_binary(), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--out", out.string(), "--quiet"});
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    _exit(127);
  }
  ::usleep(static_cast<useconds_t>(delay_us));
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

/// The crash-safety promise on an output folder: no temporary file, and every result file
/// that exists is complete (JSON parses, CSVs end with a full line).
void expect_no_partial_file(const fs::path& out, const std::string& context) {
  if (!fs::exists(out)) return;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << context << ": temporary file " << name;
    if (name.find(".tmp") != std::string::npos) continue;
    const std::string text = slurp(e.path());
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
      json j;
      EXPECT_NO_THROW(j = json::parse(text)) << context << ": " << name << " is not whole JSON";
      if (name == "summary.json") {
        EXPECT_TRUE(j.contains("activities")) << context;
      }
    } else {
      EXPECT_TRUE(!text.empty() && text.back() == '\n') << context << ": " << name << " cut";
    }
  }
}

}  // namespace

TEST(Run, InterruptLeavesNoPartialFile) {
  for (int sig : {SIGINT, SIGTERM}) {
    fs::path out = temp_path("interrupt");
    // 1.5 s is well inside the run: its streamed outputs are open.
    int status = interrupted_run(
        {"experiments/examples/01-resnet50-sync-fat-tree.json", "--set", "iterations=5000"}, out,
        sig, 1500 * 1000);
    EXPECT_TRUE(WIFEXITED(status)) << "killed by a signal instead of cleaning up";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    int files = 0;
    if (fs::exists(out))
      for (const auto& e : fs::directory_iterator(out)) files += e.is_regular_file();
    EXPECT_EQ(files, 0) << "signal " << sig;
    fs::remove_all(out);
  }
}

TEST(Run, InterruptAtRandomMomentsLeavesNoPartialFile) {
  // A short run writing every output (timeline, convergence.csv); SIGINT and SIGTERM at seeded
  // random moments from its start to past its end, so some land while files are committed.
  const std::vector<std::string> args = {
      "tests/data/ideal-star.json", "--set", "iterations=30", "--set",
      R"(training={"dataset": "synthetic", "eval_every": 5, "model": {"type": "mlp", "hidden": [8]}})"};
  fs::path reference = temp_path("interrupt-reference");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> full = {"run"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(), {"--out", reference.string(), "--quiet"});
  CliResult r = run_sgdsim(full);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double run_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  expect_no_partial_file(reference, "uninterrupted");
  fs::remove_all(reference);

  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> moment(0.0, 1.2 * run_us);
  int interrupted = 0;
  // Ten moments, and more (up to 30) while fewer than 3 landed inside a run: under load the
  // runs' length varies, and the reference run's may overstate it.
  for (int k = 0; k < 30 && (k < 10 || interrupted < 3); ++k) {
    const int sig = k % 2 == 0 ? SIGINT : SIGTERM;
    const long delay = static_cast<long>(moment(rng));
    fs::path out = temp_path("interrupt-random");
    const int status = interrupted_run(args, out, sig, delay);
    const std::string context = fmt::format("signal {} after {} us", sig, delay);
    // Finished first (0), cleaned up (128 + signal), or hit before main installed its handlers.
    const bool cleaned = WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig;
    EXPECT_TRUE((WIFEXITED(status) && WEXITSTATUS(status) == 0) || cleaned ||
                (WIFSIGNALED(status) && WTERMSIG(status) == sig))
        << context << ": status " << status;
    interrupted += cleaned;
    expect_no_partial_file(out, context);
    fs::remove_all(out);
  }
  EXPECT_GE(interrupted, 3) << "too few signals landed inside the run to test anything";
}

// sgdsim schema: a JSON Schema, the field tables of docs/fields.md, and one clear line for bad
// options.
TEST(Schema, PrintsTheSchemaAndTablesAndRejectsBadOptions) {
  CliResult r = run_sgdsim({"schema"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json schema = json::parse(r.out);
  EXPECT_EQ(schema["properties"]["scheme"]["properties"]["type"]["default"], "sync");
  EXPECT_FALSE(schema["properties"]["scheme"]["additionalProperties"].get<bool>());
  CliResult table = run_sgdsim({"schema", "--markdown", "training"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("| field | default | meaning |\n", 0), 0u) << table.out;
  for (const auto& [args, message] :
       {std::pair<std::vector<std::string>, std::string>{
            {"schema", "--markdown", "bogus"}, "--markdown: expected scenario or training"},
        {{"schema", "extra"}, "sgdsim schema takes no positional argument"}}) {
    CliResult bad = run_sgdsim(args);
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
  }
}

// Gradient accumulation (scheme.accumulation_steps, sync): each micro-batch's forward and
// backward repeats, the exchange of the last one's gradients does not; throughput counts every
// micro-batch; analytic fidelity gives flow's iteration times.
TEST(Accumulation, RepeatsTheComputeNotTheExchange) {
  const json one = run_on_ideal_star({"iterations=4"});
  ASSERT_GT(one["exposed_comm_s_per_iter"].get<double>(), 0.01);  // the exchange shows
  for (const std::string fidelity : {"flow", "analytic"}) {
    const json four =
        run_on_ideal_star({"iterations=4", "scheme.accumulation_steps=4", "fidelity=" + fidelity});
    const double c1 = one["compute_s_per_iter"], c4 = four["compute_s_per_iter"];
    const double t1 = one["iteration_time_s"]["mean"], t4 = four["iteration_time_s"]["mean"];
    EXPECT_NEAR(c4, 4 * c1, 1e-9) << fidelity;
    EXPECT_NEAR(four["comm_s_per_iter"].get<double>(), one["comm_s_per_iter"].get<double>(), 1e-9);
    EXPECT_NEAR(four["exposed_comm_s_per_iter"].get<double>(),
                one["exposed_comm_s_per_iter"].get<double>(), 1e-9)
        << fidelity;
    EXPECT_NEAR(t4 - t1, 3 * c1, 1e-9) << fidelity;
    EXPECT_NEAR(four["throughput_samples_per_s"].get<double>(), 8 * 4 * 32 / t4, 1e-6) << fidelity;
  }
}
