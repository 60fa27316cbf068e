// Inputs that used to crash or mislead (issue 15): broken platform files and SimGrid options
// exit 2 with one line and leave nothing behind; --cfg is recorded so a resolved scenario
// reruns identically; a reused output folder keeps no output of an earlier run; timeline
// slices on one track never overlap; output folders carry a manifest, and foreign folders are
// refused; SimGrid dying in mid-run (fault injection) is one line, exit 2, nothing left.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Files under `dir` whose name holds ".tmp-" (left by an interrupted atomic write).
int temporary_files(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST(Hardening, BrokenPlatformRoutesAreInputErrorsInRunAndCollective) {
  for (const std::string name : {"zone-route-missing", "host-route-missing"}) {
    const fs::path out = temp_path("hardening-platform");
    CliResult r = run_sgdsim(
        {"run", "tests/bad_inputs/platform-" + name + ".json", "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("route from host"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << name;
    CliResult c =
        run_sgdsim({"collective", "--platform", "tests/bad_inputs/platform-" + name + ".xml",
                    "--ranks", "8", "--bytes", "1MB"});
    EXPECT_EQ(c.exit_code, 2) << name << ": " << c.err;
    EXPECT_EQ(count_lines(c.err), 1) << c.err;
    EXPECT_NE(c.err.find("platform-" + name + ".xml"), std::string::npos) << c.err;
  }
  EXPECT_EQ(temporary_files("tests/bad_inputs"), 0);
}

TEST(Hardening, CfgIsRecordedAndTheResolvedScenarioRerunsByteIdentically) {
  const fs::path a = temp_path("hardening-cfg-a"), b = temp_path("hardening-cfg-b"),
                 plain = temp_path("hardening-cfg-plain");
  const std::vector<std::string> lv08 = {"--set", "network_model=default", "--quiet"};
  std::vector<std::string> args = {"run",      kBadInputBase, "--out",
                                   a.string(), "--cfg",       "network/model:CM02"};
  args.insert(args.end(), lv08.begin(), lv08.end());
  ASSERT_EQ(run_sgdsim(args).exit_code, 0);
  const json resolved = json::parse(slurp(a / "scenario.resolved.json"));
  EXPECT_EQ(resolved["simgrid_cfg"], json::array({"network/model:CM02"}));
  ASSERT_EQ(
      run_sgdsim({"run", (a / "scenario.resolved.json").string(), "--out", b.string(), "--quiet"})
          .exit_code,
      0);
  EXPECT_EQ(slurp(a / "iterations.csv"), slurp(b / "iterations.csv"));
  // The option matters (else the test proves nothing): LV08 without it differs.
  args = {"run", kBadInputBase, "--out", plain.string()};
  args.insert(args.end(), lv08.begin(), lv08.end());
  ASSERT_EQ(run_sgdsim(args).exit_code, 0);
  EXPECT_NE(slurp(a / "iterations.csv"), slurp(plain / "iterations.csv"));
  for (const auto& d : {a, b, plain}) fs::remove_all(d);
}

TEST(Hardening, AReusedOutputFolderKeepsNoTimelineOfAnEarlierRun) {
  const fs::path out = temp_path("hardening-reuse");
  ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
  ASSERT_TRUE(fs::exists(out / "timeline.json"));
  ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet", "--set",
                        "output.timeline=false"})
                .exit_code,
            0);
  EXPECT_FALSE(fs::exists(out / "timeline.json"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  fs::remove_all(out);
}

TEST(Hardening, AnUnwritableOutputFolderIsAnInputErrorNamingThePath) {
  // /proc/self exists and is a folder, but no one (not even root) may create files in it.
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", "/proc/self", "--quiet", "--overwrite"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/proc/self/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot write output file"), std::string::npos) << r.err;
}

