#pragma once
/// PipeDream profiler graphs (msr-fiddle/pipedream profiler/*/profiles/<model>/graph.txt):
/// per-layer forward/backward times and parameter sizes -> sgdsim model profiles. Port of the
/// PipeDream part of models/profiles/tools/make_profiles.py.
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/trace/measured.hpp"
#include "sim/workload/profile.hpp"

namespace sgdsim {

/// One node line "nodeN -- module -- forward_compute_time=F, backward_compute_time=B,
/// activation_size=A, parameter_size=P".
struct PipeDreamNode {
  std::string name;             ///< "nodeN"
  int id = 0;                   ///< N
  std::string module;           ///< PyTorch module text
  double forward_ms = 0;        ///< forward_compute_time
  double backward_ms = 0;       ///< backward_compute_time
  double activation_bytes = 0;  ///< activation_size
  double parameter_bytes = 0;   ///< parameter_size
};

/// A parsed PipeDream graph.
struct PipeDreamGraph {
  std::string file;                                        ///< where it was read from
  std::vector<PipeDreamNode> nodes;                        ///< in file order
  std::vector<std::pair<std::string, std::string>> edges;  ///< "nodeA -- nodeB" lines
};

/// Parses graph.txt; throws InputError("file", "line N", ...) for a line that is neither a node
/// nor an edge, a duplicate node, or an edge to an undefined node.
PipeDreamGraph parse_pipedream_graph(std::istream& in, const std::string& file);

/// Reads and parses a PipeDream graph.txt (plain or gzip).
PipeDreamGraph read_pipedream_graph(const std::string& path);

/// A measured profile: nodes in forward order (Kahn's topological sort, ties by node id);
/// "Input" nodes and nodes with no parameters and no time dropped; parameters =
/// parameter_size / 4. The batch size comes from the activation sizes of the Linear layers
/// (activation_size / (4 x out_features), all must agree) or, if there is none, from
/// `batch_size` (> 0); else InputError. `name` names the profile ("" = the graph's folder).
Profile pipedream_profile(const PipeDreamGraph& graph, int batch_size = 0,
                          const std::string& name = "");

/// The graph as a MeasuredTrace: one step whose compute_s (= time_s) is the summed forward
/// and backward time of the profile's layers at its batch size; no collectives.
MeasuredTrace pipedream_trace(const PipeDreamGraph& graph, int batch_size = 0);

}  // namespace sgdsim
