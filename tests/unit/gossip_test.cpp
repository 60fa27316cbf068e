// Decentralized SGD (dpsgd): the mixing matrices of the named topologies, the task graph (each
// worker's update -> one message per out-neighbour -> the receiver's next iteration), and the
// replicas' math (mixing, consensus distance, the complete graph against sync's step).
#include "models/learn/gossip.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "sim/dag/task_graph.hpp"
#include "sim/schemes/gossip.hpp"
#include "sim/schemes/scheme.hpp"
#include "tests/unit/scheme_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;
using sgdsim::test::build_scheme_of;
using sgdsim::test::BuiltScheme;

namespace {

std::unique_ptr<BuiltScheme> build_dpsgd(const std::string& topology, int workers) {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": [
      {"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2},
      {"name": "b", "parameters": 2000, "forward_ms": 1, "backward_ms": 3}]},
      "batch_size": 1, "iterations": 6, "warmup_iterations": 1})");
  j["workers"]["count"] = workers;
  j["scheme"] = {{"type", "dpsgd"}, {"topology", topology}};
  return build_scheme_of(j);
}

/// W as a dense matrix.
std::vector<std::vector<double>> dense(const MixingRows& rows) {
  std::vector<std::vector<double>> w(rows.size(), std::vector<double>(rows.size(), 0.0));
  for (size_t i = 0; i < rows.size(); ++i)
    for (const auto& [j, v] : rows[i]) w[i][static_cast<size_t>(j)] = v;
  return w;
}

void expect_doubly_stochastic(const MixingRows& rows) {
  const auto w = dense(rows);
  for (size_t i = 0; i < w.size(); ++i) {
    double row = 0, column = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      row += w[i][j];
      column += w[j][i];
    }
    EXPECT_NEAR(row, 1, 1e-12) << i;
    EXPECT_NEAR(column, 1, 1e-12) << i;
  }
}

}  // namespace

TEST(GossipTopology, RingTorusExponentialAndCompleteHaveTheirNeighboursAndWeights) {
  const auto ring = dense(topology_mixing("ring", 8));
  EXPECT_DOUBLE_EQ(ring[0][0], 1.0 / 3);
  EXPECT_DOUBLE_EQ(ring[0][1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(ring[0][7], 1.0 / 3);
  EXPECT_EQ(topology_mixing("ring", 8)[0].size(), 3u);
  // 16 workers: a 4 x 4 torus, worker 5 = (1, 1) has 1, 4, 6, 9 around it.
  const auto torus = topology_mixing("torus", 16);
  std::set<int> around;
  for (const auto& [j, v] : torus[5]) {
    EXPECT_DOUBLE_EQ(v, 1.0 / 5);
    around.insert(j);
  }
  EXPECT_EQ(around, (std::set<int>{1, 4, 5, 6, 9}));
  // Static exponential graph on 8: worker 0 hears from 7, 6 and 4 (0 - 2^k), weights 1/4.
  const auto expo = topology_mixing("exponential", 8);
  std::set<int> heard;
  for (const auto& [j, v] : expo[0]) {
    EXPECT_DOUBLE_EQ(v, 1.0 / 4);
    heard.insert(j);
  }
  EXPECT_EQ(heard, (std::set<int>{0, 4, 6, 7}));
  EXPECT_EQ(topology_mixing("complete", 5)[3].size(), 5u);
  for (const char* t : {"ring", "torus", "exponential", "complete"})
    for (int n : {1, 2, 3, 6, 8, 12, 16}) expect_doubly_stochastic(topology_mixing(t, n));
}

TEST(DpsgdDag, ComputeThenOneMessagePerDirectedEdgeThenTheReceiversNextIteration) {
  auto b = build_dpsgd("ring", 4);
  Fragment f0 = b->scheme->build(0), f1 = b->scheme->build(1);
  const TaskGraph& g = f1.graph;
  std::map<std::pair<int, int>, uint32_t> message;  // (sender, receiver) -> task
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    if (t.kind != TaskKind::comm) continue;
    EXPECT_EQ(t.worker, t.src);
    EXPECT_DOUBLE_EQ(t.bytes, b->workload.gradient_bytes);  // the whole parameter vector
    message[{t.src, t.dst}] = v;
    // Its only predecessor is the sender's update of the same iteration.
    int preds = 0;
    for (auto [from, to] : g.edges())
      if (to == v) {
        ++preds;
        EXPECT_EQ(g.task(from).kind, TaskKind::update);
        EXPECT_EQ(g.task(from).worker, t.src);
      }
    EXPECT_EQ(preds, 1);
  }
  EXPECT_EQ(message.size(), 8u);  // a ring of 4: two out-neighbours each
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(message.count({i, (i + 1) % 4}));
    EXPECT_TRUE(message.count({i, (i + 3) % 4}));
  }
  // Iteration 1's first task of worker r waits for its own update and the messages into it.
  std::map<int, std::set<std::pair<int, int>>> gates;  // receiver -> (kind, sender) of iteration 0
  for (const auto& c : f1.cross) {
    const Task& from = f0.graph.task(c.from);
    const Task& to = g.task(c.to);
    EXPECT_EQ(to.kind, TaskKind::fwd);
    if (from.kind == TaskKind::comm) {
      EXPECT_EQ(from.dst, to.worker);
    }
    gates[to.worker].insert(
        {static_cast<int>(from.kind), from.kind == TaskKind::comm ? from.src : from.worker});
  }
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(gates[r],
              (std::set<std::pair<int, int>>{{static_cast<int>(TaskKind::update), r},
                                             {static_cast<int>(TaskKind::comm), (r + 1) % 4},
                                             {static_cast<int>(TaskKind::comm), (r + 3) % 4}}))
        << r;
  EXPECT_TRUE(f0.cross.empty());
}

