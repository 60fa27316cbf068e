// Resource guard and wall-clock limit of `sgdsim run`.
#include "sim/app/guards.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/analytic/platform_model.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/process.hpp"
#include "sim/core/units.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/workload/chakra_workload.hpp"

namespace sgdsim {

namespace {

// Memory per unit, measured on the data structures (rounded up): a schedule step while it is
// built (CommStep, predecessor list, CSR successors), a task of the DAG fragments in flight
// (task, Boost.Graph vertex and edges), one iteration of the recorder's per-iteration series.
constexpr double kBytesPerScheduleStep = 128;
constexpr double kBytesPerTask = 256;
constexpr double kBytesPerIteration = 64;
constexpr double kBaseBytes = 64.0 * 1024 * 1024;  // SimGrid, the binary
// SimGrid's host, link and route of one worker on a generated platform: 65,536 and 262,144
// ResNet-50 workers at fidelity analytic peaked at 373 MiB and 1.31 GiB (5.1 KiB per worker,
// tasks included), measured with /usr/bin/time on this machine.
constexpr double kBytesPerHost = 3072;
// Activities per second (README, Benchmarks): SimGrid runs 0.15 to 0.45 M/s; the analytic
// scheduler 1.4 to 2.4 M/s of CPU time at 4k-65k workers, and 0.18 M/s of wall time at 10^6
// workers on this 2-core machine shared with other jobs (load 8); plus SimGrid's platform
// load, 21 us of CPU per host at 262,144 hosts (network_model links), 60 us of wall when shared.
constexpr double kFlowRateLow = 1.5e5, kFlowRateHigh = 4.5e5;
constexpr double kAnalyticRateLow = 1e5, kAnalyticRateHigh = 3e6;
constexpr double kLoadSecondsPerHost = 6e-5;
// Compute tasks sharing one host: each completion updates every task running beside it.
// 20,000 Chakra compute nodes of one rank, all ready at once, took 11.7 s at flow fidelity and
// 2.8 s at analytic (4e8 updates: 3.4e7 and 1.4e8 per second) on this 2-core machine; an update
// counts as the share of an activity SimGrid runs in the same time (3e5 activities/s).
constexpr double kActivitiesPerSharingUpdate = 0.01;

/// Sum over the levels of a Chakra rank's compute nodes (nodes at the same depth of the
/// dependency graph can all run at once) of the level's size squared: the processor-sharing
/// updates of one iteration when the nodes of a level run together.
double chakra_sharing_updates(const std::vector<ChakraOp>& ops) {
  std::vector<int> depth(ops.size(), 0);
  std::map<int, double> width;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int p : ops[i].preds) depth[i] = std::max(depth[i], depth[static_cast<size_t>(p)] + 1);
    if (ops[i].kind == ChakraOp::Kind::compute) ++width[depth[i]];
  }
  double updates = 0;
  for (const auto& [d, n] : width) updates += n * n;
  return updates;
}

std::string human_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  return fmt::format("{:.0f} MiB", b / (1024.0 * 1024));
}

/// "10 s to 30 s": the estimate's range of wall time.
std::string human_duration(const RunEstimate& e) {
  const double lo = e.time_low_s, hi = e.time_high_s;
  auto one = [](double s) {
    if (s < 120) return fmt::format("{:.0f} s", s);
    if (s < 7200) return fmt::format("{:.0f} min", s / 60);
    return fmt::format("{:.0f} h", s / 3600);
  };
  return one(lo) + " to " + one(hi);
}

/// Ranks in one block of flow_symmetry "rotation" (1: rank by rank; sim/app/setup.cpp), or 0
/// without it.
int rotation_block(const Scenario& s) {
  if (s.flow_symmetry != FlowSymmetry::rotation || s.fidelity == Fidelity::analytic) return 0;
  if (!s.platform.generate) return 1;
  return std::max(1, PlatformModel(*s.platform.generate).rotation_block_ranks());
}

/// Whether the collective builds one block's schedule alone (Collective::block_schedule),
/// asked of two blocks.
bool builds_block_schedule(const Scenario& s, const CollectiveGroup& group, int block) {
  CollectiveGroup two = group;
  two.ranks = 2 * block;
  return block > 1 && collective_by_name(s.collective).block_schedule(two, 1e6, block);
}

}  // namespace

double collective_messages(const std::string& algorithm, const CollectiveGroup& g, double bytes) {
  return collective_by_name(algorithm).message_count(g, bytes);
}

