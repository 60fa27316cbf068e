#pragma once
/// Asking SimGrid in a disposable child process. SimGrid 3.32 does not throw on every bad
/// input: it aborts or segfaults on some (an unknown network/model, a missing zoneRoute), so
/// the engine tries its options, a user's platform and its routes in a child first, and turns
/// what the child said before dying into one InputError line. Also the refusal of SimGrid
/// options known to crash it. Internal to sim/engine.
#include <simgrid/forward.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"

namespace sgdsim {

/// How a probe in a child process ended: ok, or where it was and SimGrid's message.
struct ProbeResult {
  bool ok = true;
  std::string step;     ///< what the probe last wrote into its progress buffer
  std::string message;  ///< SimGrid's message, or how the child died
};

/// Progress a probe shares with its parent: written before each step, read after a crash.
struct ProbeProgress {
  char step[1024] = {};
  /// Records the step about to run (no system call: it runs once per host pair).
  void set(const std::string& text) {
    const size_t n = std::min(text.size(), sizeof step - 1);
    std::memcpy(step, text.data(), n);
    step[n] = '\0';
  }
};

/// The first line of a SimGrid message (some append lists of every netpoint or option).
std::string first_line(const std::string& text);

/// Runs `probe` in a child process with stderr captured; `probe` returns 0 when all is well.
ProbeResult probe_in_child(const std::function<int(ProbeProgress&)>& probe);

/// Routes every ordered pair of `hosts` in a child process and throws InputError naming the
/// first pair without a usable route (a missing zoneRoute segfaults SimGrid 3.32, "Bad
/// gateways"; a missing route in a Full zone aborts or, in release builds, comes back empty).
void check_routes(const std::vector<simgrid::s4u::Host*>& hosts, const std::string& file);

/// device.overlap_slowdown `slowdown` on a platform file (SimGrid seals a host's pstates as it
/// loads it): throws InputError unless every worker host starts in its first pstate and
/// declares a second one of speed / (1 + slowdown), to 0.1 %.
void check_slowed_pstates(const std::vector<simgrid::s4u::Host*>& workers, double slowdown,
                          const std::string& scenario_file, const std::string& platform_file);

/// The error for options SimGrid rejected with `why`: when `fails_alone` (run in a child per
/// option) finds the one that fails by itself, it names that option and where it came from
/// (--cfg, or the scenario's /simgrid_cfg/N); else every option.
[[noreturn]] void blame_cfg(const EngineConfig& c, const std::string& why,
                            const std::function<ProbeResult(const std::string&)>& fails_alone);

/// Refuses SimGrid options that crash SimGrid 3.32 on sgdsim's platforms: Paje tracing of
/// uncategorized resource use aborts on generated platforms and <cluster> files.
void refuse_crashing_options(const EngineConfig& c);

}  // namespace sgdsim
