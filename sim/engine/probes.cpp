// Probes of SimGrid in child processes and the refusal of options that crash it (probes.hpp
// says why).
#include "sim/engine/probes.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

namespace sg4 = simgrid::s4u;

namespace sgdsim {

namespace {

/// The SimGrid message in what a dying child wrote: its first log line, without SimGrid's
/// "[time] [category/priority]" prefix (a backtrace follows it).
std::string simgrid_message(const std::string& text) {
  std::string fallback;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t tag = line.find("] [");
    if (tag != std::string::npos) {
      const size_t close = line.find("] ", tag + 3);
      if (close != std::string::npos) return line.substr(close + 2);
    }
    if (fallback.empty()) fallback = line;
  }
  return fallback;
}

/// "SimGrid rejected the options (a, b): why".
std::string cfg_rejected(const std::vector<std::string>& cfg, const std::string& why) {
  std::string given;
  for (const auto& o : cfg) given += (given.empty() ? "" : ", ") + o;
  return "SimGrid rejected the options (" + given + "): " + why;
}

/// Where option `i` of the configuration comes from: {file, pointer} or {"--cfg", ""}.
std::pair<std::string, std::string> cfg_origin(const EngineConfig& c, size_t i) {
  if (i < c.cfg_origin.size()) return c.cfg_origin[i];
  return {"--cfg", ""};
}

}  // namespace