RunEstimate estimate_run(const Scenario& s, const Workload& w) {
  RunEstimate e;
  const double workers = s.workers;
  const double buckets = std::max<size_t>(1, w.buckets.size());
  const bool flow = s.fidelity != Fidelity::analytic;
  const CollectiveGroup group = collective_group(s);

  // Compute tasks of one worker and iteration: io, fwd, one bwd per bucket, update (the
  // scheme adds its own, such as predict), and io, fwd and the bwds again for each micro-batch
  // before the last (gradient accumulation).
  const double io = w.io_s > 0 ? 1 : 0;
  const double micro_tasks = (s.scheme.accumulation_steps - 1) * (buckets + 1 + io);
  ActivityCount count;
  count.execs = workers * (buckets + 2 + io + micro_tasks);
  std::set<double> sizes;
  // flow_symmetry "rotation" runs one block's messages only (a rank's, a node's, a leaf's);
  // the schedule is built in full unless the collective builds the block's alone, and with
  // uniform compute by nodes or leaves only the block's compute tasks run.
  const int block = rotation_block(s);
  const double simulated_share = block > 0 ? block / workers : 1.0;
  const double built_share = builds_block_schedule(s, group, block) ? simulated_share : 1.0;
  if (block > 1 && s.variability.uniform_compute()) count.execs *= simulated_share;
  for (const Bucket& b : w.buckets) {
    const double m = flow ? collective_messages(s.collective, group, b.bytes) : 1.0;
    count.largest_collective = std::max(count.largest_collective, m);
    count.comms += m * simulated_share;
    if (flow && sizes.insert(b.bytes).second)
      count.schedule_bytes += m * built_share * kBytesPerScheduleStep;
  }
  if (w.chakra) {
    // A Chakra workload's own nodes: every rank's ops and messages, and the updates of
    // compute nodes that run at once on one host.
    count.execs = 0;
    double sharing = 0;
    for (const auto& ops : w.chakra->ranks) {
      count.execs += static_cast<double>(ops.size()) + 2;
      sharing += chakra_sharing_updates(ops);
    }
    count.comms += static_cast<double>(w.chakra->messages.size());
    count.execs += sharing * kActivitiesPerSharingUpdate;
  }
  count.recorder_bytes = kBytesPerIteration * s.iterations;
  if (const auto& adjust = scheme_traits(s).activities) adjust(s, count);
  e.schedule_bytes = count.schedule_bytes;
  e.messages_per_collective = count.largest_collective;
  e.activities_per_iteration = count.execs + count.comms;
  e.activities = e.activities_per_iteration * s.iterations;
  // Fragments are built one iteration ahead of the simulation: two iterations of tasks live.
  double tasks = workers * (buckets + 4 + micro_tasks) + buckets;
  if (w.chakra) {
    tasks = buckets;
    for (const auto& ops : w.chakra->ranks) tasks += static_cast<double>(ops.size()) + 4;
  }
  const double hosts = workers + scheme_dedicated_hosts(s);
  e.memory_bytes = kBaseBytes + hosts * kBytesPerHost + e.schedule_bytes +
                   2 * (tasks + count.live_tasks) * kBytesPerTask + count.recorder_bytes;
  e.analytic = !flow;
  const double load_s = hosts * kLoadSecondsPerHost;
  e.time_low_s = e.activities / (flow ? kFlowRateHigh : kAnalyticRateHigh);
  e.time_high_s = load_s + e.activities / (flow ? kFlowRateLow : kAnalyticRateLow);
  if (flow) {
    Scenario a = s;
    a.fidelity = Fidelity::analytic;
    e.as_analytic = std::make_shared<const RunEstimate>(estimate_run(a, w));
  }
  return e;
}

GuardLimits default_guard_limits() {
  GuardLimits l;
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") {
      l.available_bytes = kb * 1024;
      break;
    }
  return l;
}

