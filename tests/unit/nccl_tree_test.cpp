// nccl_tuner's choice between NCCL's ring and tree, and the tree's volumes: on two nodes the tree
// sends each byte once through a node's NIC, the ring 2 (p - 1) / p times; calibrate nccl-tests
// reads a log with the algorithm NCCL ran there.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/collectives/collective.hpp"
#include "sim/trace/nccl_calibration.hpp"

using namespace sgdsim;

namespace {

/// 2 x 12 GB/s socket channels and a 21 GB/s NVLink path inside a node (NCCL's topo.h speeds).
CollectiveGroup tcp_group(int ranks, int per_node) {
  CollectiveGroup g{ranks, per_node, 0, "ring"};
  g.tuner_channels = 2;
  g.tuner_channel_Bps = 12e9;
  g.tuner_intra_channel_Bps = 21e9;
  g.step_latency_intra_s = 3.4e-6;
  g.step_latency_inter_s = 14e-6;
  return g;
}

/// The network of 1/b per byte between nodes, 100x faster inside a node, no alphas.
NetworkCost cost(double b) {
  return {{0, b, 0}, {0, b / 100, 0}};
}

}  // namespace

// NCCL's model: on two nodes of 8 GPUs the tree runs at its intra-node speed (raised to at most
// twice the network's), so it wins for large sizes; from 3 nodes on it runs at the network's
// speed and the ring wins. Without a faster intra-node path, or with NCCL_ALGO, no tree.
TEST(NcclTree, NcclPicksTheTreeOnTwoNodesAndTheRingBeyond) {
  const double n = 1 << 30;
  EXPECT_TRUE(nccl_tuner_picks_tree(tcp_group(16, 8), n));
  EXPECT_FALSE(nccl_tuner_picks_tree(tcp_group(24, 8), n));
  EXPECT_FALSE(nccl_tuner_picks_tree(tcp_group(64, 8), n));
  CollectiveGroup flat = tcp_group(16, 8);
  flat.tuner_intra_channel_Bps = 0;
  EXPECT_FALSE(nccl_tuner_picks_tree(flat, n));
  CollectiveGroup ring = tcp_group(16, 8), tree = tcp_group(64, 8);
  ring.nccl_algo = "ring";
  tree.nccl_algo = "tree";
  EXPECT_FALSE(nccl_tuner_picks_tree(ring, n));
  EXPECT_TRUE(nccl_tuner_picks_tree(tree, n));
  EXPECT_EQ(nccl_algo_from_env("Ring"), "ring");
  EXPECT_EQ(nccl_algo_from_env("TREE"), "tree");
  EXPECT_EQ(nccl_algo_from_env("Ring,Tree"), "auto");
}