/// The first line of a SimGrid message (some append lists of every netpoint or option).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// Runs `probe` in a child process with stderr captured. SimGrid 3.32 does not throw on every
/// bad input: it aborts or segfaults on some (an unknown network/model, a missing zoneRoute),
/// so only a disposable process may ask. `probe` returns 0 when all is well.
ProbeResult probe_in_child(const std::function<int(ProbeProgress&)>& probe) {
  void* shared = ::mmap(nullptr, sizeof(ProbeProgress), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error("cannot check the platform: mmap failed");
  auto* progress = new (shared) ProbeProgress();
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot check the platform: pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot check the platform: fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    // The parent's handlers would delete the parent's temporary files.
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // disposable: gone with its parent
    ::dup2(fds[1], 2);                   // SimGrid's dying words go to the parent
    int rc = 5;
    try {
      rc = probe(*progress);
    } catch (const std::exception& e) {
      const std::string msg = std::string("[ ] [probe/error] ") + e.what() + "\n";
      rc = ::write(2, msg.data(), msg.size()) < 0 ? 4 : 3;
    }
    ::_exit(rc);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (text.size() < (1 << 16)) text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProbeResult r;
  r.step = progress->step;
  ::munmap(shared, sizeof(ProbeProgress));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return r;
  r.ok = false;
  r.message = simgrid_message(text);
  if (r.message.empty())
    r.message = WIFSIGNALED(status) ? fmt::format("SimGrid died of signal {}", WTERMSIG(status))
                                    : "SimGrid failed";
  return r;
}

/// Routes every ordered pair of `hosts` in a child process and throws InputError naming the
/// first pair without a usable route (a missing zoneRoute segfaults SimGrid 3.32, "Bad
/// gateways"; a missing route in a Full zone aborts or, in release builds, comes back empty).
void check_routes(const std::vector<sg4::Host*>& hosts, const std::string& file) {
  if (hosts.size() < 2) return;
  const ProbeResult r = probe_in_child([&](ProbeProgress& progress) {
    for (auto* a : hosts)
      for (auto* b : hosts) {
        if (a == b) continue;
        progress.set(a->get_name() + " " + b->get_name());
        std::vector<sg4::Link*> links;
        double latency = 0;
        a->route_to(b, links, &latency);
        if (links.empty()) throw std::runtime_error("SimGrid finds no link on this route");
      }
    return 0;
  });
  if (r.ok) return;
  std::istringstream words(r.step);
  std::string from = "?", to = "?";
  words >> from >> to;
  throw InputError(file, "",
                   fmt::format("no usable route from host \"{}\" to host \"{}\" (every pair of "
                               "the run's hosts needs one): {}",
                               from, to, r.message));
}

void check_slowed_pstates(const std::vector<sg4::Host*>& workers, double slowdown,
                          const std::string& scenario_file, const std::string& platform_file) {
  // A hand-written second speed is rounded: 0.1 % leaves room for 4 significant digits.
  constexpr double kTolerance = 1e-3;
  for (const sg4::Host* h : workers) {
    const double speed = h->get_pstate_speed(0);
    const double expected = speed / (1 + slowdown);
    const bool ok = h->get_pstate() == 0 && h->get_pstate_count() > 1 &&
                    std::fabs(h->get_pstate_speed(1) - expected) <= kTolerance * expected;
    if (ok) continue;
    const std::string declared =
        h->get_pstate_count() > 1 ? fmt::format("{:g}f", h->get_pstate_speed(1)) : "none";
    throw InputError(
        scenario_file, "/device/overlap_slowdown",
        fmt::format("{} with platform file {}: host \"{}\" (pstate {}) has second speed {}: "
                    "expected it to start in pstate 0 and declare speed=\"{:g}f,{:g}f\" "
                    "(speed / (1 + {}), to 0.1 %)",
                    slowdown, platform_file, h->get_name(), h->get_pstate(), declared, speed,
                    expected, slowdown));
  }
}

/// The error for options SimGrid rejected with `why`: when `fails_alone` (run in a child per
/// option) finds the one that fails by itself, it names that option and where it came from
/// (--cfg, or the scenario's /simgrid_cfg/N); else every option.
[[noreturn]] void blame_cfg(const EngineConfig& c, const std::string& why,
                            const std::function<ProbeResult(const std::string&)>& fails_alone) {
  for (size_t i = 0; i < c.cfg.size(); ++i) {
    const ProbeResult alone =
        c.cfg.size() == 1 ? ProbeResult{false, "", why} : fails_alone(c.cfg[i]);
    if (alone.ok) continue;
    const auto [file, pointer] = cfg_origin(c, i);
    throw InputError(file, pointer, cfg_rejected({c.cfg[i]}, alone.message));
  }
  throw InputError("--cfg", "", cfg_rejected(c.cfg, why));
}

/// Refuses SimGrid options that crash SimGrid 3.32 on sgdsim's platforms: Paje tracing of
/// uncategorized resource use aborts on generated platforms and <cluster> files.
void refuse_crashing_options(const EngineConfig& c) {
  const std::vector<std::string>& cfg = c.cfg;
  for (size_t i = 0; i < cfg.size(); ++i) {
    const std::string& o = cfg[i];
    const std::string name = o.substr(0, o.find(':'));
    const std::string value = o.substr(o.find(':') + 1);
    if (name == "maxmin/precision" || name == "surf/precision") {
      // SimGrid 3.32 hangs on surf/precision <= 0 and crashes on maxmin/precision < 0 or >= 1.
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(x > 0) || !(x < limits::kMaxSimGridPrecision))
        throw InputError(cfg_origin(c, i).first, cfg_origin(c, i).second,
                         fmt::format("\"{}\" is refused: expected a precision > 0 and < {:g} "
                                     "(the limit on SimGrid's precisions: SimGrid 3.32 hangs or "
                                     "crashes past it; sgdsim runs with surf/precision:1e-12 and "
                                     "SimGrid's maxmin/precision:1e-05)",
                                     o, limits::kMaxSimGridPrecision));
    }
    if (name == "tracing/uncategorized" && value != "no" && value != "0" && value != "false")
      throw InputError(
          cfg_origin(c, i).first, cfg_origin(c, i).second,
          "\"" + o +
              "\" is refused: SimGrid 3.32's Paje tracing of uncategorized "
              "resource use aborts on generated platforms and <cluster> files (\"container with "
              "name star_link_0_DOWN not found\"); use sgdsim's timeline.json "
              "(output.timeline) instead");
  }
}
}  // namespace sgdsim
