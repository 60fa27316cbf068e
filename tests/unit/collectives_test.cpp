#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"

using namespace sgdsim;

TEST(Ring, ScheduleShape) {
  const Collective& ring = collective_by_name("ring");
  Schedule s = ring.schedule(5, 1000);
  EXPECT_EQ(s.steps.size(), 2u * 4 * 5);
  for (const auto& st : s.steps) {
    EXPECT_EQ(st.dst, (st.src + 1) % 5);
    EXPECT_DOUBLE_EQ(st.bytes, 200);
  }
  // Round 0 has no predecessors; later steps wait for the left neighbour and their own send.
  for (size_t i = 0; i < s.steps.size(); ++i) EXPECT_EQ(s.pred_count[i], i < 5 ? 0u : 2u);
  EXPECT_TRUE(ring.schedule(1, 1000).steps.empty());
}

TEST(Ring, UniformScheduleTimeEqualsFormula) {
  const Collective& ring = collective_by_name("ring");
  for (int p : {2, 3, 5, 37, 64}) {
    for (double n : {8.0, 1e6, 1e9}) {
      AlphaBeta ab{2e-6, 1.0 / 12.5e9, 0};
      double t = schedule_time_s(ring.schedule(p, n), [&](const CommStep& s) {
        return ab.alpha_s + s.bytes * ab.beta_s_per_byte;
      });
      EXPECT_NEAR(t, ring.formula_s(p, n, ab), 1e-12 * t) << p << " " << n;
    }
  }
}

TEST(Ring, FormulaTerms) {
  const Collective& ring = collective_by_name("ring");
  AlphaBeta ab{1.0, 0.5, 0.25};
  EXPECT_DOUBLE_EQ(ring.formula_s(4, 8, ab),
                   2 * 3 * 1.0 + 2.0 * 3 / 4 * 8 * 0.5 + 3.0 / 4 * 8 * 0.25);
  EXPECT_DOUBLE_EQ(ring.formula_s(1, 8, ab), 0.0);
}

TEST(Registry, UnknownNameThrows) {
  EXPECT_THROW(collective_by_name("butterfly"), std::out_of_range);
  EXPECT_EQ(collective_names(),
            (std::vector<std::string>{"auto", "byteps", "double_binary_tree", "hierarchical",
                                      "nccl", "nccl_tuner", "nvls", "ps", "recursive_doubling",
                                      "recursive_halving_doubling", "ring", "tree"}));
  EXPECT_EQ(collective_by_name("rhd").name(), "recursive_halving_doubling");
}

namespace {
double uniform_time(const Collective& c, const CollectiveGroup& g, double n, const AlphaBeta& ab) {
  return schedule_time_s(c.schedule(g, n), [&](const CommStep& s) {
    return ab.alpha_s + s.bytes * ab.beta_s_per_byte + s.reduce_bytes * ab.gamma_s_per_byte;
  });
}
}  // namespace

TEST(Algorithms, ContentionFreeScheduleEqualsFormulaWithGamma) {
  // Without contention the schedule's critical path is the formula, reductions included
  // (ps shares links by design, so its flow-level check is in the CLI tests).
  const AlphaBeta ab{3e-6, 1.0 / 10e9, 1.0 / 40e9};
  for (const char* name :
       {"ring", "recursive_halving_doubling", "recursive_doubling", "tree", "auto"})
    for (int p : {2, 3, 5, 8, 37, 64, 128})
      for (double n : {8.0, 1e6, 1e9}) {
        const Collective& c = collective_by_name(name);
        const double f = c.formula_s(p, n, ab);
        EXPECT_NEAR(uniform_time(c, CollectiveGroup{p}, n, ab), f, 1e-9 * f)
            << name << " p=" << p << " n=" << n;
      }
}