std::string check_run_resources(const Scenario& s, const RunEstimate& e, const GuardLimits& l,
                                bool force) {
  const std::string shape =
      fmt::format("{} workers, {} iterations, {} fidelity{}", s.workers, s.iterations,
                  fidelity_name(s.fidelity),
                  s.fidelity == Fidelity::analytic || scheme_traits(s).ps_keys  // no allreduce
                      ? std::string()
                      : fmt::format(", {} allreduce of {:.3g} messages", s.collective,
                                    e.messages_per_collective));
  const std::string fewer =
      "use fewer iterations (or \"steady_state\" on a deterministic run) or workers";
  std::string advice = fewer;
  if (e.as_analytic) {
    // The analytic alternative with its own estimate, recommended only if it fits the limits.
    const RunEstimate& a = *e.as_analytic;
    const bool fits = a.activities <= l.max_activities &&
                      (l.available_bytes <= 0 || a.memory_bytes <= l.available_bytes);
    const std::string quote = fmt::format(
        "\"fidelity\": \"analytic\" (one activity per collective: about {:.2g} activities, {}, "
        "{} of memory)",
        a.activities, human_duration(a), human_bytes(a.memory_bytes));
    advice = fits ? "use " + quote +
                        ", fewer iterations or workers, or the \"hierarchical\" "
                        "collective"
                  : "even " + quote + " exceeds the limits: " + fewer;
  }
  if (!force) {
    if (e.activities > l.max_activities)
      throw InputError(
          s.source_file, "",
          fmt::format("this run would simulate about {:.2g} SimGrid activities ({}), "
                      "more than the limit of {:.0e} ({} of simulation): {} "
                      "(--force runs it anyway)",
                      e.activities, shape, l.max_activities, human_duration(e), advice));
    if (l.available_bytes > 0 && e.memory_bytes > l.available_bytes)
      throw InputError(
          s.source_file, "",
          fmt::format("this run would need about {} of memory ({}), more than the "
                      "{} available (MemAvailable, /proc/meminfo): {} (--force "
                      "runs it anyway)",
                      human_bytes(e.memory_bytes), shape, human_bytes(l.available_bytes), advice));
  }
  if (e.activities > l.warn_activities)
    return fmt::format(
        "large run: about {:.2g} SimGrid activities ({}), {} of simulation; for a quicker "
        "estimate {}",
        e.activities, shape, human_duration(e), advice);
  if (l.available_bytes > 0 && e.memory_bytes > l.warn_memory_fraction * l.available_bytes)
    return fmt::format("large run: about {} of memory ({}) of {} available; {}",
                       human_bytes(e.memory_bytes), shape, human_bytes(l.available_bytes), advice);
  return "";
}

std::string check_collective_resources(const Collective& collective, const CollectiveGroup& group,
                                       double bytes, bool flow, int hosts, const GuardLimits& l,
                                       bool force, int jobs, int iterations) {
  // Concurrent jobs hold their schedules at once; each runs its iterations in turn.
  const double per_operation = flow ? collective.message_count(group, bytes) : 1.0;
  const double activities = per_operation * jobs * iterations;
  const double memory = kBaseBytes + hosts * kBytesPerHost +
                        (flow ? per_operation * jobs * kBytesPerScheduleStep : 0.0) +
                        // the generated platform's XML, about 200 bytes per host
                        hosts * 200.0;
  RunEstimate e;
  e.activities = activities;
  e.time_low_s = activities / (flow ? kFlowRateHigh : kAnalyticRateHigh);
  e.time_high_s =
      hosts * kLoadSecondsPerHost + activities / (flow ? kFlowRateLow : kAnalyticRateLow);
  std::string shape =
      fmt::format("{} allreduce over {} ranks, {} fidelity", collective.name(), group.ranks,
                  fidelity_name(flow ? Fidelity::flow : Fidelity::analytic));
  if (jobs > 1 || iterations > 1)
    shape += fmt::format(", {} jobs x {} iterations", jobs, iterations);
  const std::string advice = flow ? "use --fidelity analytic or fewer ranks" : "use fewer ranks";
  if (!force) {
    if (activities > l.max_activities)
      throw InputError("--ranks", "",
                       fmt::format("this collective would simulate about {:.2g} SimGrid "
                                   "activities ({}), more than the limit of {:.0e} ({} of "
                                   "simulation): {} (--force runs it anyway)",
                                   activities, shape, l.max_activities, human_duration(e), advice));
    if (l.available_bytes > 0 && memory > l.available_bytes)
      throw InputError(
          "--ranks", "",
          fmt::format("this collective would need about {} of memory ({}), more "
                      "than the {} available (MemAvailable, /proc/meminfo): {} "
                      "(--force runs it anyway)",
                      human_bytes(memory), shape, human_bytes(l.available_bytes), advice));
  }
  if (activities > l.warn_activities)
    return fmt::format("large collective: about {:.2g} SimGrid activities ({}), {} of simulation",
                       activities, shape, human_duration(e));
  return "";
}

