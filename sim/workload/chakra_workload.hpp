#pragma once
/// A workload given as per-rank Chakra execution traces (scenario `workload.chakra`): the ranks'
/// nodes as operations with their dependencies, the collectives matched across ranks and the
/// sends matched to their receives, checked for what the schemes rely on.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/workload/chakra_et.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// One node of one rank's iteration.
struct ChakraOp {
  /// What the node does.
  enum class Kind : uint8_t { compute, collective, send, recv };
  Kind kind = Kind::compute;  ///< what it does
  bool backward = false;      ///< compute: its name says backward ("bwd", "backward", "grad")
  uint64_t node_id = 0;       ///< id in the rank's file
  std::string name;           ///< node name
  double duration_s = 0;      ///< compute: duration_micros
  int collective = -1;        ///< collective: index in ChakraProgram::collectives
  int message = -1;           ///< send / recv: index in ChakraProgram::messages
  std::vector<int> preds;     ///< indices (in this rank's op list) of the ops it waits for
};

/// A collective all ranks take part in, in the order they run (sgdsim's collective stream).
struct ChakraCollectiveOp {
  ChakraCollective type = ChakraCollective::all_reduce;  ///< CollectiveCommType
  double bytes = 0;                                      ///< comm_size
};

/// A point-to-point message: a send node of `src` matched to a receive node of `dst`.
struct ChakraMessage {
  int src = 0;       ///< sending rank
  int dst = 0;       ///< receiving rank
  int64_t tag = 0;   ///< comm_tag
  double bytes = 0;  ///< comm_size
};

/// Every rank's iteration, ready for the schemes.
struct ChakraProgram {
  std::vector<std::string> files;               ///< rank r's ET file
  std::vector<std::vector<ChakraOp>> ranks;     ///< ops of each rank, in a topological order
  std::vector<ChakraCollectiveOp> collectives;  ///< collectives in stream order
  std::vector<ChakraMessage> messages;          ///< messages, in the senders' order
};

/// Matches the ranks' traces (trace r is rank r): collectives by their order in each rank's
/// topological order (same type and size on every rank), sends to receives by (source,
/// destination, tag) in order; throws InputError naming the file and node for a mismatch, a node
/// kind sgdsim does not model, a cycle, or a collective other than ALL_REDUCE, ALL_GATHER and
/// REDUCE_SCATTER.
ChakraProgram build_chakra_program(const std::vector<ChakraTrace>& traces);

/// The operation of a Chakra collective type sgdsim models (ALL_REDUCE, ALL_GATHER,
/// REDUCE_SCATTER), or nullopt.
std::optional<CollectiveOp> chakra_collective_op(ChakraCollective type);

/// Whether every bucket of `w` is an allreduce (always for profiles; a Chakra workload's
/// ALL_GATHER and REDUCE_SCATTER nodes run under `sync` only).
bool chakra_only_allreduces(const Workload& w);

/// The workload of a scenario whose `workload.chakra` names ET files: the program plus the
/// summary quantities (rank 0's compute, one bucket per collective, gradient bytes = the
/// collectives' bytes); throws InputError where the scenario asks what the traces cannot give.
Workload load_chakra_workload(const Scenario& scenario);

}  // namespace sgdsim
