#pragma once
/// Turns finished tasks into result files: iterations.csv and timeline.json are streamed
/// under temporary names; summary.json and scenario.resolved.json are written at the end.
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "sim/core/files.hpp"
#include "sim/coupling/trainer.hpp"
#include "sim/engine/engine.hpp"
#include "sim/report/fixed_decimal.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Steady-state statistics of a series.
struct SeriesStats {
  double mean = 0;  ///< arithmetic mean
  double p50 = 0;   ///< median (nearest rank)
  double p99 = 0;   ///< 99th percentile (nearest rank)
};

/// Mean and nearest-rank percentiles of `values` (zeros if empty).
SeriesStats series_stats(std::vector<double> values);

/// Collects per-worker iteration statistics and the timeline while a run proceeds.
class RunRecorder : public TaskObserver {
 public:
  /// Opens the streamed outputs in `out_dir` (which must exist).
  RunRecorder(const Scenario& scenario, const Workload& workload, std::filesystem::path out_dir,
              int update_lag = 0);
  void task_done(const Task& task, double start_s, double end_s) override;
  void task_started(const Task& task, double start_s) override;
  /// Starts loading the worker's figures of the task's iteration (and an apply's pulled
  /// version): 10^4 workers' figures are larger than the caches.
  void prefetch(const Task& task) const override;
  /// True once `steady_state` consecutive iterations took the same time (when active).
  bool should_stop() const override { return steady_stopped_; }
  /// Writes summary.json (with `extra` merged in) and scenario.resolved.json, then renames
  /// every output into place. Statistics cover the iterations every worker completed.
  nlohmann::json finish(const EngineResult& result, double wall_time_s,
                        const nlohmann::json& extra = nlohmann::json::object());

 private:
  struct Pending {
    /// One worker's figures side by side (10^4 workers' tasks arrive in no order: one cache
    /// line per task, not three).
    struct Worker {
      double start = -1, compute = 0, update = 0;
    };
    std::vector<Worker> of;  ///< per worker
    int updates_done = 0;
  };
  void timeline_event(const char* name, const char* cat, int pid, int tid, double start_s,
                      double end_s, const nlohmann::json& args);
  /// The track (tid) of worker `pid`'s track group `base_tid` free over [start_ns, end_ns):
  /// concurrent slices (pushes to several shards, applies on several servers) get tracks of
  /// their own, since Chrome trace slices on one thread must nest.
  int free_track(int pid, int base_tid, int64_t start_ns, int64_t end_ns);

  const Scenario& scenario_;
  const Workload& workload_;
  std::filesystem::path out_dir_;
  AtomicFile iterations_csv_;
  std::unique_ptr<AtomicFile> timeline_;
  bool first_event_ = true;
  // Per (worker, track group): the latest end (ns) of each of its tracks.
  std::map<std::pair<int, int>, std::vector<int64_t>> tracks_;
  // Per iteration (async's workers drift over many at once: an index, not a map's search), and
  // the per-worker arrays of finished ones, reused (10^5 workers: megabytes of fresh pages each).
  std::vector<Pending> pending_;
  std::vector<std::vector<Pending::Worker>> spare_of_;
  std::vector<double> last_end_;       // per worker
  std::vector<double> worker_time_;    // per worker: steady-state iteration time summed
  std::vector<int> worker_iters_;      // per worker: steady-state iterations counted
  std::vector<int> updates_done_;      // per iteration: workers that finished it
  std::vector<double> iteration_end_;  // per iteration, max over workers
  std::vector<double> comm_per_iter_;  // per iteration
  std::vector<double> compute_sum_, update_sum_,
      exposed_sum_;     // per iteration, summed over workers
  int update_lag_ = 0;  // iterations between an allreduce and the update applying it
  // Parameter-server versions (async): per shard, and the version each worker last pulled.
  std::vector<int64_t> version_;
  std::vector<int64_t> pulled_;  // [worker * shards + shard]: one array, not a vector per worker
  // Pairwise gossip (adpsgd): averagings that changed each replica, and the count each worker
  // read at its forward pass (empty for other schemes).
  std::vector<int64_t> averaged_, read_;
  // Staleness -> count: below kDenseStaleness in an array (an async run of 10^4 workers has as
  // many distinct values, and one map lookup per apply chased pointers), above it in a map.
  static constexpr int64_t kDenseStaleness = 1 << 20;
  std::vector<int64_t> staleness_dense_;
  std::map<int64_t, int64_t> staleness_;
  /// The pending figures of `iteration`, its per-worker array (re)made if it has none.
  Pending& pending_of(int iteration);
  /// Counts one applied gradient of staleness `staleness`.
  void count_staleness(int64_t staleness);
  /// Appends one iterations.csv row (worker, iteration, then the seconds) to `row_`.
  void write_row(int worker, int iteration, const std::array<double, 7>& values);
  /// Writes the rows gathered in `row_` to iterations.csv.
  void flush_rows();
  /// A column's last value and its text (",%.9f"; empty: none yet).
  struct CachedField {
    uint64_t bits = 0;
    uint32_t size = 0;
    std::array<char, kFixed9MaxChars> text{};
  };
  static constexpr size_t kRowFlushBytes = 1 << 16;
  fmt::memory_buffer row_;                 // iterations.csv rows not yet written
  std::array<CachedField, 7> row_fields_;  // per column of seconds
  /// Checks the iterations completed since the last call for a steady state.
  void check_steady_state();
  bool steady_active_ = false;   // steady_state asked and the run deterministic
  bool steady_stopped_ = false;  // reached: no further iteration is built
  int steady_checked_ = 0;       // iterations checked so far
  int steady_run_ = 0;           // consecutive steady iterations of equal time
  double steady_time_s_ = 0;     // their time
};

/// Writes convergence.csv (simulated time, iteration, test loss, test accuracy) atomically.
void write_convergence(const std::filesystem::path& dir,
                       const std::vector<ConvergencePoint>& points);

}  // namespace sgdsim