TEST(DpsgdDag, ExponentialAndCompleteSendAlongEveryDirectedEdge) {
  auto messages = [](const std::string& topology, int workers) {
    auto b = build_dpsgd(topology, workers);
    const TaskGraph& g = b->scheme->build(2).graph;
    std::set<std::pair<int, int>> edges;
    for (uint32_t v = 0; v < g.num_tasks(); ++v)
      if (g.task(v).kind == TaskKind::comm) edges.insert({g.task(v).src, g.task(v).dst});
    return edges;
  };
  // Exponential on 8: i -> i + 1, i + 2, i + 4 (mod 8), no allreduce.
  const auto expo = messages("exponential", 8);
  EXPECT_EQ(expo.size(), 8u * 3);
  for (int i = 0; i < 8; ++i)
    for (int hop : {1, 2, 4}) EXPECT_TRUE(expo.count({i, (i + hop) % 8})) << i << "+" << hop;
  EXPECT_EQ(messages("complete", 5).size(), 5u * 4);
  EXPECT_TRUE(messages("ring", 1).empty());
}

TEST(GossipMath, MixingIsTheWeightedSumAndConsensusDistanceTheMeanSquaredSpread) {
  const std::vector<std::vector<float>> x = {{1, 2}, {3, 6}};
  const auto mixed = learn::mix_row({{0, 0.25}, {1, 0.75}}, x);
  EXPECT_FLOAT_EQ(mixed[0], 2.5f);
  EXPECT_FLOAT_EQ(mixed[1], 5.0f);
  // Mean (2, 4): each replica is at squared distance 1 + 4.
  EXPECT_DOUBLE_EQ(learn::consensus_distance(x), 5.0);
  EXPECT_DOUBLE_EQ(learn::consensus_distance({{1, 2}, {1, 2}}), 0.0);
}

TEST(GossipMath, CompleteGraphStepIsSyncsStepToFloatRounding) {
  // Identical replicas and W = 11^T / n: sum_j (x - lr v_j) / n = x - lr mean(v_j), and with
  // v_j = m v + g_j the mean of the momenta is sync's m v + mean(g). Equal in exact arithmetic;
  // in float the sums run in another order (sync averages the gradients, then steps; D-PSGD
  // steps every replica, then averages them in double), so the two agree to a few ulps.
  const int n = 4;
  const float lr = 0.05f, m = 0.9f;
  std::vector<float> x = {0.3f, -1.2f, 2.5f, 0.01f};
  std::vector<std::vector<float>> g = {{0.1f, 0.2f, -0.3f, 0.4f},
                                       {-0.5f, 0.7f, 0.1f, 0.2f},
                                       {0.3f, -0.1f, 0.6f, -0.2f},
                                       {0.25f, 0.05f, -0.15f, 0.35f}};
  learn::GossipReplicas replicas(topology_mixing("complete", n), x);
  std::vector<float> sync = x, sync_v(x.size(), 0.0f);
  for (int it = 0; it < 3; ++it) {
    for (int w = 0; w < n; ++w) {
      const auto& at = replicas.at(w, it);
      for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(at[k], sync[k], 1e-6) << it;
      auto& p = replicas.params(w);
      auto& v = replicas.velocity(w);
      for (size_t k = 0; k < x.size(); ++k) {
        v[k] = m * v[k] + g[w][k] * static_cast<float>(it + 1);
        p[k] -= lr * v[k];
      }
      replicas.sent(w, it);
    }
    for (size_t k = 0; k < x.size(); ++k) {
      float avg = 0;
      for (int w = 0; w < n; ++w) avg += g[w][k] * static_cast<float>(it + 1) / n;
      sync_v[k] = m * sync_v[k] + avg;
      sync[k] -= lr * sync_v[k];
    }
    EXPECT_DOUBLE_EQ(learn::consensus_distance(replicas.mixed(it)), 0.0);
  }
}

