// DiLoCo's outer step (sim/coupling: outer_optimizer_step) against the update written out by
// hand from torch.optim.SGD's momentum and Nesterov rules, and the reference case (lr 1,
// momentum 0) that makes DiLoCo with one inner step sync.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "models/learn/learn.hpp"
#include "sim/coupling/trainer.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/workload/workload.hpp"

using namespace sgdsim;

TEST(DilocoOuterStep, LrOneWithoutMomentumGivesTheMeanBitForBit) {
  std::vector<float> global = {0.3f, -1.7f, 2.25f}, velocity(3, 0.0f);
  const std::vector<float> mean = {0.1f, -1.9f, 2.2500001f};
  outer_optimizer_step(global, velocity, mean, OuterOptimizer{1.0, 0.0, true});
  EXPECT_EQ(global, mean);
}

TEST(DilocoOuterStep, NesterovAndPlainMomentumFollowTorchSgd) {
  const float lr = 0.7f, mu = 0.9f;
  for (bool nesterov : {true, false}) {
    std::vector<float> global = {1.0f}, velocity = {0.5f};
    const std::vector<float> mean = {0.8f};
    outer_optimizer_step(global, velocity, mean, OuterOptimizer{lr, mu, nesterov});
    const double d = 1.0 - 0.8, v = mu * 0.5 + d;   // buf = mu buf + g
    const double step = nesterov ? d + mu * v : v;  // nesterov: g + mu buf
    EXPECT_NEAR(velocity[0], v, 1e-6);
    EXPECT_NEAR(global[0], 1.0 - lr * step, 1e-6) << nesterov;
  }
}

TEST(DilocoOuterStep, MomentumCarriesThePreviousPseudoGradients) {
  // Two outer steps with the same pseudo-gradient: the second moves further (momentum).
  std::vector<float> global = {1.0f}, velocity = {0.0f};
  const OuterOptimizer outer{0.5, 0.9, false};
  outer_optimizer_step(global, velocity, {0.9f}, outer);  // d = 0.1: moves 0.05
  const float first = 1.0f - global[0];
  const float before = global[0];
  outer_optimizer_step(global, velocity, {before - 0.1f}, outer);  // d = 0.1 again
  EXPECT_NEAR(first, 0.05f, 1e-6);
  EXPECT_NEAR(before - global[0], 0.5f * (0.9f * 0.1f + 0.1f), 1e-6);
}

TEST(DilocoInnerAdamW, TwoStepsAsWrittenOutByHand) {
  // lr 0.1, betas 0.9 / 0.95, eps 1e-8, weight decay 0.1 on w = (1, -2), g1 = (0.5, -1),
  // g2 = (-0.25, 2). Step 1: m = 0.1 g1, v = 0.05 g1^2, so m / (1 - 0.9) over sqrt(v / (1 -
  // 0.95)) is sign(g1): w = 0.99 w - 0.1 sign(g1) = (0.89, -1.88). Step 2, element 0: w = 0.99 x
  // 0.89 = 0.8811; m = 0.9 x 0.05 - 0.1 x 0.25 = 0.02, v = 0.95 x 0.0125 + 0.05 x 0.0625 =
  // 0.015; w -= 0.1 (0.02 / 0.19) / (sqrt(0.015 / 0.0975) + 1e-8) = 0.0268369...: 0.8542631.
  // Element 1: w = -1.8612, m = 0.11, v = 0.2475, w += ... = -1.8975374.
  learn::AdamW adamw(2, {0.9, 0.95, 1e-8, 0.1});
  std::vector<float> w = {1.0f, -2.0f};
  adamw.step(w, {0.5f, -1.0f}, 0.1);
  EXPECT_NEAR(w[0], 0.89, 1e-6);
  EXPECT_NEAR(w[1], -1.88, 1e-6);
  adamw.step(w, {-0.25f, 2.0f}, 0.1);
  EXPECT_NEAR(w[0], 0.8542631, 1e-6);
  EXPECT_NEAR(w[1], -1.8975374, 1e-6);
  EXPECT_NEAR(adamw.first_moment()[1], 0.11, 1e-7);
  EXPECT_NEAR(adamw.second_moment()[1], 0.2475, 1e-7);
}

TEST(StreamingDilocoDag, EachFragmentIsSynchronizedOncePerHAtItsOffset) {
  // Six layers, one bucket each (fusion_bytes 0), H = 6, F = 3: fragment p holds two buckets
  // (forward order: fragment 0 the first layers, buckets 5 and 4) and is synchronized after
  // iterations i with (i + 1 + 2 p) % 6 == 0: fragment 0 after 5 and 11, 1 after 3 and 9, 2
  // after 1 and 7. Each collective is its bucket's bytes, one after the other, and every
  // worker's update of the iteration waits for the last.
  nlohmann::json j = nlohmann::json::parse(
      R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": []},
      "workers": {"count": 3}, "batch_size": 1, "iterations": 12, "warmup_iterations": 1,
      "scheme": {"type": "diloco", "inner_steps": 6, "fragments": 3, "fusion_bytes": 0}})");
  for (int l = 0; l < 6; ++l)
    j["model"]["layers"].push_back({{"name", "l" + std::to_string(l)},
                                    {"parameters", 1000 * (l + 1)},
                                    {"forward_ms", 1},
                                    {"backward_ms", 2}});
  const Scenario scenario = parse_scenario(j, "toy.json");
  const Workload workload = load_workload(scenario);
  ASSERT_EQ(workload.buckets.size(), 6u);
  auto scheme = make_scheme({&scenario, &workload});
  std::map<int, std::set<int>> buckets_at;  // iteration -> buckets synchronized
  for (int it = 0; it < 12; ++it) {
    const Fragment f = scheme->build(it);
    const TaskGraph& g = f.graph;
    std::map<int, uint32_t> comm;  // bucket -> task
    for (uint32_t v = 0; v < g.num_tasks(); ++v)
      if (g.task(v).kind == TaskKind::comm) {
        const Task& t = g.task(v);
        EXPECT_DOUBLE_EQ(t.bytes, workload.buckets[static_cast<size_t>(t.index)].bytes);
        EXPECT_TRUE(buckets_at[it].insert(t.index).second);
        comm[t.index] = v;
      }
    if (comm.empty()) continue;
    // One stream in bucket order; the last one gates every worker's update.
    std::set<std::pair<uint32_t, TaskKind>> after;
    for (auto [from, to] : g.edges())
      if (from == comm.rbegin()->second) after.insert({to, g.task(to).kind});
    EXPECT_EQ(after.size(), 3u);
    for (const auto& [to, kind] : after) EXPECT_EQ(kind, TaskKind::update);
    for (auto a = comm.begin(), b = std::next(a); b != comm.end(); ++a, ++b) {
      bool chained = false;
      for (auto [from, to] : g.edges()) chained = chained || (from == a->second && to == b->second);
      EXPECT_TRUE(chained) << "bucket " << b->first << " after " << a->first;
    }
  }
  const std::map<int, std::set<int>> expected = {{1, {0, 1}}, {3, {2, 3}}, {5, {4, 5}},
                                                 {7, {0, 1}}, {9, {2, 3}}, {11, {4, 5}}};
  EXPECT_EQ(buckets_at, expected);
  for (int p = 0; p < 3; ++p) {
    int times = 0;
    for (int it = 0; it < 6; ++it) times += fragment_synchronizes(p, 3, 6, it);
    EXPECT_EQ(times, 1) << p;  // once per H
  }
}