TEST(Algorithms, MessageCounts) {
  EXPECT_EQ(collective_by_name("recursive_doubling").schedule(8, 1e6).steps.size(), 8u * 3);
  // 5 ranks: one pre and one post message around 4-rank recursive doubling.
  EXPECT_EQ(collective_by_name("recursive_doubling").schedule(5, 1e6).steps.size(), 2u + 4 * 2);
  EXPECT_EQ(collective_by_name("recursive_halving_doubling").schedule(8, 1e6).steps.size(), 8u * 6);
  EXPECT_EQ(collective_by_name("tree").schedule(6, 1e6).steps.size(), 2u * 5);
  CollectiveGroup ps{6, 1, 2, "ring"};
  EXPECT_EQ(collective_by_name("ps").schedule(ps, 1e6).steps.size(), 2u * (6 * 2 - 2));
}

TEST(Algorithms, RabenseifnerHalvesThenDoubles) {
  Schedule s = collective_by_name("recursive_halving_doubling").schedule(4, 1000);
  std::vector<double> sizes;
  for (const auto& st : s.steps) sizes.push_back(st.bytes);
  EXPECT_EQ(sizes, (std::vector<double>{500, 500, 500, 500, 250, 250, 250, 250, 250, 250, 250, 250,
                                        500, 500, 500, 500}));
}

TEST(Algorithms, HierarchicalUsesIntraAndInterCosts) {
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta intra{1e-6, 1.0 / 100e9, 0}, inter{5e-6, 1.0 / 10e9, 0};
  for (int p : {4, 8, 12, 64})
    for (const char* algo : {"ring", "recursive_halving_doubling"}) {
      CollectiveGroup g{p, 4, 0, algo};
      Schedule s = h.schedule(g, 1e6);
      const double t = schedule_time_s(s, [&](const CommStep& st) {
        const AlphaBeta& ab = st.src / 4 == st.dst / 4 ? intra : inter;
        return ab.alpha_s + st.bytes * ab.beta_s_per_byte;
      });
      const double f = h.formula_s(g, 1e6, NetworkCost{inter, intra});
      EXPECT_NEAR(t, f, 1e-9 * f) << p << " " << algo;
    }
}

TEST(Algorithms, AutoFollowsItsSizeRule) {
  const Collective& a = collective_by_name("auto");
  const AlphaBeta ab{1e-6, 1e-9, 0};
  auto same = [&](const char* name, int p, double n) {
    return a.formula_s(p, n, ab) == collective_by_name(name).formula_s(p, n, ab);
  };
  EXPECT_TRUE(same("recursive_doubling", 6, 4096));
  EXPECT_TRUE(same("recursive_halving_doubling", 6, 100000));
  EXPECT_TRUE(same("recursive_halving_doubling", 8, 1e9));
  EXPECT_TRUE(same("ring", 6, 1e9));
}

namespace {
CollectiveGroup with_op(int p, CollectiveOp op, int per_node = 1) {
  CollectiveGroup g{p, per_node};
  g.op = op;
  return g;
}
}  // namespace

TEST(Operations, RingAllGatherAndReduceScatterAreTheAllreduceHalves) {
  // (p-1)(a + n/p b) for all-gather; plus (p-1)/p n g for reduce-scatter (Thakur et al. 2005).
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta ab{1.0, 0.5, 0.25};
  const NetworkCost c{ab, ab};
  EXPECT_DOUBLE_EQ(ring.formula_s(with_op(4, CollectiveOp::allgather), 8, c), 3 * (1.0 + 2 * 0.5));
  EXPECT_DOUBLE_EQ(ring.formula_s(with_op(4, CollectiveOp::reduce_scatter), 8, c),
                   3 * (1.0 + 2 * 0.5) + 3.0 / 4 * 8 * 0.25);
  const Schedule ag = ring.schedule(with_op(5, CollectiveOp::allgather), 1000);
  ASSERT_EQ(ag.steps.size(), 4u * 5);
  for (const CommStep& st : ag.steps) {
    EXPECT_DOUBLE_EQ(st.bytes, 200);
    EXPECT_EQ(st.reduce_bytes, 0);
  }
  const Schedule rs = ring.schedule(with_op(5, CollectiveOp::reduce_scatter), 1000);
  ASSERT_EQ(rs.steps.size(), 4u * 5);
  for (const CommStep& st : rs.steps) EXPECT_DOUBLE_EQ(st.reduce_bytes, 200);
}

