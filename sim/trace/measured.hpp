#pragma once
/// What the importers extract from measured runs: per-iteration step times, per-collective
/// sizes and durations, ranks; a common shape for every source format.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/workload/profile.hpp"

namespace sgdsim {

/// "Not measured" marker for optional times and sizes.
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

/// One measured training iteration (a Kineto ProfilerStep, an sgdsim iteration, ...).
struct MeasuredStep {
  int64_t step = 0;      ///< step number as in the source (ProfilerStep#N, iteration)
  double start_s = 0;    ///< start in the source's clock
  double time_s = 0;     ///< duration of the step
  double compute_s = 0;  ///< compute time in the step (GPU busy, or simulated compute)
  double comm_s = 0;     ///< summed durations of the step's collectives
  double backward_start_s = kUnknown;  ///< offset of the first backward op from the step start
  double backward_end_s = kUnknown;    ///< offset of the end of the last backward op
};

/// One measured collective operation (or one message size of a benchmark log).
struct MeasuredCollective {
  int64_t step = -1;           ///< step it belongs to (-1: none, e.g. a benchmark log)
  int index = 0;               ///< order within its step (by start time) or within the log
  std::string name;            ///< normalized collective name: allreduce, broadcast, alltoall, ...
  double bytes = kUnknown;     ///< message size (NaN if the source does not say)
  double time_s = 0;           ///< duration
  double start_s = kUnknown;   ///< offset of its start from the step start (GPU kernel start)
  double launch_s = kUnknown;  ///< offset of its CPU-side launch from the step start
  int group_size = 0;          ///< ranks taking part (0: unknown)
  std::string detail;          ///< source-specific detail (kernel name, blobs, ...)
};

/// Everything imported from one measured file.
struct MeasuredTrace {
  std::string file;                             ///< where it was read from
  std::string format;                           ///< kineto, chrome, sgdsim, osu, nccl-tests, ...
  int rank = -1;                                ///< rank that recorded it (-1: unknown)
  int world_size = 0;                           ///< ranks of the job (0: unknown)
  std::string device;                           ///< device name, if the source says
  std::vector<MeasuredStep> steps;              ///< iterations in time order
  std::vector<MeasuredCollective> collectives;  ///< collectives in time order
  int warmup_steps = 0;                         ///< leading steps left out of the statistics
  std::vector<std::string> notes;               ///< how quantities were derived
};

/// Steady-state statistics of a trace (steps after `warmup_steps`).
struct TraceStats {
  int steps = 0;                     ///< steps counted
  double step_mean_s = kUnknown;     ///< mean step time
  double step_median_s = kUnknown;   ///< median step time
  double step_min_s = kUnknown;      ///< fastest step
  double step_max_s = kUnknown;      ///< slowest step
  double compute_mean_s = kUnknown;  ///< mean compute per step
  double comm_mean_s = kUnknown;     ///< mean collective time per step
  int collectives = 0;               ///< collectives in the counted steps (all, for logs)
  double collective_bytes = 0;       ///< their summed sizes (known sizes only)
  double collective_time_s = 0;      ///< their summed durations
};

/// Statistics of the steps after `trace.warmup_steps`.
TraceStats trace_stats(const MeasuredTrace& trace);

/// The trace as JSON: {"file","format","rank","world_size","device","warmup_steps","stats",
/// "steps":[{"step","time_s","compute_s","comm_s"}],"collectives":[{"step","index","name",
/// "bytes","time_s"}],"notes"} (unknown values are null).
nlohmann::json trace_to_json(const MeasuredTrace& trace);

/// Bytes of one element of a Kineto/PyTorch dtype name ("Float" 4, "Half" 2, ...); 0 if unknown.
int dtype_bytes(const std::string& dtype);

/// Lower-case letters and digits only: "AllReduce", "all_reduce" -> "allreduce".
std::string normalize_collective_name(const std::string& name);

/// A profile as JSON text in the models/profiles layout (header keys, then one layer a line);
/// `notes` goes into the "notes" key.
std::string profile_json_text(const Profile& profile, const std::string& notes);

/// A duration for people: "1.2345 s", "12.3456 ms" or "12.345 us" ("-" if not finite).
std::string human_time(double time_s);

/// Relative error (simulated - measured) / measured.
inline double relative_error(double simulated, double measured) {
  return (simulated - measured) / measured;
}

}  // namespace sgdsim
