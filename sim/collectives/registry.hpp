#pragma once
/// Factories of the collective algorithms; registry.cpp lists them by name.
#include <memory>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// Ring allreduce.
std::unique_ptr<Collective> make_ring();
/// Rabenseifner's recursive halving (reduce-scatter) + doubling (allgather).
std::unique_ptr<Collective> make_recursive_halving_doubling();
/// Recursive doubling: log p exchanges of the whole buffer.
std::unique_ptr<Collective> make_recursive_doubling();
/// Binomial-tree reduce followed by a binomial broadcast.
std::unique_ptr<Collective> make_tree();
/// Intra-node reduce, inter-node allreduce among leaders, intra-node broadcast.
std::unique_ptr<Collective> make_hierarchical();
/// Parameter-server push/pull with S shards on the first S ranks.
std::unique_ptr<Collective> make_ps();
/// BytePS: intra-node reduce, partitioned push to servers, pull, intra-node broadcast.
std::unique_ptr<Collective> make_byteps();
/// Picks an algorithm by message size and ranks.
std::unique_ptr<Collective> make_auto();
/// NCCL's double binary tree, pipelined by chunk.
std::unique_ptr<Collective> make_double_binary_tree();
/// NCCL's tuner: ring or tree, whichever predicts less time.
std::unique_ptr<Collective> make_nccl();
/// NCCL tuner's latency model (Simple protocol) paid once, then the ring's data movement.
std::unique_ptr<Collective> make_nccl_tuner();

}  // namespace sgdsim
