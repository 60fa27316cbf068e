// NCCL-style collectives: pipelined ring, double binary tree, chain hierarchy and the nccl
// selector. Structure (message counts, dependencies, bytes, port exclusivity) and closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/pipeline.hpp"

using namespace sgdsim;

namespace {

CollectiveGroup group(int p, double chunk, int channels, int per_node = 1) {
  CollectiveGroup g{p, per_node};
  g.chunk_bytes = chunk;
  g.channels = channels;
  return g;
}

// Start and end of every step when each costs alpha + bytes beta (no contention).
std::vector<std::pair<double, double>> timeline(const Schedule& s, const AlphaBeta& ab) {
  std::vector<std::pair<double, double>> t(s.steps.size(), {0.0, 0.0});
  for (size_t i = 0; i < s.steps.size(); ++i) {
    t[i].second = t[i].first + ab.alpha_s + s.steps[i].bytes * ab.beta_s_per_byte;
    for (uint32_t k = s.succ_offsets[i]; k < s.succ_offsets[i + 1]; ++k)
      t[s.succ[k]].first = std::max(t[s.succ[k]].first, t[i].second);
  }
  return t;
}

// No rank sends two messages of one channel at once, nor receives two (channel copies are
// consecutive steps, `channels` apart).
void expect_port_exclusive(const Schedule& s, int channels) {
  const auto t = timeline(s, AlphaBeta{1e-6, 1e-9, 0});
  for (int side = 0; side < 2; ++side) {
    std::map<std::pair<int, size_t>, std::vector<std::pair<double, double>>> by_port;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const int rank = side == 0 ? s.steps[i].src : s.steps[i].dst;
      by_port[{rank, i % channels}].push_back(t[i]);
    }
    for (auto& [port, spans] : by_port) {
      std::sort(spans.begin(), spans.end());
      for (size_t k = 1; k < spans.size(); ++k)
        EXPECT_LE(spans[k - 1].second, spans[k].first + 1e-15)
            << (side == 0 ? "send" : "receive") << " port of rank " << port.first;
    }
  }
}

double channel_uniform_time(const Collective& c, const CollectiveGroup& g, double n,
                            const AlphaBeta& ab) {
  const double ch = std::max(1, g.channels);
  return schedule_time_s(c.schedule(g, n), [&](const CommStep& s) {
    return ab.alpha_s + ch * (s.bytes * ab.beta_s_per_byte + s.reduce_bytes * ab.gamma_s_per_byte);
  });
}

}  // namespace

TEST(Pipeline, PiecesCarryAtMostTwoChunks) {
  EXPECT_EQ(kChunksInFlight, 2);
  EXPECT_EQ(pipeline_pieces(1e9, 0), 1);
  EXPECT_EQ(pipeline_pieces(1000, 1024), 1);
  EXPECT_EQ(pipeline_pieces(2048, 1024), 1);
  EXPECT_EQ(pipeline_pieces(2049, 1024), 2);
  EXPECT_EQ(pipeline_pieces(1 << 20, 1 << 16), 8);
}

TEST(Ring, PipelinedScheduleShape) {
  const Collective& ring = collective_by_name("ring");
  // 5 ranks, 3 channels, 30000 bytes: segment 2000 per channel and rank, chunk 400 -> 3 pieces.
  Schedule s = ring.schedule(group(5, 400, 3), 30000);
  EXPECT_EQ(s.steps.size(), 2u * 4 * 5 * 3 * 3);
  double sent = 0, reduced = 0;
  for (const auto& st : s.steps) {
    EXPECT_EQ(st.dst, (st.src + 1) % 5);
    EXPECT_NEAR(st.bytes, 2000.0 / 3, 1e-9);
    EXPECT_EQ(st.lockstep, 3);
    sent += st.bytes;
    reduced += st.reduce_bytes;
  }
  // Each rank sends 2(p-1)/p of the buffer and reduces (p-1)/p of it.
  EXPECT_NEAR(sent, 5 * 2.0 * 4 / 5 * 30000, 1e-6);
  EXPECT_NEAR(reduced, 5 * 4.0 / 5 * 30000, 1e-6);
  // The first piece of step 0 on every link and channel waits for nothing; every other message
  // follows the previous one on its link, and from step 1 on the piece from the left.
  size_t roots = 0;
  for (size_t i = 0; i < s.steps.size(); ++i) roots += s.pred_count[i] == 0;
  EXPECT_EQ(roots, 5u * 3);
  expect_port_exclusive(s, 3);
}

