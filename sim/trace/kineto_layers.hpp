#pragma once
/// Per-layer profile of a PyTorch (DDP) training trace, recovered from its autograd structure:
/// forward ops paired with their backward ops by sequence number, parameters counted from the
/// AccumulateGrad ops that follow each backward op, gradient bytes from the DDP buckets.
#include <optional>
#include <string>

#include "sim/trace/kineto.hpp"
#include "sim/trace/measured.hpp"
#include "sim/trace/trace_events.hpp"

namespace sgdsim {

/// The per-layer profile of a Kineto trace (`trace` imported from `events`): one layer per
/// top-level forward op that owns parameters (conv, batch-norm, linear, ...), with the
/// parameter-free ops after it folded in, plus a first layer for the step's prelude (see
/// README, "Per-layer profiles from PyTorch traces"). nullopt, with `why_not` set, when the
/// trace lacks the structure (no sequence numbers, no AccumulateGrad ops, no allreduce launch
/// of known size, layers that differ between steps).
std::optional<DdpProfile> layer_profile_from_trace(const TraceEventFile& events,
                                                   const MeasuredTrace& trace,
                                                   std::string* why_not);

/// The per-layer profile when the trace allows it, else the DDP bucket profile (whose notes
/// then say why no per-layer profile was possible). Throws InputError if neither can be made.
DdpProfile profile_from_trace(const TraceEventFile& events, const MeasuredTrace& trace);

}  // namespace sgdsim