TEST(Hardening, SweepCfgReachesEveryRunsResolvedScenario) {
  const fs::path out = temp_path("hardening-sweep");
  CliResult r = run_sgdsim({"sweep", "tests/bad_inputs/sweeps/one-run.json", "--out", out.string(),
                            "-j", "1", "--quiet", "--cfg", "network/crosstraffic:0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json resolved =
      json::parse(slurp(out / "runs" / "batch_size=8" / "scenario.resolved.json"));
  EXPECT_EQ(resolved["simgrid_cfg"], json::array({"network/crosstraffic:0"}));
  fs::remove_all(out);
}

TEST(Hardening, AsyncTimelineWithSixteenShardsHasNoOverlappingSlices) {
  // 16 workers push to and pull from 16 shards at once, and each server applies gradients of
  // several workers: one track per concurrent stream keeps every track's slices apart.
  const fs::path out = temp_path("hardening-async16");
  CliResult r = run_sgdsim({"run", "experiments/examples/12-async-parameter-server.json", "--out",
                            out.string(), "--quiet", "--set", "workers.count=16", "--set",
                            "platform.generate.nodes=16", "--set", "scheme.servers=16", "--set",
                            "iterations=4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(overlapping_slices(out / "timeline.json"), 0);
  // More than the three base tracks per worker: the concurrent streams got tracks of their own.
  const json trace = json::parse(slurp(out / "timeline.json"));
  int extra_tracks = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("name", "") == "thread_name" && e["tid"].get<int>() >= 1000) ++extra_tracks;
  EXPECT_GT(extra_tracks, 0);
  fs::remove_all(out);
}

TEST(Hardening, SweepRunTimeLimitFailsTheLongRunAndRecordsWhy) {
  const fs::path dir = temp_path("hardening-sweep-limit");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "long.json");
    f << json{{"base", (fs::path(SGDSIM_SOURCE_DIR) / kBadInputBase).string()},
              {"grid", {{"iterations", {20000}}}}}
             .dump();
  }
  CliResult r = run_sgdsim({"sweep", (dir / "long.json").string(), "--out", (dir / "out").string(),
                            "-j", "1", "--quiet", "--run-time-limit", "0.2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // a failed run, not a failed sweep
  const json line = json::parse(slurp(dir / "out" / "results.jsonl"));
  EXPECT_EQ(line["status"], "failed");
  EXPECT_NE(line["error"].get<std::string>().find("--time-limit reached"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Hardening, ProgressLinesOffATerminalAndNoneWithNever) {
  // The tests' stderr is a pipe, not a terminal: "auto" prints a line every --progress-every.
  const fs::path out = temp_path("hardening-progress");
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet", "--set",
                            "iterations=2000", "--progress-every", "0.01"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(count_lines(r.err), 1);
  EXPECT_EQ(r.err.rfind("sgdsim: iteration ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << r.err;
  r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet", "--set",
                  "iterations=2000", "--progress-every", "0.01", "--progress", "never"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  fs::remove_all(out);
}

namespace {

/// The folder's entries and their contents, to show a refused command changed nothing.
std::map<std::string, std::string> folder_contents(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return m;
}

}  // namespace

TEST(OutputFolders, ARunListsItsFilesAndARerunReplacesThem) {
  const fs::path out = temp_path("folders-manifest");
  ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
  const std::string manifest = slurp(out / ".sgdsim-manifest");
  for (const char* f :
       {"iterations.csv", "scenario.resolved.json", "summary.json", "timeline.json"})
    EXPECT_NE(manifest.find(std::string("run\t") + f + "\n"), std::string::npos) << manifest;
  // Everything in the folder is in the manifest, so the same folder is accepted again.
  CliResult r = run_sgdsim(
      {"run", kBadInputBase, "--out", out.string(), "--quiet", "--set", "output.timeline=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / "timeline.json"));
  EXPECT_EQ(slurp(out / ".sgdsim-manifest").find("timeline.json"), std::string::npos);
  fs::remove_all(out);
}

TEST(OutputFolders, AFolderWithForeignFilesIsRefusedUnlessOverwrite) {
  const fs::path out = temp_path("folders-foreign");
  fs::create_directories(out);
  write_text(out / "notes.txt", "mine\n");
  write_text(out / "summary.json", "{}\n");  // an sgdsim name, but in no manifest
  const auto before = folder_contents(out);
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("notes.txt, summary.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(folder_contents(out), before);
  r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet", "--overwrite"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(out / "notes.txt"), "mine\n");  // foreign files are kept
  EXPECT_NE(slurp(out / "summary.json"), "{}\n");
  // notes.txt is still foreign: without --overwrite the folder is refused again.
  EXPECT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 2);
  fs::remove_all(out);
}

TEST(OutputFolders, SweepFoldersAndRunFoldersAreChecked) {
  const fs::path out = temp_path("folders-sweep");
  const std::vector<std::string> sweep = {
      "sweep", "tests/bad_inputs/sweeps/one-run.json", "--out", out.string(), "-j", "1", "--quiet"};
  ASSERT_EQ(run_sgdsim(sweep).exit_code, 0);
  EXPECT_TRUE(fs::exists(out / ".sgdsim-manifest"));
  const fs::path run = out / "runs" / "batch_size=8";
  const std::string manifest = slurp(run / ".sgdsim-manifest");
  EXPECT_NE(manifest.find("sweep\tsweep.log\n"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("run\tsummary.json\n"), std::string::npos) << manifest;
  // Resuming reruns a run whose summary is gone; a foreign file in its folder stops the sweep.
  fs::remove(run / "summary.json");
  write_text(run / "plot.png", "x");
  CliResult r = run_sgdsim(sweep);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("plot.png"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(run / "summary.json"));
  std::vector<std::string> overwrite = sweep;
  overwrite.push_back("--overwrite");
  r = run_sgdsim(overwrite);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(run / "summary.json"));
  EXPECT_TRUE(fs::exists(run / "plot.png"));
  // The sweep's own folder is checked too.
  write_text(out / "README", "x");
  r = run_sgdsim(sweep);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("README"), std::string::npos) << r.err;
  fs::remove_all(out);
}

TEST(Fault, SimGridDyingInMidRunIsOneLineExitTwoAndLeavesNothing) {
  // The shim makes SimGrid die on the 50th clock read, well inside the simulation (the base
  // scenario reads the clock thousands of times), with each way SimGrid 3.32 ends a process.
  const fs::path tmp = temp_path("fault-tmpdir");
  fs::create_directories(tmp);
  ::setenv("LD_PRELOAD", SGDSIM_FAULT_SHIM, 1);
  // The dev preset's ASan build: the preloaded shim, and the fatal signals left to sgdsim (ASan
  // would otherwise take SIGSEGV and SIGABRT over and print its own report).
  ::setenv("ASAN_OPTIONS", "verify_asan_link_order=0:handle_segv=0:handle_abort=0", 1);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"die", "fault injected after 50 clock reads"},
      {"assert", "injected assertion failure"},
      {"segv", "signal 11"},
      {"terminate", "died of signal"}};
  for (const auto& [fault, message] : faults) {
    ::setenv("SGDSIM_FAULT", fault.c_str(), 1);
    const fs::path out = temp_path("fault-" + fault);
    CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << fault << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << fault << ": " << r.err;
    EXPECT_EQ(
        r.err.rfind("sgdsim: error: " + kBadInputBase + ": SimGrid failed during the run: ", 0), 0u)
        << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << fault << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << fault;  // created by the run, removed with its files
    // In a folder of an earlier run: no temporary file survives, the manifest still lists all.
    ::unsetenv("SGDSIM_FAULT");
    ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
    ::setenv("SGDSIM_FAULT", fault.c_str(), 1);
    r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << fault << ": " << r.err;
    EXPECT_EQ(temporary_files(out), 0) << fault;
    ::unsetenv("SGDSIM_FAULT");
    EXPECT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0)
        << fault;
    fs::remove_all(out);
  }
  ::unsetenv("LD_PRELOAD");
  ::unsetenv("ASAN_OPTIONS");
  ::unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));  // no generated-platform file left in TMPDIR
  fs::remove_all(tmp);
}