TEST(Ring, PipelinedClosedForm) {
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta ab{3e-6, 1.0 / 10e9, 1.0 / 40e9};
  for (int p : {2, 3, 5, 8, 37})
    for (double n : {8.0, 1e6, 1e8})
      for (auto [chunk, ch] : {std::pair{0.0, 2}, {65536.0, 1}, {65536.0, 4}}) {
        const CollectiveGroup g = group(p, chunk, ch);
        const double pieces = pipeline_pieces(n / ch / p, chunk);
        const double f = 2.0 * (p - 1) * pieces * ab.alpha_s +
                         2.0 * (p - 1) / p * n * ab.beta_s_per_byte +
                         (p - 1.0) / p * n * ab.gamma_s_per_byte;
        EXPECT_NEAR(ring.formula_s(g, n, NetworkCost{ab, ab}), f, 1e-12 * f);
        EXPECT_NEAR(channel_uniform_time(ring, g, n, ab), f, 1e-9 * f)
            << p << " " << n << " " << chunk;
      }
}

TEST(Ring, OneNodeUsesTheIntraNodeCost) {
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta intra{1e-6, 1.0 / 100e9, 0}, inter{5e-6, 1.0 / 10e9, 0};
  const double one_node = ring.formula_s(group(8, 0, 1, 8), 1e6, NetworkCost{inter, intra});
  EXPECT_DOUBLE_EQ(one_node, 14 * intra.alpha_s + 14.0 / 8 * 1e6 * intra.beta_s_per_byte);
  // Across nodes the slowest link class sets every step.
  const double two_nodes = ring.formula_s(group(8, 0, 1, 4), 1e6, NetworkCost{inter, intra});
  EXPECT_DOUBLE_EQ(two_nodes, 14 * inter.alpha_s + 14.0 / 8 * 1e6 * inter.beta_s_per_byte);
}

TEST(DoubleBinaryTree, NcclTrees) {
  // NCCL's comment in src/graph/trees.cc: 12 ranks, tree 0 rooted at 0 -> 8 -> (4, 10)...,
  // tree 1 its mirror rooted at 11 -> 3.
  DoubleBinaryTree t(12);
  EXPECT_EQ(t.root[0], 0);
  EXPECT_EQ(t.children[0][0], std::vector<int>{8});
  EXPECT_EQ(t.children[0][8], (std::vector<int>{4, 10}));
  EXPECT_EQ(t.children[0][4], (std::vector<int>{2, 6}));
  EXPECT_EQ(t.children[0][10], (std::vector<int>{9, 11}));
  EXPECT_EQ(t.root[1], 11);
  EXPECT_EQ(t.children[1][11], std::vector<int>{3});
  EXPECT_EQ(t.children[1][3], (std::vector<int>{7, 1}));
  // 13 ranks: tree 1 is tree 0 shifted by one, rooted at 1 -> 9.
  DoubleBinaryTree odd(13);
  EXPECT_EQ(odd.root[1], 1);
  EXPECT_EQ(odd.children[1][1], std::vector<int>{9});
  EXPECT_EQ(odd.children[0][12], std::vector<int>{10});  // 12's second child is out of range
  for (int m : {1, 2, 3, 5, 8, 12, 13, 37, 64, 1000}) {
    DoubleBinaryTree d(m);
    for (int tree = 0; tree < 2; ++tree) {
      // A spanning tree: everyone but the root has a parent that lists it as a child.
      EXPECT_EQ(d.bottom_up(tree).size(), static_cast<size_t>(m));
      for (int r = 0; r < m; ++r) {
        EXPECT_LE(d.children[tree][r].size(), 2u);
        if (r == d.root[tree]) {
          EXPECT_EQ(d.parent[tree][r], -1);
          continue;
        }
        const auto& sib = d.children[tree][d.parent[tree][r]];
        EXPECT_NE(std::find(sib.begin(), sib.end(), r), sib.end()) << m << " " << r;
      }
    }
    // Complementary (even m): no rank is interior in both trees.
    if (m % 2 == 0) {
      for (int r = 0; r < m; ++r)
        EXPECT_FALSE(!d.children[0][r].empty() && !d.children[1][r].empty()) << m << " " << r;
    }
  }
}

