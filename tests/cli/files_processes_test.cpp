// What a user gives sgdsim never makes it write outside its output or leave a file or a
// process behind: unsafe scenario names, outputs that are links, folders or FIFOs, a full
// standard output, SIGHUP, stale temporary files of dead processes, parents killed by SIGKILL,
// the generated platform in $TMPDIR, a failed validate, two runs into one folder, and the live
// progress line on a terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A run of several seconds (ResNet-50 on a fat tree): long enough to act on while it runs.
const std::vector<std::string> kLongRun = {"run",
                                           "experiments/examples/01-resnet50-sync-fat-tree.json",
                                           "--set", "iterations=5000", "--quiet"};

/// Starts `sgdsim ARGS` from the source folder with stdout into `out_file` (or /dev/null) and
/// stderr into `err_file` (or /dev/null); returns its pid.
pid_t start_sgdsim(const std::vector<std::string>& args, const std::string& out_file = "/dev/null",
                   const std::string& err_file = "/dev/null") {
  std::vector<std::string> argv = {sgdsim_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    const int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(125);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

/// The exit code of `pid` (128 + signal if it was killed).
int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Waits up to `seconds` for `ready`; false if it never held.
template <class F>
bool wait_for(F ready, double seconds = 30) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

/// The start time of process `pid` (field 22 of /proc/PID/stat, clock ticks since boot), or
/// -1 if it does not exist or is a zombie.
long long started_at(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return -1;
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z') return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field;) ++i;  // fields 3 (state) to 21
  long long start = -1;
  rest >> start;
  return start;
}

/// Whether process `pid`, started at `start` (started_at), still exists and is not a zombie:
/// a pid reused by another process (a parallel test's) does not count.
bool alive(pid_t pid, long long start) {
  return start >= 0 && started_at(pid) == start;
}

/// The pids whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') kids.push_back(std::stoi(name));
  }
  return kids;
}

/// A pid no process has (a child that has exited and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

/// Entries under `dir` whose name holds ".tmp-".
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp-") != std::string::npos)
      found.push_back(e.path().string());
  return found;
}

}  // namespace