// The tree's data term is its busiest NIC's volume: the message once on two nodes, twice on 8
// (an inner node of one tree, a leaf of the other); the ring's is 2 (p - 1) / p of it. With
// NCCL_ALGO each pays its own latency: the ring 2 (p - 1) steps, 2n of them between nodes
// (NCCL's count), the tree 2 (7 intra + log2(nodes) inter). On one node the data stays on the ring.
TEST(NcclTree, TreeMovesItsOwnVolumePerNic) {
  const Collective& t = collective_by_name("nccl_tuner");
  const double n = 1 << 28, b = 1 / 10e9;
  for (const auto& [ranks, nic_volume] : {std::pair{16, 1.0}, {64, 2.0}}) {
    CollectiveGroup tree = tcp_group(ranks, 8), ring = tcp_group(ranks, 8);
    tree.nccl_algo = "tree";
    ring.nccl_algo = "ring";
    EXPECT_EQ(t.chosen(tree, n), "nccl_tuner(tree)");
    const double ring_volume = 2.0 * (ranks - 1) / ranks;
    const int nodes = ranks / 8, log2_nodes = ranks == 16 ? 1 : 3;
    const double ring_latency_s = (2 * (ranks - 1) - 2 * nodes) * 3.4e-6 + 2 * nodes * 14e-6;
    const double tree_latency_s = 2 * (7 * 3.4e-6 + log2_nodes * 14e-6);
    EXPECT_NEAR(t.schedule(tree, n).start_delay_s - t.schedule(ring, n).start_delay_s,
                tree_latency_s - ring_latency_s, 1e-15)
        << ranks;
    EXPECT_NEAR(t.formula_s(tree, n, cost(b)) - t.formula_s(ring, n, cost(b)),
                (nic_volume - ring_volume) * n * b + tree_latency_s - ring_latency_s, 1e-12)
        << ranks;
    // The schedule carries those volumes: node 0's first rank sends them to other nodes.
    const Schedule s = t.schedule(tree, n);
    double out = 0;
    for (const CommStep& st : s.steps)
      if (st.src == 0 && st.dst >= 8) out += st.bytes;
    EXPECT_LE(out, nic_volume * n + 1e-6);
    EXPECT_GE(out, n / 2);
  }
  CollectiveGroup one = tcp_group(8, 8);
  one.nccl_algo = "tree";
  CollectiveGroup one_ring = one;
  one_ring.nccl_algo = "ring";
  EXPECT_EQ(t.formula_s(one, n, cost(b)), t.formula_s(one_ring, n, cost(b)));
}

// A 2-node log made by NCCL's tree is read with the tree: the fit recovers the network that made
// it; read as a ring it would take the network for 2 (p - 1) / p times faster.
TEST(NcclTree, CalibrationReadsATwoNodeLogWithTheTree) {
  const Collective& t = collective_by_name("nccl_tuner");
  NcclOptions o;
  o.tuner_channels = 2;
  o.tuner_channel_Bps = 12e9;
  o.tuner_intra_channel_Bps = 21e9;
  o.launch_latency_s = 20e-6;
  const NetworkCost made = cost(1 / 5e9);
  std::ostringstream text;
  for (int r = 0; r < 16; ++r)
    text << "#  Rank " << r << " Pid 1 on host-" << r / 8 << " device " << r % 8
         << " [0x00] V100\n";
  text << "host-0:1:1 [0] NCCL INFO NCCL version 2.8.4+cuda11.1\n";
  const CollectiveGroup g = nccl_group({16, 8, 2}, o);
  for (double n = 1 << 20; n <= 1.1e9; n *= 4)
    text << static_cast<long long>(n) << " " << static_cast<long long>(n / 4) << " float sum "
         << t.formula_s(g, n, made) * 1e6 << " 1 1 0 " << t.formula_s(g, n, made) * 1e6
         << " 1 1 0\n";
  std::istringstream in(text.str());
  const NcclTestsLog log = parse_nccl_tests_log(in, "tree.log");
  EXPECT_EQ(log.nccl_version, "2.8.4+cuda11.1");
  EXPECT_TRUE(log.nccl_algo.empty());
  const AlphaBeta intra = made.intra;
  const NcclFit fit = fit_nccl_tests(log, t, o, 1 << 20, intra);
  EXPECT_NEAR(1 / fit.cost.inter.beta_s_per_byte, 5e9, 0.02 * 5e9);
  NcclOptions ring = o;
  ring.nccl_algo = "ring";
  const NcclFit as_ring = fit_nccl_tests(log, t, ring, 64 << 20, intra);
  EXPECT_GT(1 / as_ring.cost.inter.beta_s_per_byte, 1.7 * 5e9);
}

// NCCL_DEBUG=INFO lines name NCCL_ALGO as NCCL read it.
TEST(NcclTree, LogStatesNcclAlgo) {
  std::istringstream in(
      "#  Rank  0 Pid 1 on a device 0 [0x00] V100\n#  Rank  1 Pid 1 on b device 0 [0x00] V100\n"
      "a:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "1048576 262144 float sum 100.0 1 1 0 100.0 1 1 0\n");
  EXPECT_EQ(parse_nccl_tests_log(in, "ring.log").nccl_algo, "ring");
}