TEST(DoubleBinaryTree, ScheduleStructure) {
  const Collective& dbt = collective_by_name("double_binary_tree");
  for (int p : {2, 3, 5, 8, 12, 37})
    for (auto [chunk, ch] : {std::pair{0.0, 1}, {4096.0, 1}, {4096.0, 3}}) {
      const double n = 1e5;
      const CollectiveGroup g = group(p, chunk, ch);
      const int pieces = pipeline_pieces(n / ch / 2, chunk);
      Schedule s = dbt.schedule(g, n);
      // Per channel, piece and tree: p-1 messages up and p-1 down, each half a piece.
      ASSERT_EQ(s.steps.size(), 4u * (p - 1) * pieces * ch) << p;
      std::vector<int> bcast_in(static_cast<size_t>(p), 0);
      double up = 0;
      for (const auto& st : s.steps) {
        EXPECT_NEAR(st.bytes, n / ch / pieces / 2, 1e-9);
        if (st.reduce_bytes > 0) up += st.bytes;
        if (st.reduce_bytes == 0) ++bcast_in[st.dst];
      }
      EXPECT_NEAR(up, (p - 1) * n, 1e-6);  // each tree reduces its half over p-1 edges
      // Every rank but a root gets the result of each tree it is not the root of, per piece.
      DoubleBinaryTree t(p);
      for (int r = 0; r < p; ++r)
        EXPECT_EQ(bcast_in[r], ((r != t.root[0]) + (r != t.root[1])) * pieces * ch) << p << r;
      expect_port_exclusive(s, ch);
    }
}

TEST(DoubleBinaryTree, TwoRanksClosedForm) {
  // Two ranks: per piece both trees go up in one slot and down in the next: 2m (a + n b / 2m).
  const Collective& dbt = collective_by_name("double_binary_tree");
  const AlphaBeta ab{2e-6, 1e-9, 0};
  for (double chunk : {0.0, 1024.0, 65536.0}) {
    const double n = 1e6, m = pipeline_pieces(n / 2, chunk);
    EXPECT_NEAR(dbt.formula_s(group(2, chunk, 1), n, NetworkCost{ab, ab}),
                2 * m * ab.alpha_s + n * ab.beta_s_per_byte, 1e-15);
  }
}

TEST(DoubleBinaryTree, PipeliningApproachesTheBandwidthBound) {
  // Single-ported: a rank sends 2 n over both trees (n/2 up in each, n down in the one where it
  // is interior), so a long pipeline tends to 2 n b; unpipelined it pays every level in full.
  const Collective& dbt = collective_by_name("double_binary_tree");
  const AlphaBeta ab{0, 1e-9, 0};
  const double n = 1e8;
  const double whole = dbt.formula_s(group(64, 0, 1), n, NetworkCost{ab, ab});
  const double piped = dbt.formula_s(group(64, 65536, 1), n, NetworkCost{ab, ab});
  EXPECT_GT(whole, 4 * n * ab.beta_s_per_byte);
  EXPECT_LT(piped, 2.05 * n * ab.beta_s_per_byte);
  EXPECT_GE(piped, 2 * n * ab.beta_s_per_byte * (1 - 1e-12));
}

