#pragma once
/// `sgdsim trace --format chakra`: one rank's Chakra ET file as a MeasuredTrace.
#include <string>

#include "sim/trace/measured.hpp"
#include "sim/workload/chakra_et.hpp"

namespace sgdsim {

/// True if `path` names a Chakra ET file (extension .et; the stream has no magic number).
bool looks_like_chakra(const std::string& path);

/// One step: its time the trace's critical path over recorded durations (compute nodes' and any
/// recorded on communication nodes), compute the summed COMP durations, collectives and
/// point-to-point nodes in topological order with comm_size; rank and world size from the
/// `<prefix>.<rank>.et` naming when the sibling files exist. Throws InputError if malformed.
MeasuredTrace chakra_trace(const std::string& path);

}  // namespace sgdsim