TEST(FilesProcesses, UnsafeScenarioNamesAreRefusedBeforeAnyFileIsWritten) {
  // Without --out a run writes results/<name>: a name must stay a name inside results/.
  const std::string escape = "../sgdsim-escape-" + std::to_string(::getpid());
  const fs::path outside = fs::path(SGDSIM_SOURCE_DIR) / escape.substr(3);
  for (const std::string& name : {escape, std::string("/tmp/sgdsim-escape"), std::string("a\nb"),
                                  std::string(".."), std::string(300, 'n')}) {
    for (const std::string cmd : {"run", "predict"}) {
      CliResult r = run_sgdsim({cmd, kBadInputBase, "--set", "name=" + json(name).dump()});
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << name << ": " << r.err;
      EXPECT_EQ(count_lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find(kBadInputBase + ": /name: expected a file name: no \"/\""),
                std::string::npos)
          << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_FALSE(fs::exists("/tmp/sgdsim-escape"));
  EXPECT_FALSE(fs::exists(fs::path(SGDSIM_SOURCE_DIR) / "results" / "a\nb"));
  fs::remove_all(outside);
  // A name from the file's name: one with a newline is refused too.
  const fs::path dir = temp_path("names");
  fs::create_directories(dir);
  fs::copy_file(fs::path(SGDSIM_SOURCE_DIR) / kBadInputBase, dir / "bad\nname.json");
  CliResult r = run_sgdsim({"predict", (dir / "bad\nname.json").string(), "--set", "name=\"\""});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is no safe folder name"), std::string::npos) << r.err;
  // Ordinary names still work.
  EXPECT_EQ(run_sgdsim({"predict", kBadInputBase, "--set", "name=\"run-1_a.b+c=d,e\""}).exit_code,
            0);
}

TEST(FilesProcesses, OutputsThatAreLinksFoldersOrFifosAreRefusedAndLeftAsTheyWere) {
  const fs::path dir = temp_path("targets");
  fs::create_directories(dir);
  write_text(dir / "precious.xml", "keep me\n");
  fs::create_symlink(dir / "precious.xml", dir / "link.xml");
  fs::create_directories(dir / "folder.xml");
  ASSERT_EQ(::mkfifo((dir / "fifo.xml").c_str(), 0644), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"link.xml", "it is a symbolic link"},
      {"folder.xml", "it is a folder, not a regular file"},
      {"fifo.xml", "it is a FIFO, not a regular file"}};
  for (const auto& [name, message] : cases) {
    const std::string target = (dir / name).string();
    CliResult r = run_sgdsim({"platform", "--nodes", "2", "--output", target});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(target + ": cannot write output file: " + message), std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link.xml"));
  EXPECT_EQ(slurp(dir / "precious.xml"), "keep me\n");
  EXPECT_TRUE(fs::is_directory(dir / "folder.xml"));
  EXPECT_EQ(fs::status(dir / "fifo.xml").type(), fs::file_type::fifo);
  // trace --out on a link: refused the same way.
  CliResult t = run_sgdsim({"trace", "tests/data/kineto/ddp-two-layers.json", "--batch-size", "8",
                            "--out", (dir / "link.xml").string()});
  EXPECT_EQ(t.exit_code, 2) << t.err;
  EXPECT_NE(t.err.find("link.xml: cannot write output file: it is a symbolic link"),
            std::string::npos)
      << t.err;
  EXPECT_EQ(slurp(dir / "precious.xml"), "keep me\n");
  // A run folder whose summary.json is a link out of the folder: refused, the target untouched.
  const fs::path out = dir / "run";
  ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
  fs::remove(out / "summary.json");
  fs::create_symlink(dir / "precious.xml", out / "summary.json");
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find((out / "summary.json").string() + ": is a symbolic link"), std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(dir / "precious.xml"), "keep me\n");
  EXPECT_TRUE(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST(FilesProcesses, AFullStandardOutputIsExitOneWithOneLine) {
  const fs::path dir = temp_path("full-stdout");
  fs::create_directories(dir);
  const std::vector<std::vector<std::string>> commands = {
      {"schema"},
      {"platform", "--nodes", "4"},
      {"version"},
      {"run", kBadInputBase, "--out", (dir / "run").string()}};
  for (const auto& args : commands) {
    const pid_t pid = start_sgdsim(args, "/dev/full", (dir / "err").string());
    EXPECT_EQ(wait_exit(pid), 1) << args[0];
    const std::string err = slurp(dir / "err");
    EXPECT_EQ(err, "sgdsim: error: cannot write standard output: No space left on device\n")
        << args[0];
  }
  // The run whose table was lost left no result behind (nothing counts as done).
  EXPECT_FALSE(fs::exists(dir / "run"));
  fs::remove_all(dir);
}

TEST(FilesProcesses, SighupLeavesNoPartialOrTemporaryFile) {
  const fs::path out = temp_path("sighup");
  std::vector<std::string> args = kLongRun;
  args.insert(args.end(), {"--out", out.string()});
  const pid_t pid = start_sgdsim(args);
  // Hang up once the streamed timeline is open.
  ASSERT_TRUE(wait_for([&] { return !temporaries(out).empty(); }));
  ::kill(pid, SIGHUP);
  EXPECT_EQ(wait_exit(pid), 128 + SIGHUP);
  EXPECT_FALSE(fs::exists(out));  // a folder the run created goes with its manifest
  fs::remove_all(out);
}

TEST(FilesProcesses, ADeadRunsTemporaryFilesAreRemovedByTheNextRunAndSweepResume) {
  const fs::path out = temp_path("stale");
  ASSERT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
  const std::string dead = std::to_string(dead_pid());
  for (const std::string name : {"timeline.json", "summary.json", ".sgdsim-manifest"})
    write_text(out / (name + ".tmp-" + dead), "partial");
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(temporaries(out).empty());
  // A live process's temporary file is not touched (it may still be renamed).
  write_text(out / ("summary.json.tmp-" + std::to_string(::getpid())), "mine");
  EXPECT_EQ(run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"}).exit_code, 0);
  EXPECT_EQ(temporaries(out).size(), 1u);
  fs::remove_all(out);

  // A sweep resumed after a SIGKILL: its own and its runs' leftovers go.
  const fs::path dir = temp_path("stale-sweep");
  fs::create_directories(dir);
  write_text(dir / "sweep.json",
             json({{"base", fs::absolute(fs::path(SGDSIM_SOURCE_DIR) / kBadInputBase).string()},
                   {"grid", {{"workers.count", {2, 4}}}}})
                 .dump());
  const fs::path sw = dir / "out";
  ASSERT_EQ(run_sgdsim({"sweep", (dir / "sweep.json").string(), "--out", sw.string(), "--quiet"})
                .exit_code,
            0);
  write_text(sw / ("results.jsonl.tmp-" + dead), "partial");
  const fs::directory_entry run_dir = *fs::directory_iterator(sw / "runs");
  fs::remove(run_dir.path() / "sweep-key");  // that run runs again
  write_text(run_dir.path() / ("summary.json.tmp-" + dead), "partial");
  r = run_sgdsim({"sweep", (dir / "sweep.json").string(), "--out", sw.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(temporaries(sw).empty()) << temporaries(sw).front();
  fs::remove_all(dir);
}

TEST(FilesProcesses, ChildrenDieWithAKilledSweepOrRun) {
  const fs::path dir = temp_path("orphans");
  fs::create_directories(dir);
  write_text(dir / "sweep.json",
             json({{"base", fs::absolute(fs::path(SGDSIM_SOURCE_DIR) /
                                         "experiments/examples/01-resnet50-sync-fat-tree.json")
                                .string()},
                   {"grid", {{"iterations", {5000, 5001}}}}})
                 .dump());
  for (const std::string cmd : {"sweep", "run"}) {
    const fs::path out = dir / ("out-" + cmd);
    const std::vector<std::string> args =
        cmd == "sweep" ? std::vector<std::string>{"sweep",  (dir / "sweep.json").string(),
                                                  "--out",  out.string(),
                                                  "-j",     "2",
                                                  "--quiet"}
                       : [&] {
                           std::vector<std::string> a = kLongRun;
                           a.insert(a.end(), {"--out", out.string()});
                           return a;
                         }();
    const pid_t pid = start_sgdsim(args);
    const size_t want = cmd == "sweep" ? 2 : 1;
    ASSERT_TRUE(wait_for([&] { return children_of(pid).size() >= want; })) << cmd;
    std::vector<std::pair<pid_t, long long>> kids;
    for (pid_t k : children_of(pid)) kids.emplace_back(k, started_at(k));
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
    for (const auto& [k, start] : kids)
      EXPECT_TRUE(wait_for([&] { return !alive(k, start); }, 20))
          << cmd << ": child " << k << " lives on";
  }
  fs::remove_all(dir);
}

TEST(FilesProcesses, TheGeneratedPlatformNeverGoesToTmpdir) {
  // TMPDIR a folder that does not exist: a run that wrote its platform there would fail.
  const fs::path tmp = temp_path("no-tmpdir");
  const fs::path out = temp_path("no-tmpdir-out");
  ::setenv("TMPDIR", tmp.c_str(), 1);
  CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  CliResult c = run_sgdsim({"collective", "--ranks", "4", "--bytes", "1MB"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  // Stopped by --time-limit while SimGrid loads a large generated platform: nothing left.
  fs::create_directories(tmp);
  r = run_sgdsim({"run", kBadInputBase, "--set", "workers.count=50000", "--set",
                  "workers.per_node=1", "--set", "platform.generate.devices_per_node=1", "--set",
                  "platform.generate.nodes=50000", "--set", "fidelity=\"analytic\"", "--set",
                  "iterations=2", "--out", (out / "big").string(), "--quiet", "--time-limit",
                  "0.5"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  ::unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp));
  EXPECT_FALSE(fs::exists(out / "big"));
  fs::remove_all(tmp);
  fs::remove_all(out);
}

TEST(FilesProcesses, AFailedValidateLeavesNoFile) {
  const fs::path dir = temp_path("validate");
  fs::create_directories(dir);
  const std::string log =
      fs::absolute(fs::path(SGDSIM_SOURCE_DIR) / "data/validation/bcaffe-googlenet/allreduce2.log")
          .string();
  write_text(dir / "case.json",
             json({{"name", "bad"},
                   {"calibration", {{"file", log}, {"format", "osu"}}},
                   {"targets", {{{"name", "2 nodes"}, {"file", log}, {"format", "osu"}}}},
                   {"scenario", {{"iterations", "many"}}}})
                 .dump());
  const fs::path out = dir / "out";
  CliResult r = run_sgdsim({"validate", (dir / "case.json").string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/iterations"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out))
      << "left: "
      << (fs::exists(out) ? fs::begin(fs::recursive_directory_iterator(out))->path().string() : "");
  fs::remove_all(dir);
}

TEST(FilesProcesses, TwoRunsIntoOneFolderDoNotInterleave) {
  const fs::path out = temp_path("lock");
  std::vector<std::string> args = kLongRun;
  args.insert(args.end(), {"--out", out.string()});
  const pid_t first = start_sgdsim(args);
  ASSERT_TRUE(wait_for([&] { return fs::exists(out / ".sgdsim-manifest"); }));
  CliResult second = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_EQ(count_lines(second.err), 1) << second.err;
  EXPECT_NE(second.err.find("another sgdsim is writing into \"" + out.string() + "\""),
            std::string::npos)
      << second.err;
  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_exit(first), 128 + SIGTERM);
  // Once the first has ended, the folder is free.
  CliResult third = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet"});
  EXPECT_EQ(third.exit_code, 0) << third.err;
  fs::remove_all(out);
}

TEST(FilesProcesses, ProgressAutoIsLiveOnATerminal) {
  // stderr a pseudo-terminal: "auto" refreshes one line ("\r  iteration i/N") instead of
  // printing "sgdsim: iteration" lines.
  const fs::path out = temp_path("pty");
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  std::vector<std::string> argv = {sgdsim_binary(),    "run",     kBadInputBase, "--out",
                                   out.string(),       "--quiet", "--set",       "iterations=2000",
                                   "--progress-every", "0.01"};
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    ::close(master);
    ::dup2(slave, 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execv(cargv[0], cargv.data());
    _exit(127);
  }
  ::close(slave);
  std::string seen;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) seen.append(buf, n);  // EIO at end
  ::close(master);
  EXPECT_EQ(wait_exit(pid), 0) << seen;
  EXPECT_NE(seen.find("\r  iteration "), std::string::npos) << seen;
  EXPECT_EQ(seen.find("sgdsim: iteration "), std::string::npos) << seen;
  fs::remove_all(out);
}
