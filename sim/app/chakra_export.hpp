#pragma once
/// `sgdsim dag --format chakra`: a scenario's iteration as per-rank Chakra ET files, the
/// workload format of ASTRA-sim.
#include <string>
#include <vector>

#include "sim/dag/task_graph.hpp"

namespace sgdsim {

/// Rank r's trace of one iteration's fragment graph: the compute tasks of worker r as
/// COMP_NODEs (durations rounded to whole microseconds, the schema's unit), every collective
/// as a COMM_COLL_NODE of its operation (ALL_REDUCE, REDUCE_SCATTER of its bytes, ALL_GATHER of
/// one rank's part, as ASTRA-sim reads comm_size), point-to-point messages as COMM_SEND_NODE on
/// the sender and COMM_RECV_NODE on the receiver, and the graph's edges between them as
/// data_deps. Throws InputError for tasks ET cannot express (parameter-server applies).
std::vector<std::string> chakra_rank_streams(const TaskGraph& graph, int ranks);

/// Writes the streams as `<prefix>.<r>.et`; returns the file names.
std::vector<std::string> write_chakra_files(const std::vector<std::string>& streams,
                                            const std::string& prefix);

}  // namespace sgdsim
