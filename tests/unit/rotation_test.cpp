// Rotation symmetry of schedules (flow_symmetry "rotation"): a ring's messages reduce to rank
// 0's, with the same contention-free timing; schedules that skip ranks do not reduce.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"

using namespace sgdsim;

namespace {

CollectiveGroup rotation_group(int p, double chunk = 0, int channels = 1) {
  CollectiveGroup g{p, 1};
  g.chunk_bytes = chunk;
  g.channels = channels;
  return g;
}

double contention_free_s(const Schedule& s) {
  return schedule_time_s(s, [](const CommStep& m) { return 1e-6 + m.bytes * 1e-9; });
}

}  // namespace

TEST(Rotation, RingReducesToRankZerosMessages) {
  for (int p : {2, 3, 5, 8, 37}) {
    const Schedule full = collective_by_name("ring").schedule(rotation_group(p), 1e6);
    std::string why;
    const auto r = rotation_reduced(full, &why);
    ASSERT_TRUE(r) << p << ": " << why;
    EXPECT_EQ(r->steps.size(), full.steps.size() / p) << p;
    for (size_t k = 0; k < r->steps.size(); ++k) {
      EXPECT_EQ(r->steps[k].src, 0);
      EXPECT_EQ(r->steps[k].dst, 1 % p);
      EXPECT_EQ(r->pred_count[k], k == 0 ? 0u : 1u) << "rank 0's steps form a chain";
    }
    EXPECT_NEAR(contention_free_s(*r), contention_free_s(full), 1e-12) << p;
  }
}

TEST(Rotation, PipelinedRingWithChannelsReduces) {
  const Schedule full = collective_by_name("ring").schedule(rotation_group(8, 64e3, 2), 1e6);
  const auto r = rotation_reduced(full);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->steps.size() * 8, full.steps.size());
  EXPECT_NEAR(contention_free_s(*r), contention_free_s(full), 1e-12);
}

TEST(Rotation, SchedulesThatSkipRanksDoNotReduce) {
  for (const char* name : {"tree", "recursive_doubling", "recursive_halving_doubling", "ps"}) {
    const Schedule full = collective_by_name(name).schedule(rotation_group(8), 1e6);
    std::string why;
    EXPECT_FALSE(rotation_reduced(full, &why)) << name;
    EXPECT_NE(why.find("not to the next rank"), std::string::npos) << name << ": " << why;
  }
}

TEST(Rotation, MessagesToRanksOutsideTheGroupDoNotReduce) {
  Schedule full = collective_by_name("ring").schedule(rotation_group(4), 1e6);
  full.steps[0].src = 4;  // a dedicated server after the workers (byteps)
  full.steps[0].dst = 5;
  EXPECT_FALSE(rotation_reduced(full));
}

TEST(Rotation, OneDifferentMessageBreaksTheSymmetry) {
  Schedule full = collective_by_name("ring").schedule(rotation_group(5), 1e6);
  full.steps[3].bytes *= 2;
  std::string why;
  EXPECT_FALSE(rotation_reduced(full, &why));
  EXPECT_FALSE(why.empty());
}

TEST(Rotation, HierarchicalReducesToOneBlocksMessages) {
  // 4 nodes of 4 ranks; blocks of 8 ranks (two nodes): the messages of ranks 0 to 7.
  CollectiveGroup g{16, 4};
  const Schedule full = collective_by_name("hierarchical").schedule(g, 1e6);
  std::string why;
  const auto r = rotation_reduced(full, 8, &why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->steps.size() * 2, full.steps.size());
  for (const CommStep& m : r->steps) EXPECT_LT(m.src, 8);
  EXPECT_NEAR(contention_free_s(*r), contention_free_s(full), 1e-12);
}

TEST(Rotation, BlocksMustTileTheRanksAndSendAlike) {
  const Schedule ring = collective_by_name("ring").schedule(rotation_group(12), 1e6);
  std::string why;
  EXPECT_FALSE(rotation_reduced(ring, 5, &why));
  EXPECT_NE(why.find("whole blocks of 5"), std::string::npos) << why;
  const Schedule tree = collective_by_name("double_binary_tree").schedule(rotation_group(16), 1e6);
  EXPECT_FALSE(rotation_reduced(tree, 4, &why));
  EXPECT_NE(why.find("every block of 4 ranks"), std::string::npos) << why;
  Schedule odd = ring;
  odd.steps[7].bytes *= 2;  // one message of rank 7 (block 1 of 6 ranks) differs
  EXPECT_FALSE(rotation_reduced(odd, 6, &why));
}

TEST(Rotation, BlockSchedulesAreTheReducedSchedulesBuiltDirectly) {
  // The messages and timing rotation_reduced finds in the full schedule, built without it.
  struct Case {
    const char* name;
    int p, per_node, block;
    double chunk;
    int channels;
  };
  for (const Case& c : {Case{"ring", 24, 1, 6, 0, 1}, Case{"ring", 24, 1, 8, 64e3, 2},
                        Case{"hierarchical", 32, 4, 8, 0, 1}, Case{"hierarchical", 48, 4, 16, 0, 1},
                        Case{"hierarchical", 32, 4, 8, 64e3, 2}}) {
    CollectiveGroup g{c.p, c.per_node};
    g.chunk_bytes = c.chunk;
    g.channels = c.channels;
    const Collective& coll = collective_by_name(c.name);
    const auto direct = coll.block_schedule(g, 1e6, c.block);
    const auto reduced = rotation_reduced(coll.schedule(g, 1e6), c.block);
    ASSERT_TRUE(direct && reduced) << c.name << " " << c.p;
    EXPECT_EQ(direct->steps.size(), reduced->steps.size()) << c.name << " " << c.p;
    for (const CommStep& m : direct->steps) EXPECT_LT(m.src, c.block);
    EXPECT_NEAR(contention_free_s(*direct), contention_free_s(*reduced), 1e-12) << c.name;
    EXPECT_NEAR(contention_free_s(*direct), contention_free_s(coll.schedule(g, 1e6)), 1e-12);
  }
  CollectiveGroup g{24, 1};
  EXPECT_FALSE(collective_by_name("ring").block_schedule(g, 1e6, 5)) << "blocks must tile";
  EXPECT_FALSE(collective_by_name("double_binary_tree").block_schedule(g, 1e6, 6));
}