TEST(Hierarchical, ChainOneNodeClosedForm) {
  // One node, no pipelining: the chain reduces over d-1 hops and broadcasts over d-1 hops.
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta intra{1e-6, 1.0 / 100e9, 1.0 / 50e9}, inter{5e-6, 1.0 / 10e9, 1.0 / 50e9};
  CollectiveGroup g = group(8, 0, 1, 8);
  g.intra_algorithm = "chain";
  const double n = 1e6;
  EXPECT_NEAR(h.formula_s(g, n, NetworkCost{inter, intra}),
              7 * (intra.alpha_s + n * intra.beta_s_per_byte + n * intra.gamma_s_per_byte) +
                  7 * (intra.alpha_s + n * intra.beta_s_per_byte),
              1e-15);
  // Pipelined in m pieces the chain takes (2(d-1) + 2(m-1)) hops of n/m... at most: the send
  // port of a middle rank alternates between the up and the down chain.
  g.chunk_bytes = 65536;
  const double m = pipeline_pieces(n, g.chunk_bytes);
  const double hop = intra.alpha_s + n / m * intra.beta_s_per_byte;
  const double piped =
      h.formula_s(g, n, NetworkCost{inter, AlphaBeta{intra.alpha_s, intra.beta_s_per_byte, 0}});
  EXPECT_LT(piped, 7 * 2 * (intra.alpha_s + n * intra.beta_s_per_byte));
  EXPECT_GE(piped, (14 + m - 1) * hop * (1 - 1e-12));
}

TEST(Hierarchical, ChainWithTreeAmongLeaders) {
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta intra{1e-6, 1.0 / 100e9, 0}, inter{5e-6, 1.0 / 10e9, 0};
  for (int p : {4, 8, 12, 37})
    for (auto [chunk, ch] : {std::pair{0.0, 1}, {65536.0, 2}}) {
      CollectiveGroup g = group(p, chunk, ch, 4);
      g.intra_algorithm = "chain";
      g.inter_algorithm = "double_binary_tree";
      const Schedule s = h.schedule(g, 1e6);
      const int nodes = (p + 3) / 4, pieces = pipeline_pieces(1e6 / ch, chunk);
      EXPECT_EQ(s.steps.size(),
                static_cast<size_t>(ch) * pieces * (2 * (p - nodes) + 4 * (nodes - 1)));
      // Only node leaders talk across nodes.
      for (const auto& st : s.steps)
        if (st.src / 4 != st.dst / 4) {
          EXPECT_TRUE(st.src % 4 == 0 && st.dst % 4 == 0);
        }
      expect_port_exclusive(s, ch);
      // The formula is the schedule's critical path with each class's cost.
      // An init-capture: clang 14 cannot capture a structured binding itself.
      const double t = schedule_time_s(s, [&, ch = ch](const CommStep& st) {
        const AlphaBeta& ab = st.src / 4 == st.dst / 4 ? intra : inter;
        return ab.alpha_s + ch * st.bytes * ab.beta_s_per_byte;
      });
      EXPECT_NEAR(h.formula_s(g, 1e6, NetworkCost{inter, intra}), t, 1e-12 * t);
    }
}

TEST(Nccl, PicksTheFasterOfRingAndTree) {
  const Collective& nccl = collective_by_name("nccl");
  const Collective& ring = collective_by_name("ring");
  const Collective& dbt = collective_by_name("double_binary_tree");
  const AlphaBeta ab{5e-6, 1.0 / 12.5e9, 0};
  const NetworkCost c{ab, ab};
  CollectiveGroup g = group(64, 524288, 1);
  for (double n : {8.0, 65536.0, 1e6, 1e8}) {
    const double r = ring.formula_s(g, n, c), t = dbt.formula_s(g, n, c);
    EXPECT_DOUBLE_EQ(nccl.formula_s(g, n, c), std::min(r, t)) << n;
  }
  // Latency-bound small messages take the tree (O(log p) steps), large ones the ring.
  EXPECT_LT(dbt.formula_s(g, 8, c), ring.formula_s(g, 8, c));
  const CollectiveGroup eight = group(8, 524288, 1);
  EXPECT_LT(ring.formula_s(eight, 1e8, c), dbt.formula_s(eight, 1e8, c));
  // The schedule follows the tuning cost; without one there is nothing to choose with.
  EXPECT_THROW(nccl.schedule(g, 8), std::invalid_argument);
  g.tuning_cost = c;
  EXPECT_EQ(nccl.schedule(g, 8).steps.size(), dbt.schedule(g, 8).steps.size());
  CollectiveGroup e = eight;
  e.tuning_cost = c;
  EXPECT_EQ(nccl.schedule(e, 1e8).steps.size(), ring.schedule(e, 1e8).steps.size());
  // With several ranks per node the tree is NCCL's chain + double binary tree.
  CollectiveGroup h = group(32, 524288, 1, 8);
  CollectiveGroup chain = h;
  chain.intra_algorithm = "chain";
  chain.inter_algorithm = "double_binary_tree";
  const NetworkCost two{AlphaBeta{5e-6, 1.0 / 12.5e9, 0}, AlphaBeta{1e-6, 1.0 / 100e9, 0}};
  EXPECT_DOUBLE_EQ(nccl.formula_s(h, 8, two),
                   std::min(ring.formula_s(h, 8, two),
                            collective_by_name("hierarchical").formula_s(chain, 8, two)));
}