double parse_time_limit(const std::string& text) {
  return parse_time_option("--time-limit", text);
}

namespace {

char g_out_dir[4096];
char g_manifest[4096 + 32];
constexpr char kTimeLimitMessage[] =
    "sgdsim: error: --time-limit reached: run stopped, no result written\n";

extern "C" void on_time_limit(int) {
  remove_temporary_files();
  if (g_out_dir[0] != '\0') {  // a folder this run created: its manifest, then it if empty
    ::unlink(g_manifest);
    ::rmdir(g_out_dir);
  }
  ssize_t ignored = ::write(2, kTimeLimitMessage, sizeof kTimeLimitMessage - 1);
  (void)ignored;
  ::_exit(kTimeLimitExitCode);
}

}  // namespace

void arm_time_limit(double seconds, std::chrono::steady_clock::time_point start,
                    const std::string& out_dir) {
  const std::string manifest = out_dir + "/" + kManifestName;
  if (manifest.size() < sizeof g_manifest) {
    std::memcpy(g_out_dir, out_dir.c_str(), out_dir.size() + 1);
    std::memcpy(g_manifest, manifest.c_str(), manifest.size() + 1);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double left = std::max(1e-3, seconds - elapsed);
  struct sigaction sa {};
  sa.sa_handler = on_time_limit;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGALRM, &sa, nullptr);
  struct itimerval t {};
  t.it_value.tv_sec = static_cast<time_t>(left);
  t.it_value.tv_usec = static_cast<suseconds_t>((left - std::floor(left)) * 1e6);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
  if (::setitimer(ITIMER_REAL, &t, nullptr) != 0)
    throw std::runtime_error(std::string("cannot arm --time-limit: ") + std::strerror(errno));
}

bool arm_time_limit_option(const Args& a, std::chrono::steady_clock::time_point start) {
  const auto v = a.get("--time-limit");
  if (!v) return false;
  arm_time_limit(parse_time_limit(*v), start, "");
  return true;
}

void disarm_time_limit() {
  struct itimerval t {};
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

std::string huge_page_tunables(const char* current, bool preloaded) {
  constexpr const char* kTunable = "glibc.malloc.hugetlb";
  const std::string set = current != nullptr ? current : "";
  if (preloaded || set.find(kTunable) != std::string::npos) return "";
  return (set.empty() ? "" : set + ":") + kTunable + "=1";
}

namespace {

/// The environment variable that carries "PARENT:SIGNAL" across the huge-page restart.
constexpr const char* kParentDeathVariable = "SGDSIM_PARENT_DEATH";

/// After the restart: the parent-death signal again, raised at once if the parent it was set
/// for ended in between.
void rearm_parent_death() {
  const char* v = std::getenv(kParentDeathVariable);
  if (v == nullptr) return;
  int parent = 0, sig = 0;
  const bool ok = std::sscanf(v, "%d:%d", &parent, &sig) == 2 && parent > 1 && sig > 0;
  ::unsetenv(kParentDeathVariable);
  if (ok) die_with_parent(parent, sig);
}

}  // namespace

void restart_with_huge_pages() {
  const std::string tunables =
      huge_page_tunables(std::getenv("GLIBC_TUNABLES"), std::getenv("LD_PRELOAD") != nullptr);
  if (tunables.empty()) {
    rearm_parent_death();
    return;
  }
  // A process that ends with its parent (a sweep's run) passes that on: a parent dying during
  // the exec sends no signal the new image gets (seen: ppid 1 after the restart, no signal).
  int parent_death_signal = 0;
  ::prctl(PR_GET_PDEATHSIG, &parent_death_signal);
  if (parent_death_signal > 0) {
    const pid_t parent = ::getppid();
    if (parent == 1) ::raise(parent_death_signal);  // the parent is gone already
    ::setenv(kParentDeathVariable, fmt::format("{}:{}", parent, parent_death_signal).c_str(), 1);
  }
  // The command line as this process got it (NUL-separated), whoever called it.
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < line.size();) {
    const size_t end = std::min(line.find('\0', start), line.size());
    args.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  if (args.empty() || ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv.data());
  // Not restarted: the run goes on as it is (the variable stays set: no second attempt).
}

}  // namespace sgdsim
