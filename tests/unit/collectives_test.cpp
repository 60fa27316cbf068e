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
  EXPECT_EQ(collective_names(), std::vector<std::string>{"ring"});
}