// The Simple protocol's latency model (protocols "simple": NCCL's LL is tested apart).
TEST(NcclTuner, LatencyIsNcclsTunerRulePaidOnceBeforeTheRing) {
  const Collective& t = collective_by_name("nccl_tuner");
  const Collective& ring = collective_by_name("ring");
  CollectiveGroup g{16, 8, 0, "ring"};
  g.protocols = "simple";
  g.launch_latency_s = 5e-6;
  g.step_latency_intra_s = 3.4e-6;
  g.step_latency_inter_s = 14e-6;
  // 2 nodes of 8: ring 26 intra + 4 inter steps (144.4 us), tree 2 (7 intra + 1 inter) (75.6).
  const double lat16 = 5e-6 + 2 * (7 * 3.4e-6 + 14e-6);
  const Schedule s = t.schedule(g, 1e6), r = ring.schedule(g, 1e6);
  EXPECT_NEAR(s.start_delay_s, lat16, 1e-15);
  ASSERT_EQ(s.steps.size(), r.steps.size());
  for (size_t i = 0; i < s.steps.size(); ++i) EXPECT_EQ(s.steps[i].bytes, r.steps[i].bytes);
  EXPECT_EQ(t.chosen(g, 1e6), "nccl_tuner(tree latency)");
  // NCCL_ALGO=ring leaves no tree to compare with: the ring's own 26 intra + 4 inter steps.
  CollectiveGroup forced = g;
  forced.nccl_algo = "ring";
  EXPECT_NEAR(t.schedule(forced, 1e6).start_delay_s, 5e-6 + 26 * 3.4e-6 + 4 * 14e-6, 1e-15);
  EXPECT_EQ(t.chosen(forced, 1e6), "nccl_tuner(ring latency)");
  const AlphaBeta ab{1e-6, 1.0 / 25e9, 0};
  const NetworkCost c{ab, ab};
  EXPECT_NEAR(t.formula_s(g, 1e6, c), lat16 + ring.formula_s(g, 1e6, c), 1e-15);
  // The schedule's critical path starts after the delay.
  const double walk = schedule_time_s(
      s, [&](const CommStep& st) { return ab.alpha_s + st.bytes * ab.beta_s_per_byte; });
  EXPECT_NEAR(walk, t.formula_s(g, 1e6, c), 1e-12 * walk);
  // One node, Simple: ring and chain both take 2 (p - 1) intra steps; the ring is reported.
  CollectiveGroup one = g;
  one.ranks = 8;
  EXPECT_NEAR(t.schedule(one, 1e6).start_delay_s, 5e-6 + 14 * 3.4e-6, 1e-15);
  EXPECT_EQ(t.chosen(one, 1e6), "nccl_tuner(ring latency)");
  // One rank per node: every ring step crosses nodes; the tree has 2 floor(log2 4) levels.
  CollectiveGroup flat = g;
  flat.ranks = 4;
  flat.ranks_per_node = 1;
  EXPECT_NEAR(t.schedule(flat, 1e6).start_delay_s, 5e-6 + 4 * 14e-6, 1e-15);
  // Device memory: the input read and the output written once, 2 x bytes, with the latency.
  CollectiveGroup mem = g;
  mem.memory_Bps = 1555e9;
  EXPECT_NEAR(t.schedule(mem, 1e6).start_delay_s, lat16 + 2e6 / 1555e9, 1e-15);
  EXPECT_NEAR(t.formula_s(mem, 1e6, c), t.formula_s(g, 1e6, c) + 2e6 / 1555e9, 1e-15);
  // Nothing to do for one rank: no delay, no time.
  CollectiveGroup solo = g;
  solo.ranks = 1;
  EXPECT_TRUE(t.schedule(solo, 1e6).steps.empty());
  EXPECT_EQ(t.schedule(solo, 1e6).start_delay_s, 0.0);
  EXPECT_EQ(t.formula_s(solo, 1e6, c), 0.0);
}

