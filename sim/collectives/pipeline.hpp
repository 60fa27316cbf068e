#pragma once
/// NCCL-style pipelining: a port-exclusive list scheduler, NCCL 2.4's double binary tree, the
/// intra-node chain, and the channel-aware contention-free time of such schedules.
#include <array>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// Builds schedules in which every rank sends at most one message and receives at most one at
/// a time (single-ported, full duplex: the model of Sanders, Speck & Traeff's two-tree
/// algorithms). Messages are placed greedily, in the order added, into the first unit-time slot
/// where their data is ready and both ports are free; each message then also waits for the
/// previous message (by slot) on its sender's send port and on its receiver's receive port. No
/// two messages of a channel ever share a rank's link, so on a contention-free network the
/// simulated time is exactly the schedule's critical path (schedule_time_s).
class PortScheduler {
 public:
  /// A scheduler for `ranks` ranks.
  explicit PortScheduler(int ranks);
  /// Adds a message that may start once `data_preds` are done; returns its id.
  uint32_t add(int src, int dst, double bytes, double reduce_bytes,
               const std::vector<uint32_t>& data_preds);
  /// The schedule, its steps ordered by slot (a topological order).
  Schedule build() const;

 private:
  struct Item {
    int src, dst;
    double bytes, reduce_bytes;
    std::vector<uint32_t> preds;
    int slot;
  };
  static bool take(std::vector<char>& busy, int slot);
  int ranks_;
  std::vector<Item> items_;
  std::vector<std::vector<char>> send_busy_, recv_busy_;
};

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

/// Adds one piece of a double-binary-tree allreduce over `members` (tree t reduces, then
/// broadcasts, half of `piece_bytes`). ready[i]: what member i's input waits for; returns for
/// each member the messages after which it holds the result.
std::vector<std::vector<uint32_t>> add_dbt_piece(PortScheduler& b, const DoubleBinaryTree& trees,
                                                 const std::vector<int>& members,
                                                 double piece_bytes,
                                                 const std::vector<std::vector<uint32_t>>& ready);

/// Adds a chain reduce of `bytes` onto members[0] (members.back() -> ... -> members[0]); returns
/// what members[0]'s sum waits for.
std::vector<uint32_t> add_chain_reduce(PortScheduler& b, const std::vector<int>& members,
                                       double bytes);
/// Adds a chain broadcast of `bytes` from members[0] (members[0] -> members[1] -> ...) that
/// starts after `ready`.
void add_chain_bcast(PortScheduler& b, const std::vector<int>& members, double bytes,
                     const std::vector<uint32_t>& ready);

/// Contention-free time of a schedule whose `channels` copies run in lockstep on the same links:
/// each message costs alpha + channels x (bytes beta + reduced bytes gamma) of its class (intra
/// when both ranks share a node of `ranks_per_node` ranks, else inter).
double channel_schedule_time_s(const Schedule& one_channel, int channels, int ranks_per_node,
                               const NetworkCost& cost);

/// `s` with `channels` interleaved copies of every step (same bytes), in a topological order.
Schedule replicate_channels(const Schedule& s, int channels);

}  // namespace sgdsim