TEST(Operations, ContentionFreeScheduleEqualsFormula) {
  const AlphaBeta ab{3e-6, 1.0 / 10e9, 1.0 / 40e9};
  for (CollectiveOp op : {CollectiveOp::allgather, CollectiveOp::reduce_scatter})
    for (const char* name : {"ring", "recursive_halving_doubling", "auto"})
      for (int p : {2, 3, 5, 8, 37, 64, 128})
        for (double n : {8.0, 1e6, 1e9}) {
          const Collective& c = collective_by_name(name);
          const CollectiveGroup g = with_op(p, op);
          if (c.unsupported(op, g)) continue;
          const double f = c.formula_s(g, n, NetworkCost{ab, ab});
          EXPECT_NEAR(uniform_time(c, g, n, ab), f, 1e-9 * f)
              << name << " " << collective_op_name(op) << " p=" << p << " n=" << n;
          EXPECT_EQ(c.message_count(g, n), c.schedule(g, n).steps.size()) << name << " p=" << p;
        }
}

TEST(Operations, RecursiveHalvingDoublingHalvesOnPowersOfTwoOnly) {
  const Collective& rhd = collective_by_name("rhd");
  EXPECT_FALSE(rhd.unsupported(CollectiveOp::allgather, CollectiveGroup{8}));
  EXPECT_TRUE(rhd.unsupported(CollectiveOp::reduce_scatter, CollectiveGroup{6}));
  const AlphaBeta ab{1.0, 0.5, 0.25};
  // log p a + (p-1)/p n (b [+ g]).
  EXPECT_DOUBLE_EQ(rhd.formula_s(with_op(8, CollectiveOp::allgather), 16, NetworkCost{ab, ab}),
                   3 * 1.0 + 7.0 / 8 * 16 * 0.5);
  EXPECT_DOUBLE_EQ(rhd.formula_s(with_op(8, CollectiveOp::reduce_scatter), 16, NetworkCost{ab, ab}),
                   3 * 1.0 + 7.0 / 8 * 16 * 0.75);
}

TEST(Operations, AlgorithmsSayWhatTheyCannotRun) {
  for (const char* name : {"tree", "recursive_doubling", "ps", "byteps", "double_binary_tree"})
    EXPECT_TRUE(collective_by_name(name).unsupported(CollectiveOp::allgather, CollectiveGroup{8}))
        << name;
  for (const std::string& name : collective_names())
    EXPECT_FALSE(collective_by_name(name).unsupported(CollectiveOp::allreduce, CollectiveGroup{8}))
        << name;
  CollectiveGroup chain{8, 4};
  chain.intra_algorithm = "chain";
  EXPECT_TRUE(collective_by_name("hierarchical").unsupported(CollectiveOp::allgather, chain));
  EXPECT_TRUE(collective_by_name("hierarchical")
                  .unsupported(CollectiveOp::allgather, CollectiveGroup{6, 4}));  // not full
}

TEST(Operations, HierarchicalTwoLevelEqualsItsFormula) {
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta in{1e-6, 1.0 / 100e9, 1.0 / 400e9}, out{5e-6, 1.0 / 10e9, 1.0 / 400e9};
  for (CollectiveOp op : {CollectiveOp::allgather, CollectiveOp::reduce_scatter})
    for (int nodes : {1, 2, 3, 8})
      for (int d : {1, 2, 4, 8})
        for (double n : {64.0, 1e6, 1e9}) {
          const CollectiveGroup g = with_op(nodes * d, op, d);
          ASSERT_FALSE(h.unsupported(op, g));
          const double t = schedule_time_s(h.schedule(g, n), [&](const CommStep& s) {
            const AlphaBeta& ab = s.src / d == s.dst / d ? in : out;
            return ab.alpha_s + s.bytes * ab.beta_s_per_byte + s.reduce_bytes * ab.gamma_s_per_byte;
          });
          const double f = h.formula_s(g, n, NetworkCost{out, in});
          EXPECT_NEAR(t, f, 1e-9 * f) << collective_op_name(op) << " " << nodes << "x" << d;
          EXPECT_EQ(h.message_count(g, n), h.schedule(g, n).steps.size());
        }
}