// NCCL 2.8's tuner, ported from its published model: the choices README's table lists (A100
// nodes of 8 GPUs, 8 channels of 24 GB/s), re-derived independently by
// experiments/validation/nccl_protocols.py.
TEST(NcclTuner, ChoosesLikeNcclsPublishedTuner) {
  auto choice = [](int ranks, double bytes) {
    CollectiveGroup g{ranks, 8, 0, "ring"};
    const auto [algorithm, protocol] = nccl_tuner_choice(g, bytes);
    return algorithm + "/" + protocol;
  };
  EXPECT_EQ(choice(16, 65536), "tree/LL");
  EXPECT_EQ(choice(16, 131072), "ring/LL");
  EXPECT_EQ(choice(16, 262144), "tree/LL128");
  EXPECT_EQ(choice(32, 65536), "tree/LL");
  EXPECT_EQ(choice(32, 131072), "tree/LL128");
  for (int ranks : {64, 128}) {
    EXPECT_EQ(choice(ranks, 131072), "tree/LL") << ranks;
    EXPECT_EQ(choice(ranks, 262144), "tree/LL128") << ranks;
  }
  EXPECT_EQ(choice(1, 65536), "ring/Simple");  // nothing to choose
}

// tree/LL: where NCCL's tuner picks it on 2+ nodes, the latency is the fitted two-node latency,
// 2 x 5 us per further level, and each of the floor(log2 nodes) levels forwarding the message
// whole; elsewhere, and with the model off, nccl_tuner is unchanged.
TEST(NcclTuner, TreeLLWhereNcclsTunerPicksIt) {
  const Collective& t = collective_by_name("nccl_tuner");
  const Collective& ring = collective_by_name("ring");
  CollectiveGroup off{64, 8, 0, "ring"};
  off.step_latency_intra_s = 3.4e-6;
  off.step_latency_inter_s = 14e-6;
  CollectiveGroup on = off;
  on.tree_ll_latency_s = 30e-6;
  on.tree_ll_level_Bps = 2e9;
  const AlphaBeta ab{0, 1.0 / 100e9, 0};
  const NetworkCost c{ab, ab};
  const double n = 131072;  // 8 nodes: 3 levels; one LL step per channel (8 x 32 KiB)
  const double ll = 30e-6 + 2 * 2 * 5e-6 + 3 * n / 2e9;
  EXPECT_NEAR(t.formula_s(on, n, c), ll + ring.formula_s(on, n, c), 1e-15);
  EXPECT_NEAR(t.schedule(on, n).start_delay_s, ll, 1e-15);
  EXPECT_EQ(t.chosen(on, n), "nccl_tuner(tree/LL)");
  const Schedule s = t.schedule(on, n);
  const double walk =
      schedule_time_s(s, [&](const CommStep& st) { return st.bytes * ab.beta_s_per_byte; });
  EXPECT_NEAR(walk, t.formula_s(on, n, c), 1e-12 * walk);
  // 256 KiB: NCCL switches to tree/LL128, timed by the Simple model as before.
  EXPECT_EQ(t.formula_s(on, 2 * n, c), t.formula_s(off, 2 * n, c));
  EXPECT_NE(t.chosen(on, 2 * n), "nccl_tuner(tree/LL)");
  // One node, or the model off: unchanged.
  CollectiveGroup one = on, one_off = off;
  one.ranks = one_off.ranks = 8;
  EXPECT_EQ(t.formula_s(one, n, c), t.formula_s(one_off, n, c));
  EXPECT_NE(t.formula_s(off, n, c), t.formula_s(on, n, c));
  // One channel: a 64 KiB message is 2 LL steps, which pipeline through the 3 levels: (3 + 2 -
  // 1) / 2 of the message's time per level.
  CollectiveGroup narrow = on;
  narrow.tuner_channels = 1;
  ASSERT_EQ(nccl_tuner_choice(narrow, n / 2).second, "LL");
  EXPECT_NEAR(t.schedule(narrow, n / 2).start_delay_s,
              30e-6 + 2 * 2 * 5e-6 + 4.0 / 2 * (n / 2) / 2e9, 1e-15);
}

