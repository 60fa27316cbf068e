// End-to-end behaviour of sgdsim sweep (and sgdsim_mpi_sweep when built): expansion and
// naming, results files, per-run failures, resume after SIGTERM, bad sweep files, MPI ranks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A tiny base scenario: each run takes a few tens of milliseconds.
const json kTinyBase = {{"model", "resnet50"},
                        {"workers", {{"count", 2}}},
                        {"iterations", 3},
                        {"warmup_iterations", 1},
                        {"output", {{"timeline", false}}}};

/// A fresh folder holding `sweep.json` with the given content; returns the sweep file path.
fs::path make_sweep(const json& sweep, const std::string& tag) {
  fs::path dir = temp_path(tag);
  fs::create_directories(dir);
  write_text(dir / "sweep.json", sweep.dump(2));
  return dir / "sweep.json";
}

std::vector<json> read_jsonl(const fs::path& p) {
  std::vector<json> lines;
  std::istringstream in(slurp(p));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(json::parse(l));
  return lines;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Runs any program from the source directory, capturing its output.
CliResult run_program(const std::vector<std::string>& argv) {
  fs::path dir = temp_path("io");
  fs::create_directories(dir);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    int o = ::open((dir / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(dir / "stdout");
  r.err = slurp(dir / "stderr");
  fs::remove_all(dir);
  return r;
}

/// Files named like an AtomicFile's temporary (`*.tmp-<pid>`) anywhere below `dir`.
int temp_files_below(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    n += e.path().filename().string().find(".tmp-") != std::string::npos;
  return n;
}

int count_keys(const fs::path& out) {
  int n = 0;
  if (fs::exists(out / "runs"))
    for (const auto& e : fs::directory_iterator(out / "runs"))
      n += fs::exists(e.path() / "sweep-key");
  return n;
}

json strip_wall_time(json line) {
  line.erase("wall_time_s");
  return line;
}

}  // namespace

TEST(Sweep, ExpandsGridTimesZipTimesListInOrderWithNames) {
  // Insertion order matters (the file's order names the runs): build the text by hand.
  std::string text = R"({"base": )" + kTinyBase.dump() + R"(,
    "grid": {"workers.count": [2, 4], "scheme.type": ["sync", "pseudo_sync"]},
    "zip": {"batch_size": [8, 16], "platform.generate.node_link.bandwidth": ["10Gbps", "25Gbps"]},
    "list": [{"network_model": "ideal"}, {}]})";
  fs::path file = temp_path("expand") / "sweep.json";
  write_text(file, text);
  CliResult r = run_sgdsim(
      {"sweep", file.string(), "--list", "--out", (file.parent_path() / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected;
  for (const char* w : {"2", "4"})
    for (const char* s : {"sync", "pseudo_sync"})
      for (auto [b, bw] : {std::pair{"8", "10Gbps"}, std::pair{"16", "25Gbps"}})
        for (const char* l : {",network_model=ideal", ""})
          expected.push_back(std::string("workers.count=") + w + ",scheme.type=" + s +
                             ",batch_size=" + b + ",platform.generate.node_link.bandwidth=" + bw +
                             l + "\tto run");
  EXPECT_EQ(split_lines(r.out), expected);
  EXPECT_FALSE(fs::exists(file.parent_path() / "out")) << "--list must not create the output";
  fs::remove_all(file.parent_path());
}

TEST(Sweep, RepeatVariesTheSeedAndNamesAreSanitizedAndUnique) {
  json base = kTinyBase;
  base["seed"] = 7;
  fs::path file = make_sweep(
      {{"base", base}, {"grid", {{"description", {"a/b", "a_b", "x,y=z"}}}}, {"repeat", 2}},
      "names");
  CliResult r = run_sgdsim({"sweep", file.string(), "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected = {
      "description=a_b,seed=7\tto run",   "description=a_b,seed=8\tto run",
      "description=a_b,seed=7~2\tto run", "description=a_b,seed=8~2\tto run",
      "description=x_y_z,seed=7\tto run", "description=x_y_z,seed=8\tto run"};
  EXPECT_EQ(split_lines(r.out), expected);
  fs::remove_all(file.parent_path());
}

TEST(Sweep, WritesResultsInSweepOrderAndSkipsCompletedRuns) {
  // The base is a file next to the sweep: paths in a sweep file are relative to it.
  fs::path dir = temp_path("results");
  write_text(dir / "scenarios" / "tiny.json", kTinyBase.dump());
  write_text(dir / "scenarios" / "sweep.json",
             R"({"base": "tiny.json", "grid": {"workers.count": [4, 2, 3]},
                 "zip": {"scheme.type": ["sync", "async"], "batch_size": [8, 16]}})");
  fs::path out = dir / "out";
  CliResult r = run_sgdsim(
      {"sweep", (dir / "scenarios" / "sweep.json").string(), "--out", out.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6 runs: 6 ok, 0 failed, 0 not run; 6 executed, 0 already done"),
            std::string::npos)
      << r.out;
  auto lines = read_jsonl(out / "results.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  const std::vector<std::pair<int, std::string>> order = {{4, "sync"},  {4, "async"}, {2, "sync"},
                                                          {2, "async"}, {3, "sync"},  {3, "async"}};
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    EXPECT_EQ(l["status"], "ok");
    EXPECT_EQ(l["params"]["workers.count"], order[i].first);
    EXPECT_EQ(l["params"]["scheme.type"], order[i].second);
    EXPECT_EQ(l["workers"], order[i].first);  // the summary's own fields are there
    EXPECT_EQ(l["scheme"], order[i].second);
    EXPECT_EQ(l["key"].get<std::string>().size(), 16u);
    EXPECT_TRUE(fs::exists(out / "runs" / l["run"].get<std::string>() / "summary.json"));
  }
  EXPECT_EQ(lines[0]["run"], "workers.count=4,scheme.type=sync,batch_size=8");
  auto csv = split_lines(slurp(out / "results.csv"));
  ASSERT_EQ(csv.size(), 7u);
  EXPECT_EQ(csv[0].rfind("run,status,error,key,params.workers.count,params.scheme.type,"
                         "params.batch_size,",
                         0),
            0u)
      << csv[0];
  EXPECT_NE(csv[0].find(",iteration_time_s.mean,"), std::string::npos);
  // Names hold commas: CSV-quoted.
  EXPECT_EQ(csv[1].rfind("\"workers.count=4,scheme.type=sync,batch_size=8\",ok,,", 0), 0u)
      << csv[1];

  // Again: nothing to do, same results.
  CliResult again = run_sgdsim(
      {"sweep", (dir / "scenarios" / "sweep.json").string(), "--out", out.string(), "--quiet"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(again.out.empty()) << again.out;
  EXPECT_EQ(read_jsonl(out / "results.jsonl"), lines);

  // A changed base changes every key: everything runs again.
  json changed = kTinyBase;
  changed["iterations"] = 4;
  write_text(dir / "scenarios" / "tiny.json", changed.dump());
  CliResult third =
      run_sgdsim({"sweep", (dir / "scenarios" / "sweep.json").string(), "--out", out.string()});
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.out.find("6 executed, 0 already done"), std::string::npos) << third.out;
  EXPECT_EQ(read_jsonl(out / "results.jsonl")[0]["iterations"], 4);
  fs::remove_all(dir);
}

TEST(Sweep, FailedRunsAreRecordedAndTheOthersComplete) {
  fs::path platform = fs::path(SGDSIM_SOURCE_DIR) / "tests/bad_inputs/not-a-platform.xml";
  fs::path file = make_sweep(
      {{"base", kTinyBase},
       {"list",
        json::array({{{"workers.count", 0}},
                     {{"workers.count", 2}},
                     {{"platform", {{"file", platform.string()}}}, {"device.speed", "10Tf"}},
                     {{"workers.count", 3}}})}},
      "failures");
  fs::path out = file.parent_path() / "out";
  CliResult r = run_sgdsim({"sweep", file.string(), "--out", out.string(), "-j", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto lines = read_jsonl(out / "results.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  // Caught by validation before any process starts.
  EXPECT_EQ(lines[0]["status"], "failed");
  EXPECT_NE(
      lines[0]["error"].get<std::string>().find("/workers/count: expected an integer >= 1, got 0"),
      std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1]["status"], "ok");
  // Failed inside the `sgdsim run` child: its last stderr line is the error.
  EXPECT_EQ(lines[2]["status"], "failed");
  EXPECT_NE(lines[2]["error"].get<std::string>().find("not-a-platform.xml"), std::string::npos)
      << lines[2];
  EXPECT_FALSE(lines[2].contains("iteration_time_s"));
  EXPECT_EQ(lines[3]["status"], "ok");
  EXPECT_NE(r.err.find("FAILED workers.count=0"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("4 runs: 2 ok, 2 failed"), std::string::npos) << r.out;

  // A re-run retries the failed runs only.
  CliResult again = run_sgdsim({"sweep", file.string(), "--out", out.string(), "-j", "2"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.out.find("1 executed, 2 already done"), std::string::npos) << again.out;
  fs::remove_all(file.parent_path());
}

TEST(Sweep, KilledMidwayResumesOnlyTheMissingRuns) {
  // Eight runs of ~0.2 s each (10 iterations under the sanitizers: about as long), one at a
  // time; SIGTERM once two have finished.
  json base = kTinyBase;
  base["workers"]["count"] = 16;
  base["iterations"] = sgdsim_sanitized() ? 10 : 40;
  fs::path file = make_sweep(
      {{"base", base}, {"grid", {{"batch_size", {8, 16, 24, 32, 40, 48, 56, 64}}}}}, "resume");
  fs::path out = file.parent_path() / "out";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(sgdsim_binary(), sgdsim_binary(), "sweep", file.c_str(), "--out", out.c_str(), "-j",
            "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 3000 && count_keys(out) < 2; ++i) ::usleep(10 * 1000);
  ASSERT_GE(count_keys(out), 2) << "the sweep made no progress";
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  const int done = count_keys(out);
  ASSERT_LT(done, 8) << "the sweep finished before it was killed: make the runs longer";
  EXPECT_EQ(temp_files_below(out), 0) << "partial files left behind";
  auto lines = read_jsonl(out / "results.jsonl");
  EXPECT_EQ(static_cast<int>(lines.size()), done) << "results.jsonl disagrees with the runs done";
  std::map<std::string, fs::file_time_type> before;
  for (const auto& l : lines) {
    EXPECT_EQ(l["status"], "ok");
    before[l["run"]] =
        fs::last_write_time(out / "runs" / l["run"].get<std::string>() / "sweep-key");
  }

  CliResult r = run_sgdsim({"sweep", file.string(), "--out", out.string(), "-j", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(std::to_string(8 - done) + " executed, " + std::to_string(done) + " already done"),
      std::string::npos)
      << r.out;
  lines = read_jsonl(out / "results.jsonl");
  ASSERT_EQ(lines.size(), 8u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["params"]["batch_size"], 8 * (i + 1));
    auto key = out / "runs" / lines[i]["run"].get<std::string>() / "sweep-key";
    if (before.count(lines[i]["run"]) != 0) {
      EXPECT_EQ(fs::last_write_time(key), before[lines[i]["run"]])
          << "ran again: " << lines[i]["run"];
    }
  }
  EXPECT_EQ(split_lines(slurp(out / "results.csv")).size(), 9u);
  fs::remove_all(file.parent_path());
}

TEST(Sweep, InterruptAtRandomMomentsKeepsResultsWhole) {
  // Six short runs, two at a time; SIGINT / SIGTERM at seeded random moments. After each kill
  // results.jsonl and results.csv hold whole lines only, no temporary file is left, and the
  // next attempt resumes; a last uninterrupted attempt completes the sweep.
  json base = kTinyBase;
  base["workers"]["count"] = 8;
  base["iterations"] = 20;
  fs::path file = make_sweep(
      {{"base", base}, {"grid", {{"batch_size", {8, 16, 24}}, {"scheme.type", {"sync", "ssp"}}}}},
      "interrupt");
  const fs::path dir = file.parent_path();
  auto t0 = std::chrono::steady_clock::now();
  CliResult ref = run_sgdsim(
      {"sweep", file.string(), "--out", (dir / "reference").string(), "-j", "2", "--quiet"});
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  const double sweep_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();

  const fs::path out = dir / "out";
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> moment(0.0, 0.5 * sweep_us);
  for (int k = 0; k < 6; ++k) {
    const int sig = k % 2 == 0 ? SIGTERM : SIGINT;
    const auto delay = static_cast<useconds_t>(moment(rng));
    pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execl(sgdsim_binary(), sgdsim_binary(), "sweep", file.c_str(), "--out", out.c_str(), "-j",
              "2", static_cast<char*>(nullptr));
      _exit(127);
    }
    ::usleep(delay);
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    SCOPED_TRACE(::testing::Message() << "signal " << sig << " after " << delay << " us");
    EXPECT_TRUE(WIFEXITED(status) || WTERMSIG(status) == sig) << status;
    if (!fs::exists(out)) continue;
    EXPECT_EQ(temp_files_below(out), 0) << "partial files left behind";
    if (fs::exists(out / "results.jsonl")) {
      const std::string text = slurp(out / "results.jsonl");
      EXPECT_TRUE(text.empty() || text.back() == '\n') << "results.jsonl ends mid-line";
      for (const auto& line : split_lines(text)) EXPECT_TRUE(json::accept(line)) << line;
      const std::string csv = slurp(out / "results.csv");
      EXPECT_TRUE(!csv.empty() && csv.back() == '\n') << "results.csv ends mid-line";
      EXPECT_EQ(split_lines(csv).size(), split_lines(text).size() + 1);
    }
  }
  CliResult r = run_sgdsim({"sweep", file.string(), "--out", out.string(), "-j", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = read_jsonl(out / "results.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  for (const auto& l : lines) EXPECT_EQ(l["status"], "ok") << l.dump();
  fs::remove_all(dir);
}

struct BadSweep {
  std::string name;
  std::string text;
  std::string expect;
};

TEST(Sweep, BadSweepFilesExitTwoWithOneLineNamingFileAndPointer) {
  const std::string base = kTinyBase.dump();
  const std::vector<BadSweep> cases = {
      {"malformed", R"({"base": )" + base + R"(, "grid": {)", "malformed JSON: parse error"},
      {"not-object", "[1]", "/: expected a sweep object"},
      {"unknown-key", R"({"base": )" + base + R"(, "gird": {"workers.count": [2]}})",
       "/gird: unknown key \"gird\" (did you mean \"grid\"?)"},
      {"missing-base", R"({"grid": {"workers.count": [2]}})", "/base: required field is missing"},
      {"base-typo", R"({"bse": "tiny.json"})",
       "/bse: unknown key \"bse\" (did you mean \"base\"?)"},
      {"base-file-missing", R"({"base": "nope.json"})", "/base: file \"nope.json\" not found"},
      {"base-number", R"({"base": 3})", "/base: expected a scenario path or an inline scenario"},
      {"empty-axis", R"({"base": )" + base + R"(, "grid": {"workers.count": []}})",
       "/grid/workers.count: expected a non-empty array of values"},
      {"axis-not-array", R"({"base": )" + base + R"(, "grid": {"workers.count": 4}})",
       "/grid/workers.count: expected a non-empty array of values"},
      {"empty-grid", R"({"base": )" + base + R"(, "grid": {}})",
       "/grid: expected at least one path"},
      {"zip-unequal",
       R"({"base": )" + base + R"(, "zip": {"workers.count": [2, 4], "batch_size": [8]}})",
       "/zip/batch_size: expected 2 values like /zip/workers.count"},
      {"unknown-path", R"({"base": )" + base + R"(, "grid": {"workers.cont": [2, 4]}})",
       "/grid/workers.cont: \"workers.cont\" is not a scenario field"},
      {"unknown-path-in-list", R"({"base": )" + base + R"(, "list": [{"batch_sise": 8}]})",
       "/list/0/batch_sise: \"batch_sise\" is not a scenario field"},
      {"path-syntax", R"({"base": )" + base + R"(, "grid": {"workers/count": [2]}})",
       "/grid/workers/count: expected a dotted path of scenario fields"},
      {"path-into-string", R"({"base": )" + base + R"(, "grid": {"model.layers": [2]}})",
       "/grid/model.layers: cannot set \"model.layers\""},
      {"list-not-objects", R"({"base": )" + base + R"(, "list": [8]})",
       "/list/0: expected an object of overrides"},
      {"list-empty", R"({"base": )" + base + R"(, "list": []})",
       "/list: expected a non-empty array of override objects"},
      {"overlap",
       R"({"base": )" + base +
           R"(, "grid": {"workers": [{"count": 2}]}, "list": [{"workers.count": 2}]})",
       "/list/0/workers.count: \"workers.count\" overlaps the path set at /grid/workers"},
      {"repeat-zero", R"({"base": )" + base + R"(, "repeat": 0})",
       "/repeat: expected an integer >= 1, got 0"},
      {"repeat-and-seed", R"({"base": )" + base + R"(, "repeat": 2, "grid": {"seed": [1, 2]}})",
       "/repeat: repeat > 1 varies \"seed\""},
  };
  fs::path dir = temp_path("bad-sweeps");
  for (const auto& c : cases) {
    fs::path file = dir / (c.name + ".json");
    write_text(file, c.text);
    fs::path out = dir / (c.name + "-out");
    CliResult r = run_sgdsim({"sweep", file.string(), "--out", out.string()});
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(file.string() + ": "), std::string::npos)
        << c.name << ": does not name the sweep file: " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos)
        << c.name << ": expected: " << c.expect << "\ngot: " << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.name << ": output folder created";
  }
  // Options.
  CliResult r = run_sgdsim({"sweep", (dir / "missing-base.json").string(), "-j", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-j: expected an integer between 1 and 4096, got \"0\""), std::string::npos)
      << r.err;
  EXPECT_EQ(run_sgdsim({"sweep"}).exit_code, 2);
  CliResult help = run_sgdsim({"sweep", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: sgdsim sweep SWEEP.json"), std::string::npos);
  fs::remove_all(dir);
}

#ifdef SGDSIM_MPI_SWEEP_BINARY
TEST(Sweep, MpiRanksGiveTheSameResultsAsOneMachine) {
  json sweep = {{"base", kTinyBase},
                {"grid", {{"workers.count", {2, 3, 4}}, {"scheme.type", {"sync", "pseudo_sync"}}}},
                {"list", json::array({json::object(), {{"batch_size", 0}}})}};
  fs::path file = make_sweep(sweep, "mpi");
  fs::path local = file.parent_path() / "local", mpi = file.parent_path() / "mpi",
           handover = file.parent_path() / "handover";
  CliResult a = run_sgdsim({"sweep", file.string(), "--out", local.string(), "-j", "2"});
  EXPECT_EQ(a.exit_code, 1) << a.err;  // the batch_size=0 runs fail
  const std::vector<std::string> mpirun = {SGDSIM_MPIEXEC, "--oversubscribe", "--allow-run-as-root",
                                           "-np", "2"};
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> v = mpirun;
    v.insert(v.end(), args.begin(), args.end());
    return run_program(v);
  };
  CliResult b = with({SGDSIM_MPI_SWEEP_BINARY, file.string(), "--out", mpi.string(), "-j", "1"});
  EXPECT_EQ(b.exit_code, 1) << b.out << b.err;
  // `sgdsim sweep` under mpirun hands over to sgdsim_mpi_sweep.
  CliResult c =
      with({sgdsim_binary(), "sweep", file.string(), "--out", handover.string(), "-j", "1"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  auto la = read_jsonl(local / "results.jsonl");
  ASSERT_EQ(la.size(), 12u);
  for (const auto& other : {mpi, handover}) {
    auto lb = read_jsonl(other / "results.jsonl");
    ASSERT_EQ(lb.size(), la.size()) << other;
    for (size_t i = 0; i < la.size(); ++i)
      EXPECT_EQ(strip_wall_time(la[i]), strip_wall_time(lb[i])) << other << " line " << i;
    auto ca = split_lines(slurp(local / "results.csv"));
    auto cb = split_lines(slurp(other / "results.csv"));
    ASSERT_EQ(ca.size(), cb.size());
    EXPECT_EQ(ca[0], cb[0]);
  }
  // Ranks that both ran work: the runs' logs are in place for all of them.
  int logs = 0;
  for (const auto& e : fs::directory_iterator(mpi / "runs"))
    logs += fs::exists(e.path() / "sweep.log");
  EXPECT_EQ(logs, 6);  // the 6 batch_size=0 runs fail validation and never start
  fs::remove_all(file.parent_path());
}
#else
TEST(Sweep, MpiRanksGiveTheSameResultsAsOneMachine) {
  GTEST_SKIP() << "sgdsim_mpi_sweep not built (Open MPI not found)";
}
#endif
