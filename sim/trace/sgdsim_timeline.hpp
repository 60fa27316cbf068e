#pragma once
/// sgdsim's own timeline.json read back: per-iteration times and collectives, so that a
/// simulated run can be compared with (or validated like) a measured one.
#include <string>

#include "sim/trace/measured.hpp"
#include "sim/trace/trace_events.hpp"

namespace sgdsim {

/// True if the events come from an sgdsim timeline (otherData.time_unit names simulated time).
bool is_sgdsim_timeline(const TraceEventFile& events);

/// Imports an sgdsim timeline: iteration i ends when the last worker's "update" of i ends, and
/// its time is that end minus the previous iteration's (the first one's minus 0), exactly as
/// summary.json counts; only iterations every worker finished are kept. compute_s is the mean
/// over workers of their io, fwd and bwd tasks; comm_s and the collectives are the group
/// collectives ("comm[b]") as recorded on worker 0. `warmup_steps` is set to `warmup`.
MeasuredTrace sgdsim_timeline_trace(const TraceEventFile& events, int warmup);

/// Reads an sgdsim timeline.json; the warm-up is `warmup` if >= 0, else the
/// "warmup_iterations" of scenario.resolved.json next to the file if there is one, else 0.
MeasuredTrace read_sgdsim_timeline(const std::string& path, int warmup = -1);

/// The warm-up iterations recorded in scenario.resolved.json next to `timeline_path`, or -1.
int warmup_beside(const std::string& timeline_path);

}  // namespace sgdsim
