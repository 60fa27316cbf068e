// NCCL's double binary tree allreduce (NCCL 2.4; Sanders, Speck & Traeff 2009): two
// complementary binary trees over the ranks (ncclGetDtree), each reducing its half of the data
// up to its root and broadcasting the result back down, pipelined in pieces of at most
// kChunksInFlight chunks of chunk_bytes (one piece when chunk_bytes is 0), on `channels`
// concurrent copies. The pieces follow Sanders, Speck & Traeff's periodic single-ported
// schedule (periodic_schedule: every rank sends one message and receives one at a time, 4 per
// piece), so a long pipeline reaches their bound of 2 n b. Leaves out NCCL's
// intra-node chain (that is `hierarchical` with intra_algorithm "chain" and inter_algorithm
// "double_binary_tree"), its chunk-size halving for small messages and LL/LL128 protocols; with
// several ranks per node the ranks' inter-node messages share node links and the flow level is
// slower than formula_s.
#include <algorithm>

#include "sim/collectives/pipeline.hpp"

namespace sgdsim {

namespace {

class DoubleBinaryTreeAllreduce final : public Collective {
 public:
  std::string name() const override { return "double_binary_tree"; }
  int oldest_nccl_minor() const override { return 4; }  // NCCL 2.4's tree

  double message_count(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks, c = std::max(1, g.channels);
    if (p <= 1) return 0;
    return 4.0 * (p - 1) * c * pipeline_pieces(bytes / c / 2, g.chunk_bytes);
  }
  bool runs_among_leaders() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    return replicate_channels(one_channel(g, bytes), std::max(1, g.channels));
  }

  // The critical path of the schedule; with one link class and no reduction cost it is
  // K(p, m) (a + n b / (2 m)) for m pieces, K the schedule's longest chain of messages
  // (about 4m + 2.2 log2 p once m exceeds the trees' depth).
  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    return channel_schedule_time_s(one_channel(g, n), g.channels, g.ranks_per_node, c);
  }

 private:
  static Schedule one_channel(const CollectiveGroup& g, double bytes) {
    const int p = g.ranks;
    const double per_channel = bytes / std::max(1, g.channels);
    const int pieces = pipeline_pieces(per_channel / 2, g.chunk_bytes);
    PieceGraph piece;
    std::vector<int> members(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) members[i] = i;
    add_dbt_piece(piece, DoubleBinaryTree(p), members, per_channel / pieces,
                  std::vector<std::vector<size_t>>(static_cast<size_t>(p)));
    return periodic_schedule(piece, p, pieces);
  }
};

const CollectiveRegistration double_binary_tree_registration{
    std::make_unique<DoubleBinaryTreeAllreduce>()};

}  // namespace

}  // namespace sgdsim
