#include "run_cli.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sgdsim::test {

namespace {

/// $TMPDIR/sgdsim-test-<pid>: every temp_path of this process lies inside, and it is removed
/// when the process ends (only by the process that made it, not by a forked child), so a test
/// that forgets its folder leaves nothing in the temporary folder.
class ScratchRoot {
 public:
  ScratchRoot()
      : owner_(::getpid()),
        path_(std::filesystem::temp_directory_path() /
              ("sgdsim-test-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchRoot() {
    std::error_code ec;
    if (::getpid() == owner_) std::filesystem::remove_all(path_, ec);
  }
  ScratchRoot(const ScratchRoot&) = delete;
  ScratchRoot& operator=(const ScratchRoot&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

}  // namespace

std::filesystem::path temp_path(const std::string& tag) {
  static std::atomic<int> counter{0};
  static const ScratchRoot root;
  auto p = root.path() / (std::to_string(counter++) + "-" + tag);
  std::filesystem::remove_all(p);
  return p;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

nlohmann::json run_on_ideal_star(const std::vector<std::string>& sets,
                                 std::filesystem::path* out_dir) {
  return run_scenario_summary(kIdealStar, sets, out_dir);
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

const char* sgdsim_binary() {
  const char* b = std::getenv("SGDSIM_TEST_BINARY");
  return b != nullptr && *b != '\0' ? b : SGDSIM_BINARY;
}

bool sgdsim_sanitized() {
#ifdef SGDSIM_SANITIZED
  return true;
#else
  const char* s = std::getenv("SGDSIM_TEST_SANITIZED");
  return s != nullptr && std::string(s) == "1";
#endif
}

CliResult run_sgdsim(const std::vector<std::string>& args) {
  auto dir = temp_path("io");
  std::filesystem::create_directories(dir);
  auto out_file = dir / "stdout", err_file = dir / "stderr";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(SGDSIM_SOURCE_DIR) != 0) _exit(126);
    int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    std::string bin = sgdsim_binary();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    _exit(127);
  }
  CliResult r;
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.max_rss_kb = usage.ru_maxrss;
  r.out = slurp(out_file);
  r.err = slurp(err_file);
  std::filesystem::remove_all(dir);
  return r;
}

int overlapping_slices(const std::filesystem::path& timeline) {
  const auto trace = nlohmann::json::parse(slurp(timeline));
  // Per track: (start, -duration, end) in ns, so a longer slice comes before one it contains.
  std::map<std::pair<int, int>, std::vector<std::tuple<int64_t, int64_t, int64_t>>> tracks;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const int64_t start = std::llround(e.at("ts").get<double>() * 1000);
    const int64_t dur = std::llround(e.at("dur").get<double>() * 1000);
    tracks[{e.at("pid").get<int>(), e.value("tid", 0)}].emplace_back(start, -dur, start + dur);
  }
  int bad = 0;
  for (auto& [_, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    std::vector<int64_t> open;  // ends of the slices enclosing the current one
    for (const auto& [start, _2, end] : slices) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      if (!open.empty() && end > open.back()) ++bad;
      open.push_back(end);
    }
  }
  return bad;
}

nlohmann::json run_scenario_summary(const std::string& scenario,
                                    const std::vector<std::string>& sets,
                                    std::filesystem::path* out_dir) {
  std::filesystem::path out = temp_path("summary");
  std::vector<std::string> args = {"run", scenario, "--out", out.string(), "--quiet"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
  if (out_dir != nullptr)
    *out_dir = out;
  else
    std::filesystem::remove_all(out);
  return summary;
}

}  // namespace sgdsim::test
