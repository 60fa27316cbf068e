// NCCL's double binary tree allreduce (NCCL 2.4; Sanders, Speck & Traeff 2009): two
// complementary binary trees over the ranks (ncclGetDtree), each reducing its half of the data
// up to its root and broadcasting the result back down, pipelined in pieces of at most
// kChunksInFlight chunks of chunk_bytes (one piece when chunk_bytes is 0), on `channels`
// concurrent copies. Every rank sends one message and receives one at a time (single-ported,
// full duplex), so no link carries two messages of a channel at once. Leaves out NCCL's
// intra-node chain (that is `hierarchical` with intra_algorithm "chain" and inter_algorithm
// "double_binary_tree"), its chunk-size halving for small messages and LL/LL128 protocols; with
// several ranks per node the ranks' inter-node messages share node links and the flow level is
// slower than formula_s.
#include <algorithm>

#include "sim/collectives/pipeline.hpp"
#include "sim/collectives/registry.hpp"

namespace sgdsim {

namespace {

class DoubleBinaryTreeAllreduce final : public Collective {
 public:
  std::string name() const override { return "double_binary_tree"; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    return replicate_channels(one_channel(g, bytes), std::max(1, g.channels));
  }

  // The critical path of the port-exclusive schedule: with one cost c per message (one link
  // class, no reduction cost) it is S(p, m) (a + c) for S the schedule's slot count, about
  // 4m + 4 log2 p for m pieces.
  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    return channel_schedule_time_s(one_channel(g, n), g.channels, g.ranks_per_node, c);
  }

 private:
  static Schedule one_channel(const CollectiveGroup& g, double bytes) {
    const int p = g.ranks, channels = std::max(1, g.channels);
    const double per_channel = bytes / channels;
    const int pieces = pipeline_pieces(per_channel / 2, g.chunk_bytes);
    PortScheduler b(p);
    const DoubleBinaryTree trees(p);
    std::vector<int> members(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) members[i] = i;
    const std::vector<std::vector<uint32_t>> none(static_cast<size_t>(p));
    for (int k = 0; p > 1 && k < pieces; ++k)
      add_dbt_piece(b, trees, members, per_channel / pieces, none);
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Collective> make_double_binary_tree() {
  return std::make_unique<DoubleBinaryTreeAllreduce>();
}

}  // namespace sgdsim
