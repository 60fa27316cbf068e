// The analytic scheduler's event queues (sim/analytic/event_queues.hpp) against
// std::priority_queue: whatever lanes the events take, the live ones come out in the heap's order.
#include "sim/analytic/event_queues.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <queue>
#include <random>
#include <set>
#include <vector>

#include "sim/analytic/fragment_store.hpp"

namespace sgdsim {
namespace {

/// An event as the scheduler's: a completion time, a tie-breaking sequence number, and the
/// host, version and task a superseding event is matched by.
struct TestEvent {
  double time_s = 0;
  uint64_t seq = 0;
  void* live = nullptr;
  int32_t host = 0;
  uint32_t version = 0;
  uint32_t task = 0;
};

/// Earliest first, ties by sequence number (as the scheduler's Later).
struct After {
  bool operator()(const TestEvent& a, const TestEvent& b) const {
    return a.time_s > b.time_s || (a.time_s == b.time_s && a.seq > b.seq);
  }
};

/// Pushes `pushes` events (lane keys from `keys` durations, some due out of their lane's order,
/// each superseding the previous one of its host, one of `hosts`) and pops one every `pop_every`
/// pushes; returns the live events popped from the LaneQueue and from a std::priority_queue, in pop
/// order.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> run(uint32_t seed, int pushes,
                                                            int pop_every, int keys,
                                                            size_t hosts = 8) {
  std::mt19937 rng(seed);
  LaneQueue<TestEvent, After> lanes;
  std::priority_queue<TestEvent, std::vector<TestEvent>, After> reference;
  std::vector<uint32_t> version(hosts, 0), task(hosts, 0);  // per host: its current event's
  double now_s = 0;
  uint64_t seq = 0;
  std::vector<uint64_t> got, want;
  auto pop_both = [&] {
    // Stale events (superseded versions) are dropped, as the scheduler drops them.
    auto live = [&](const TestEvent& e) { return e.version == version[e.host]; };
    lanes.compact([&](const TestEvent& e) { return !live(e); });  // once the heap doubled
    while (!lanes.empty() && !live(lanes.top())) lanes.pop();
    while (!reference.empty() && !live(reference.top())) reference.pop();
    ASSERT_EQ(lanes.empty(), reference.empty());
    if (lanes.empty()) return;
    got.push_back(lanes.top().seq);
    want.push_back(reference.top().seq);
    now_s = std::max(now_s, lanes.top().time_s);
    lanes.pop();
    reference.pop();
  };
  for (int i = 0; i < pushes; ++i) {
    const int k = static_cast<int>(rng() % keys);
    const double duration_s = 1.0 + k;
    // Mostly in order (now + duration); one in five earlier or later by a fraction.
    const double jitter_s = rng() % 5 == 0 ? (static_cast<double>(rng() % 100) - 50) / 60 : 0;
    // A host's next completion supersedes its previous one (its version moves on); half the
    // time it is the same task's, rescheduled, which may take the superseded one's place.
    const auto host = static_cast<size_t>(rng() % version.size());
    const uint32_t superseded = version[host]++;
    if (rng() % 2 == 0) task[host] = static_cast<uint32_t>(i);
    const TestEvent e{now_s + duration_s + jitter_s, seq++,         nullptr,
                      static_cast<int32_t>(host),    version[host], task[host]};
    if (rng() % 4 != 0)
      lanes.push(e, static_cast<uint64_t>(k), superseded);
    else
      lanes.push(e, static_cast<uint64_t>(k));
    reference.push(e);
    if (i % pop_every == 0) pop_both();
  }
  while (!lanes.empty() || !reference.empty()) {
    pop_both();
    if (testing::Test::HasFatalFailure()) break;
  }
  return {got, want};
}

TEST(LaneQueue, PopsLiveEventsInTheHeapsOrder) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    for (int keys : {1, 3, 12}) {  // 12 keys: more than the 8 lanes, some go to the heap
      const auto [got, want] = run(seed, 3000, 2, keys);
      ASSERT_FALSE(want.empty());
      ASSERT_EQ(got, want) << "seed " << seed << ", " << keys << " lane keys";
    }
  }
  // 10^4 hosts' events, half of them on the heap (more than kMinCompact), compacted as it
  // grows.
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const auto [got, want] = run(seed, 40000, 4, 16, 10000);
    ASSERT_EQ(got, want) << "seed " << seed;
  }
}

TEST(LaneQueue, NextInLaneNamesTheEventsThatComeNext) {
  LaneQueue<TestEvent, After> q;
  for (uint64_t i = 0; i < 5; ++i) q.push({1.0 + static_cast<double>(i), i}, 7);
  q.push({1.5, 9}, 3);  // another lane, between the first two
  q.pop();              // 1.0 from lane 7
  ASSERT_NE(q.next_in_lane(0), nullptr);
  EXPECT_EQ(q.next_in_lane(0)->seq, 1U);
  EXPECT_EQ(q.next_in_lane(3)->seq, 4U);
  EXPECT_EQ(q.next_in_lane(4), nullptr);
  EXPECT_EQ(q.top().seq, 9U);  // the other lane's head comes first
}

TEST(GroupFragments, KeepsTheOldestFirstInlineAndBeyond) {
  std::vector<sched::Live> fragments(12);
  sched::GroupFragments g;
  std::deque<sched::Live*> want;
  size_t next = 0;
  auto check = [&] {
    ASSERT_EQ(g.empty(), want.empty());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(g[i], want[i]) << i;
    if (!want.empty()) {
      EXPECT_EQ(g.front(), want.front());
      EXPECT_EQ(g.back(), want.back());
    }
  };
  // Wrap the inline ring (push 3, pop 2, push 3), then outgrow it while wrapped.
  for (int step : {3, -2, 3, 3, -4, 3, -6}) {
    for (int k = 0; k < std::abs(step); ++k) {
      if (step > 0) {
        g.push_back(&fragments[next]);
        want.push_back(&fragments[next++]);
      } else {
        g.pop_front();
        want.pop_front();
      }
      check();
    }
  }
  EXPECT_TRUE(g.empty());
}

}  // namespace
}  // namespace sgdsim