TEST(Operations, SubgroupsRunTheirCollectivesAtOnce) {
  // 8 ranks as 2 shard groups of 4 (blocks) and 4 replica groups of 2 (ranks equal mod 4).
  const Collective& ring = collective_by_name("ring");
  CollectiveGroup g = with_op(8, CollectiveOp::allgather, 4);
  const Schedule blocks = subgroup_schedule(ring, g, 800, 4);
  EXPECT_EQ(blocks.steps.size(), 2u * 3 * 4);
  for (const CommStep& st : blocks.steps) {
    EXPECT_EQ(st.src / 4, st.dst / 4);
    EXPECT_DOUBLE_EQ(st.bytes, 200);
  }
  g.op = CollectiveOp::allreduce;
  const Schedule replicas = subgroup_schedule(ring, g, 800, -4);
  EXPECT_EQ(replicas.steps.size(), 4u * 2 * 1 * 2);
  for (const CommStep& st : replicas.steps) EXPECT_EQ(st.src % 4, st.dst % 4);
  const AlphaBeta ab{1.0, 0.5, 0};
  // The 4 ranks of a node in different replica groups share its link: beta x 4.
  EXPECT_DOUBLE_EQ(subgroup_formula_s(ring, g, 800, NetworkCost{ab, ab}, -4),
                   2 * 1.0 + 800 * 0.5 * 4);
  EXPECT_EQ(subgroup_message_count(ring, g, 800, -4), replicas.steps.size());
}

namespace {
/// A group of `p` GPUs on one node with the nvls options at their declared defaults.
CollectiveGroup nvls_node(int p) {
  CollectiveGroup g{p, p};
  for (const CollectiveParam& c : collective_by_name("nvls").params())
    apply_param(g, c, *default_param_value(c.param));
  return g;
}
}  // namespace

// NVLS as messages: every GPU sends every other GPU once, all at once, so that each GPU's link
// carries n (1 + 1/p) / 0.85 each way (multimem reduce-loads serve n, the multicast brings n);
// the start delay is NCCL's 23 us and the fill of two loops (here the message is less than one
// loop of 16 channels x 4 GPUs x 16 KiB, so the fill is the message twice).
TEST(Nvls, EveryGpuSendsAndReceivesItsLinkVolumeAtOnce) {
  CollectiveGroup g = nvls_node(4);
  const AlphaBeta ab{0, 1e-9, 0};
  g.tuning_cost = NetworkCost{ab, ab};
  const double n = 1e6;
  const Schedule s = collective_by_name("nvls").schedule(g, n);
  ASSERT_EQ(s.steps.size(), 12u);
  std::vector<double> sent(4), received(4);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    EXPECT_EQ(s.pred_count[i], 0u) << "no step waits for another";
    EXPECT_NE(s.steps[i].src, s.steps[i].dst);
    sent[s.steps[i].src] += s.steps[i].bytes;
    received[s.steps[i].dst] += s.steps[i].bytes;
  }
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(sent[r], n * 1.25 / 0.85, 1e-6) << r;
    EXPECT_NEAR(received[r], n * 1.25 / 0.85, 1e-6) << r;
  }
  EXPECT_NEAR(s.start_delay_s, 23e-6 + 2 * n * 1.25 / 0.85 * 1e-9, 1e-15);
  EXPECT_EQ(collective_by_name("nvls").message_count(g, n), 12.0);
}

// One node only: a group spread over two nodes is refused, naming ranks_per_node.
TEST(Nvls, RefusesAGroupOverSeveralNodes) {
  CollectiveGroup g = nvls_node(8);
  g.ranks_per_node = 4;
  const auto problem = collective_by_name("nvls").check(g);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->option, "ranks_per_node");
  EXPECT_FALSE(collective_by_name("nvls").check(nvls_node(8)).has_value());
}