TEST(DoubleBinaryTree, LongestChainOfMessages) {
  // With a = 1, b = 0 the formula counts the messages on the critical path, K(p, m): 2m at two
  // ranks, 4 per piece plus the trees' fill for longer pipelines (README's table of forms).
  const Collective& dbt = collective_by_name("double_binary_tree");
  auto k = [&](int p, int m) {
    const double n = 1e6;
    CollectiveGroup g = group(p, n / 2 / m / kChunksInFlight, 1);
    EXPECT_EQ(pipeline_pieces(n / 2, g.chunk_bytes), m);
    const AlphaBeta ab{1, 0, 0};
    return dbt.formula_s(g, n, NetworkCost{ab, ab});
  };
  for (int m : {1, 10, 50}) EXPECT_DOUBLE_EQ(k(2, m), 2.0 * m);
  for (int m : {10, 50}) {
    EXPECT_DOUBLE_EQ(k(8, m), 4.0 * m + 8);
    EXPECT_DOUBLE_EQ(k(64, m), 4.0 * m + 26);
  }
}

TEST(Hierarchical, IntraRingStructureAndClosedForm) {
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta intra{1e-6, 1.0 / 100e9, 1.0 / 40e9}, inter{5e-6, 1.0 / 10e9, 1.0 / 40e9};
  for (int p : {4, 8, 12, 64})
    for (const char* among : {"ring", "recursive_halving_doubling", "double_binary_tree"}) {
      CollectiveGroup g = group(p, 0, 1, 4);
      g.intra_algorithm = "ring";
      g.inter_algorithm = among;
      const double n = 1e6;
      const Schedule s = h.schedule(g, n);
      const Schedule inner = collective_by_name(among).schedule(p / 4, n / 4);
      // Reduce-scatter and allgather rings of 3 rounds in every node, 4 copies of the leaders'
      // algorithm on n/4 (one per local rank), which share the node links.
      EXPECT_EQ(s.steps.size(), 2u * 3 * p + 4 * inner.steps.size()) << p << among;
      for (const auto& st : s.steps) {
        EXPECT_DOUBLE_EQ(st.bytes, st.src / 4 == st.dst / 4 ? n / 4 : st.bytes);
        if (st.src / 4 != st.dst / 4) {
          EXPECT_EQ(st.src % 4, st.dst % 4);
          EXPECT_EQ(st.lockstep, 4);
        }
      }
      // Without contention between different messages (a node link carrying the 4 local ranks'
      // messages at once is the lockstep factor), the schedule's critical path is the formula.
      const double t = schedule_time_s(s, [&](const CommStep& st) {
        const AlphaBeta& ab = st.src / 4 == st.dst / 4 ? intra : inter;
        return ab.alpha_s + st.lockstep * st.bytes * ab.beta_s_per_byte +
               st.reduce_bytes * ab.gamma_s_per_byte;
      });
      const double f = h.formula_s(g, n, NetworkCost{inter, intra});
      EXPECT_NEAR(t, f, 1e-9 * f) << p << " " << among;
    }
  CollectiveGroup partial = group(6, 0, 1, 4);
  partial.intra_algorithm = "ring";
  EXPECT_THROW(h.schedule(partial, 1e6), std::invalid_argument);
}
