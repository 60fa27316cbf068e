// Dependency structure of the BytePS-style collective: who sends what to whom, bytes conserved,
// per-node NIC traffic, and where servers sum.
#include <gtest/gtest.h>

#include <map>

#include "sim/collectives/collective.hpp"

using namespace sgdsim;

namespace {

CollectiveGroup byteps_group(int nodes, int per_node, const std::string& placement, int servers,
                             double partition_bytes) {
  CollectiveGroup g{nodes * per_node, per_node, servers, "ring"};
  g.server_placement = placement;
  g.partition_bytes = partition_bytes;
  return g;
}

/// Node of a rank; dedicated servers (ranks after the workers) are nodes of their own.
int node_of(int rank, const CollectiveGroup& g) {
  return rank < g.ranks ? rank / g.ranks_per_node : g.ranks / g.ranks_per_node + rank - g.ranks;
}

struct Traffic {
  std::map<int, double> out, in;  // bytes leaving / entering each node's NIC
};

Traffic nic_traffic(const Schedule& s, const CollectiveGroup& g) {
  Traffic t;
  for (const auto& st : s.steps)
    if (node_of(st.src, g) != node_of(st.dst, g)) {
      t.out[node_of(st.src, g)] += st.bytes;
      t.in[node_of(st.dst, g)] += st.bytes;
    }
  return t;
}

/// Predecessor lists rebuilt from the CSR successors.
std::vector<std::vector<uint32_t>> preds_of(const Schedule& s) {
  std::vector<std::vector<uint32_t>> p(s.steps.size());
  for (uint32_t i = 0; i < s.steps.size(); ++i)
    for (uint32_t k = s.succ_offsets[i]; k < s.succ_offsets[i + 1]; ++k) p[s.succ[k]].push_back(i);
  return p;
}

}  // namespace

TEST(Byteps, ColocatedMessagesBytesAndNicTraffic) {
  const Collective& c = collective_by_name("byteps");
  const int nodes = 4, d = 4;
  const double part = 4096000, bytes = 8 * part;  // 8 parts, 2 per server
  const CollectiveGroup g = byteps_group(nodes, d, "colocated", 0, part);
  EXPECT_EQ(c.extra_ranks(g), 0);
  const Schedule s = c.schedule(g, bytes);
  int intra = 0, pushes = 0, pulls = 0;
  double summed = 0;
  for (const auto& st : s.steps) {
    ASSERT_LT(st.src, g.ranks);
    ASSERT_LT(st.dst, g.ranks);
    if (node_of(st.src, g) == node_of(st.dst, g)) {
      ++intra;
      EXPECT_DOUBLE_EQ(st.bytes, bytes);  // trees move the whole tensor
      EXPECT_FALSE(st.server_reduce);
      continue;
    }
    // Network messages only between local roots (rank 0 of a node), one part each.
    EXPECT_EQ(st.src % d, 0);
    EXPECT_EQ(st.dst % d, 0);
    EXPECT_DOUBLE_EQ(st.bytes, part);
    if (st.server_reduce) {
      ++pushes;
      summed += st.reduce_bytes;
    } else {
      ++pulls;
      EXPECT_EQ(st.reduce_bytes, 0);
    }
  }
  EXPECT_EQ(intra, nodes * 2 * (d - 1));  // binomial reduce and broadcast inside each node
  EXPECT_EQ(pushes, 8 * (nodes - 1));     // each part from every node but its server's
  EXPECT_EQ(pulls, 8 * (nodes - 1));
  EXPECT_DOUBLE_EQ(summed, (nodes - 1) * bytes);  // servers add the N-1 remote contributions
  // Each NIC carries 2 (N-1)/N of the gradient each way (a ring's traffic); today's ps with one
  // shard per rank carries far more.
  const Traffic t = nic_traffic(s, g);
  for (int n = 0; n < nodes; ++n) {
    EXPECT_NEAR(t.out.at(n), 2.0 * (nodes - 1) / nodes * bytes, 1e-6 * bytes);
    EXPECT_NEAR(t.in.at(n), 2.0 * (nodes - 1) / nodes * bytes, 1e-6 * bytes);
  }
  const CollectiveGroup flat{nodes * d, d, 0, "ring"};
  const Traffic ps = nic_traffic(collective_by_name("ps").schedule(flat, bytes), flat);
  for (int n = 0; n < nodes; ++n) EXPECT_GT(ps.out.at(n), 3.9 * t.out.at(n));
}

