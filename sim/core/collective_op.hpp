#pragma once
/// The operation a collective performs (allreduce, all-gather, reduce-scatter): shared by the
/// task graph (a comm task says which one it runs) and the collective algorithms.
#include <cstdint>
#include <optional>
#include <string>

namespace sgdsim {

/// What a collective computes. For n bytes over p ranks: allreduce leaves the sum of every
/// rank's n bytes on every rank; allgather starts from n/p bytes per rank and leaves all n on
/// every rank; reduce_scatter starts from n bytes per rank and leaves n/p of the sum on each.
enum class CollectiveOp : uint8_t { allreduce, allgather, reduce_scatter };

/// Name of an operation ("allreduce", "allgather", "reduce_scatter").
inline const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::allgather:
      return "allgather";
    case CollectiveOp::reduce_scatter:
      return "reduce_scatter";
    case CollectiveOp::allreduce:
      break;
  }
  return "allreduce";
}

/// The operation named `name`, or nullopt.
inline std::optional<CollectiveOp> collective_op_from_name(const std::string& name) {
  for (CollectiveOp op :
       {CollectiveOp::allreduce, CollectiveOp::allgather, CollectiveOp::reduce_scatter})
    if (name == collective_op_name(op)) return op;
  return std::nullopt;
}

}  // namespace sgdsim
