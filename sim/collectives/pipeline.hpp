#pragma once
/// NCCL-style pipelining: one piece of an allreduce as a small DAG of messages, repeated for
/// every piece on a periodic single-ported schedule; NCCL 2.4's double binary tree and the
/// intra-node chain as such pieces; the channel-aware contention-free time of the result.
#include <array>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// One message of one pipeline piece.
struct PieceEdge {
  int src = 0;                ///< sending rank
  int dst = 0;                ///< receiving rank
  double bytes = 0;           ///< message size
  double reduce_bytes = 0;    ///< bytes the receiver reduces
  std::vector<size_t> preds;  ///< earlier edges of the same piece whose data it needs
};

/// The messages of one piece, in a topological order.
class PieceGraph {
 public:
  /// Adds a message after `preds` (edges of this piece); returns its index.
  size_t add(int src, int dst, double bytes, double reduce_bytes, std::vector<size_t> preds);
  /// All edges so far.
  const std::vector<PieceEdge>& edges() const { return edges_; }

 private:
  std::vector<PieceEdge> edges_;
};

/// `pieces` copies of `piece` on `ranks` ranks as a periodic single-ported schedule (the
/// construction of Sanders, Speck & Traeff's two-tree algorithms): the piece's edges are
/// coloured with D colours so that no rank sends two, or receives two, of one colour (D = the
/// most messages a rank sends or receives per piece; König's theorem for bipartite multigraphs),
/// edge e of piece k takes slot D (k + lag_e) + colour_e with lag_e the least that puts it after
/// its data, and every message also waits for the previous one (by slot) on its sender's send
/// port and its receiver's receive port. No two messages ever share a rank's link, so on a
/// contention-free network the time is exactly the schedule's critical path, and a long
/// pipeline takes D messages per piece on its busiest port.
Schedule periodic_schedule(const PieceGraph& piece, int ranks, int pieces);

/// NCCL 2.4's two complementary binary trees over m members (ncclGetDtree, src/graph/trees.cc):
/// tree 0 is ncclGetBtree's in-order tree rooted at 0 with a single child; tree 1 is its mirror
/// (r -> m-1-r) for even m and its shift by one (r -> r+1 mod m) for odd m, so that most interior
/// nodes of one tree are leaves of the other.
struct DoubleBinaryTree {
  /// The trees over `members` members.
  explicit DoubleBinaryTree(int members);
  std::array<std::vector<int>, 2> parent;                 ///< -1 at the root
  std::array<std::vector<std::vector<int>>, 2> children;  ///< in NCCL's order (down0, down1)
  std::array<int, 2> root{};                              ///< root of each tree
  /// Members of tree t with every child before its parent.
  std::vector<int> bottom_up(int t) const;
};

/// Adds one piece of a double-binary-tree allreduce over `members` (ranks): tree t reduces half
/// of `piece_bytes` onto its root, then broadcasts it. ready[i]: edges member i's input waits
/// for. Returns for each member the edges after which it holds the result.
std::vector<std::vector<size_t>> add_dbt_piece(PieceGraph& g, const DoubleBinaryTree& trees,
                                               const std::vector<int>& members, double piece_bytes,
                                               const std::vector<std::vector<size_t>>& ready);

/// Adds a chain reduce of `bytes` onto members[0] (members.back() -> ... -> members[0]);
/// returns what members[0]'s sum waits for.
std::vector<size_t> add_chain_reduce(PieceGraph& g, const std::vector<int>& members, double bytes);
/// Adds a chain broadcast of `bytes` from members[0] (members[0] -> members[1] -> ...) that
/// starts after `ready`.
void add_chain_bcast(PieceGraph& g, const std::vector<int>& members, double bytes,
                     const std::vector<size_t>& ready);

/// Contention-free time of a schedule whose `channels` copies run in lockstep on the same links:
/// each message costs alpha + channels x (bytes beta + reduced bytes gamma) of its class (intra
/// when both ranks share a node of `ranks_per_node` ranks, else inter).
double channel_schedule_time_s(const Schedule& one_channel, int channels, int ranks_per_node,
                               const NetworkCost& cost);

/// `s` with `channels` interleaved copies of every step (same bytes, lockstep multiplied), in a
/// topological order.
Schedule replicate_channels(const Schedule& s, int channels);

}  // namespace sgdsim