TEST(Byteps, PullOfAPartWaitsForEveryPushOfIt) {
  const Collective& c = collective_by_name("byteps");
  const CollectiveGroup g = byteps_group(3, 2, "colocated", 0, 1e6);
  const Schedule s = c.schedule(g, 7e6);  // 7 parts over 3 servers: waves of 3, 3, 1
  const auto preds = preds_of(s);
  std::map<int, std::vector<uint32_t>> pushes_into;  // server rank -> pushes, in wave order
  for (uint32_t i = 0; i < s.steps.size(); ++i) {
    const auto& st = s.steps[i];
    if (st.server_reduce) pushes_into[st.dst].push_back(i);
  }
  // Every pull (server -> root) names among its predecessors the 2 pushes of its part.
  int pulls = 0;
  for (uint32_t i = 0; i < s.steps.size(); ++i) {
    const auto& st = s.steps[i];
    if (st.server_reduce || node_of(st.src, g) == node_of(st.dst, g)) continue;
    ++pulls;
    int from_pushes = 0;
    for (uint32_t p : preds[i])
      if (s.steps[p].server_reduce && s.steps[p].dst == st.src) ++from_pushes;
    EXPECT_EQ(from_pushes, 2) << "pull " << i;
  }
  EXPECT_EQ(pulls, 7 * 2);
  // Pipelining: the pull of wave 0 comes before the last pushes (of wave 2) in the order.
  uint32_t first_pull = 0;
  for (uint32_t i = 0; i < s.steps.size() && first_pull == 0; ++i)
    if (!s.steps[i].server_reduce && node_of(s.steps[i].src, g) != node_of(s.steps[i].dst, g))
      first_pull = i;
  EXPECT_LT(first_pull, pushes_into[0].back());
  // The next wave's push into a server waits for that server's previous wave (its sums).
  const uint32_t second = pushes_into[0][2];  // server 0's wave-1 pushes are [2], [3]
  int waits = 0;
  for (uint32_t p : preds[second]) waits += p == pushes_into[0][0] || p == pushes_into[0][1];
  EXPECT_EQ(waits, 2);
}

TEST(Byteps, DedicatedServersAreRanksAfterTheWorkers) {
  const Collective& c = collective_by_name("byteps");
  const int nodes = 2, d = 2, servers = 3;
  const CollectiveGroup g = byteps_group(nodes, d, "dedicated", servers, 1e6);
  EXPECT_EQ(c.extra_ranks(g), servers);
  const double bytes = 6e6;
  const Schedule s = c.schedule(g, bytes);
  EXPECT_EQ(s.ranks, g.ranks + servers);
  std::map<int, double> summed;
  int pushes = 0, pulls = 0;
  for (const auto& st : s.steps) {
    if (st.server_reduce) {
      ++pushes;
      EXPECT_GE(st.dst, g.ranks);
      EXPECT_EQ(st.src % d, 0);
      summed[st.dst] += st.reduce_bytes;
    } else if (st.src >= g.ranks) {
      ++pulls;
      EXPECT_LT(st.dst, g.ranks);
    } else {
      EXPECT_EQ(node_of(st.src, g), node_of(st.dst, g));  // the rest stays inside a node
    }
  }
  EXPECT_EQ(pushes, 6 * nodes);  // every node pushes every part
  EXPECT_EQ(pulls, 6 * nodes);
  for (int sv = 0; sv < servers; ++sv)  // round robin: 2 parts per server, from both nodes
    EXPECT_DOUBLE_EQ(summed.at(g.ranks + sv), 2 * 1e6 * nodes);
  // A worker NIC sends the gradient once and receives it once.
  const Traffic t = nic_traffic(s, g);
  for (int n = 0; n < nodes; ++n) {
    EXPECT_NEAR(t.out.at(n), bytes, 1e-6 * bytes);
    EXPECT_NEAR(t.in.at(n), bytes, 1e-6 * bytes);
  }
}

TEST(Byteps, PartitionsFollowPartitionBytes) {
  const Collective& c = collective_by_name("byteps");
  auto parts = [&](double bytes, double partition) {
    const CollectiveGroup g = byteps_group(2, 1, "colocated", 0, partition);
    int pushes = 0;
    for (const auto& st : c.schedule(g, bytes).steps) pushes += st.server_reduce;
    return pushes;  // 2 nodes: one push per part
  };
  EXPECT_EQ(parts(4096000, 4096000), 1);
  EXPECT_EQ(parts(4096001, 4096000), 2);
  EXPECT_EQ(parts(25e6, 4096000), 7);
  EXPECT_EQ(parts(25e6, 0), 1);  // 0: the tensor is one partition
  EXPECT_TRUE(c.schedule(byteps_group(1, 4, "colocated", 0, 1e6), 1e6).steps.size() == 6u);
  EXPECT_THROW(c.schedule(CollectiveGroup{5, 2, 0, "ring"}, 1e6), std::invalid_argument);
}

TEST(Byteps, FormulaIsIntraTreesPlusWaves) {
  // Two nodes co-located, one part: reduce tree, push, pull, broadcast tree.
  const Collective& c = collective_by_name("byteps");
  const AlphaBeta inter{5e-6, 1.0 / 1e9, 0}, intra{1e-6, 1.0 / 10e9, 0};
  CollectiveGroup g = byteps_group(2, 4, "colocated", 0, 0);
  const double n = 8e6;
  const double trees = 2 * 2 * (intra.alpha_s + n * intra.beta_s_per_byte);
  EXPECT_NEAR(c.formula_s(g, n, {inter, intra}),
              trees + 2 * (inter.alpha_s + n * inter.beta_s_per_byte), 1e-15);
  // Server sums of 2 GB/s between push and pull: one remote contribution per server.
  g.server_reduction_Bps = 2e9;
  EXPECT_NEAR(c.formula_s(g, n, {inter, intra}),
              trees + 2 * (inter.alpha_s + n * inter.beta_s_per_byte) + n / 2e9, 1e-15);
}