TEST(GossipMath, ExponentialGraphReachesConsensusFasterThanTheRing) {
  // Mixing alone (no gradients) from spread-out replicas: W^k contracts the spread by the
  // second eigenvalue, 0.949 for the ring of 16 and 0.6 for the exponential graph.
  auto spread_after = [](const std::string& topology, int mixes) {
    std::vector<std::vector<float>> x(16);
    for (int i = 0; i < 16; ++i) x[i] = {static_cast<float>(i), static_cast<float>(i % 3)};
    const MixingRows w = topology_mixing(topology, 16);
    for (int k = 0; k < mixes; ++k) {
      std::vector<std::vector<float>> next;
      for (const auto& row : w) next.push_back(learn::mix_row(row, x));
      x = next;
    }
    return learn::consensus_distance(x);
  };
  EXPECT_LT(spread_after("exponential", 5), 0.05 * spread_after("ring", 5));
  EXPECT_LT(spread_after("torus", 5), spread_after("ring", 5));
}

TEST(AdpsgdDag, EachWorkerExchangesWithOneSeededNeighbourAfterItsBackwardPass) {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": [
      {"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2}]},
      "workers": {"count": 6}, "batch_size": 1, "iterations": 40, "warmup_iterations": 1,
      "scheme": {"type": "adpsgd", "peers": "ring"}})");
  auto b = build_scheme_of(j);
  EXPECT_EQ(b->scheme->groups(), 6);  // no barrier: every worker runs on its own
  std::map<int, std::set<int>> partners;
  for (int it = 0; it < 40; ++it)
    for (int k = 0; k < 6; ++k) {
      Fragment f = b->scheme->build_group(it, k);
      const TaskGraph& g = f.graph;
      int update = -1, last_bwd = -1;
      std::vector<uint32_t> comms;
      for (uint32_t v = 0; v < g.num_tasks(); ++v) {
        EXPECT_EQ(g.task(v).worker, k);
        if (g.task(v).kind == TaskKind::update) update = static_cast<int>(v);
        if (g.task(v).kind == TaskKind::bwd) last_bwd = static_cast<int>(v);
        if (g.task(v).kind == TaskKind::comm) comms.push_back(v);
      }
      ASSERT_GE(update, 0);
      const int partner = g.task(update).dst;
      EXPECT_TRUE(partner == (k + 1) % 6 || partner == (k + 5) % 6) << partner;
      partners[k].insert(partner);
      ASSERT_EQ(comms.size(), 2u);  // to the partner and back, after the backward pass
      EXPECT_EQ(g.task(comms[0]).src, k);
      EXPECT_EQ(g.task(comms[0]).dst, partner);
      EXPECT_EQ(g.task(comms[1]).src, partner);
      EXPECT_EQ(g.task(comms[1]).dst, k);
      for (uint32_t c : comms) {
        const auto edges = g.edges();
        EXPECT_NE(std::find(edges.begin(), edges.end(),
                            std::make_pair(static_cast<uint32_t>(last_bwd), c)),
                  edges.end());
        EXPECT_NE(
            std::find(edges.begin(), edges.end(), std::make_pair(c, static_cast<uint32_t>(update))),
            edges.end());
      }
      for (const auto& c : f.cross) {  // the next iteration waits for this worker's update only
        EXPECT_EQ(c.lag, 1);
        EXPECT_EQ(c.from, static_cast<uint32_t>(update));
      }
      // Seeded: the same partner when built again.
      EXPECT_EQ(b->scheme->build_group(it, k).graph.task(update).dst, partner);
    }
  for (int k = 0; k < 6; ++k) EXPECT_EQ(partners[k].size(), 2u) << k;  // both neighbours drawn
}

TEST(GossipMath, PairwiseAveragingMakesBothReplicasTheirMean) {
  learn::GossipReplicas r(topology_mixing("ring", 3), {1.0f, 2.0f});
  r.params(0) = {3.0f, 6.0f};
  r.average_pair(0, 1);
  EXPECT_EQ(r.replicas()[0], (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(r.replicas()[1], (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(r.replicas()[2], (std::vector<float>{1.0f, 2.0f}));
}
