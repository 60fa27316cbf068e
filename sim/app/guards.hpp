#pragma once
/// Guards of `sgdsim run`: an estimate of what a run will cost before it starts (SimGrid
/// activities, memory), checked against limits, and a wall-clock limit that stops a run
/// cleanly (no partial result file).
#include <chrono>
#include <memory>
#include <string>

#include "sim/app/cli.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/limits.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Estimated cost of simulating a scenario (upper-bound flavoured: MG-WFBP merging, skipped
/// zero-time tasks and self-messages are not subtracted).
struct RunEstimate {
  double activities = 0;                ///< SimGrid activities (Exec + Comm) of the whole run
  double activities_per_iteration = 0;  ///< of one iteration
  double messages_per_collective = 0;   ///< messages of the largest bucket's allreduce (flow)
  double memory_bytes = 0;              ///< peak memory of the simulation
  double schedule_bytes = 0;            ///< of that, the cached collective schedules
  double time_low_s = 0;                ///< wall time at the fastest measured rate
  double time_high_s = 0;               ///< wall time at the slowest measured rate (a bound)
  bool analytic = false;                ///< estimated at fidelity "analytic"
  /// The same run at fidelity "analytic" (what the guard's advice quotes); a flow run only.
  std::shared_ptr<const RunEstimate> as_analytic;
};

/// Point-to-point messages of one allreduce of `bytes` by `algorithm` over `group`, as the
/// flow fidelity simulates them (closed forms of the schedules in sim/collectives).
double collective_messages(const std::string& algorithm, const CollectiveGroup& group,
                           double bytes);

/// Estimates the cost of running `scenario` with its workload.
RunEstimate estimate_run(const Scenario& scenario, const Workload& workload);

/// Estimated activities from which `sgdsim run` restarts with huge pages (10^7: a few seconds).
inline constexpr double kHugePageActivities = 1e7;

/// The GLIBC_TUNABLES value (`current`: the environment's, null if unset) that asks glibc's
/// malloc for transparent huge pages (glibc.malloc.hugetlb=1) besides the tunables already set;
/// empty when no restart is due: hugetlb is set already (so a restart happens once) or
/// something is preloaded (`preloaded`: valgrind, a profiler, whose process a restart leaves).
std::string huge_page_tunables(const char* current, bool preloaded);

/// Restarts this process with the same command line and huge_page_tunables() in its
/// environment, when those are due; returns if they are not or the restart fails (the run then
/// goes on as it is). 10^5 hosts' SimGrid objects and DAG fragments span gigabytes touched at
/// random: with 4 KiB pages much of a large run goes to page faults and TLB misses.
void restart_with_huge_pages();

/// Limits of the resource guard.
struct GuardLimits {
  double warn_activities = limits::kWarnActivities;  ///< above: a warning
  double max_activities = limits::kMaxActivities;    ///< above: refused
  double available_bytes = 0;         ///< memory available (MemAvailable); 0 = unknown
  double warn_memory_fraction = 0.5;  ///< above this share of available_bytes: a warning
};

/// The default limits, with MemAvailable read from /proc/meminfo.
GuardLimits default_guard_limits();

/// Checks an estimate against the limits: throws InputError naming the scenario file when a
/// hard limit is exceeded (unless `force`), returns a one-line warning when the run is large
/// (empty if not).
std::string check_run_resources(const Scenario& scenario, const RunEstimate& estimate,
                                const GuardLimits& limits, bool force);

/// Checks what `sgdsim collective` would cost (the flow schedule's messages or one analytic
/// activity, the platform's `hosts`) against the limits; throws InputError naming --ranks when a
/// hard limit is exceeded (unless `force`), returns a one-line warning when it is large.
std::string check_collective_resources(const Collective& collective, const CollectiveGroup& group,
                                       double bytes, bool flow, int hosts,
                                       const GuardLimits& limits, bool force, int jobs = 1,
                                       int iterations = 1);

/// Exit code of a run stopped by --time-limit.
inline constexpr int kTimeLimitExitCode = 3;

/// Parses a --time-limit value: seconds ("90", "2.5") or a time with a unit ("90s", "10min");
/// throws InputError unless it is > 0.
double parse_time_limit(const std::string& text);

/// Arms a wall-clock limit of `seconds` counted from `start`: when it expires, every temporary
/// output file is deleted, `out_dir` is removed if it is empty (pass "" to keep it), one line
/// goes to stderr and the process exits with kTimeLimitExitCode.
void arm_time_limit(double seconds, std::chrono::steady_clock::time_point start,
                    const std::string& out_dir);

/// The --time-limit of every subcommand but `run` (which also cleans its folder): arms the
/// limit `a` gives (if any), counted from `start`, with no folder to clean; same exit code and
/// line as `run`'s. Returns whether a limit was armed.
bool arm_time_limit_option(const Args& a, std::chrono::steady_clock::time_point start);

/// Stops an armed --time-limit; a command calls it once its result is complete, before printing
/// or writing it, so the limit never cuts an output in the middle.
void disarm_time_limit();

}  // namespace sgdsim
