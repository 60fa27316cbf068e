#pragma once
/// Workers' compute chains built from a Chakra workload's per-rank nodes instead of a profile's
/// layers; the schemes then add their collectives and cross-iteration edges as for profiles.
#include <vector>

#include "sim/schemes/common.hpp"

namespace sgdsim {

/// The compute tasks of every rank (or only `only_worker`) with their trace dependencies, the
/// point-to-point messages (all ranks only), and per worker: `first` (the single root or a
/// zero-time entry task), `bwd[b]` (what collective b waits for: its one predecessor or a
/// zero-time join), `after_comm[b]` (tasks waiting for collective b), `last_bwd` (every final
/// compute or message), then predict / update as add_worker_chains does. Throws InputError for
/// messages when only one worker is built (async).
std::vector<WorkerChain> add_chakra_chains(Fragment& f, const Scenario& s, const Workload& w,
                                           const ComputeVariability& v, double predict_s,
                                           int only_worker);

}  // namespace sgdsim
