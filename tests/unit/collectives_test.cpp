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
                                      "nccl", "nccl_tuner", "ps", "recursive_doubling",
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
