// zero and fsdp: the task graph has FSDP's / DeepSpeed's dependencies, its critical path on a
// contention-free network is the sum the formulas give, and the memory per GPU is the ZeRO
// paper's count.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/schemes/scheme.hpp"
#include "tests/unit/scheme_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;
using sgdsim::test::build_scheme_of;
using sgdsim::test::BuiltScheme;

namespace {

// Four layers of 1000..4000 parameters (fp32 gradients), one unit per layer.
std::unique_ptr<BuiltScheme> build_sharded(const json& scheme, int workers = 4, int per_node = 1) {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": [
      {"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2},
      {"name": "b", "parameters": 2000, "forward_ms": 2, "backward_ms": 3},
      {"name": "c", "parameters": 3000, "forward_ms": 3, "backward_ms": 4},
      {"name": "d", "parameters": 4000, "forward_ms": 4, "backward_ms": 5}]},
      "batch_size": 1, "iterations": 4, "warmup_iterations": 1})");
  j["workers"] = {{"count", workers}, {"per_node", per_node}};
  j["scheme"] = scheme;
  j["scheme"]["fusion_bytes"] = 0;
  return build_scheme_of(j);
}

/// The task of `kind` with `index` (and `op` for comms) of worker `worker` (-1: collectives).
std::vector<uint32_t> find(const TaskGraph& g, TaskKind kind, int index, int worker,
                           CollectiveOp op = CollectiveOp::allreduce) {
  std::vector<uint32_t> out;
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    if (t.kind == kind && t.index == index && t.worker == worker &&
        (kind != TaskKind::comm || t.op == op))
      out.push_back(v);
  }
  return out;
}

bool has_edge(const TaskGraph& g, uint32_t from, uint32_t to) {
  const auto s = g.successors(from);
  return std::find(s.begin(), s.end(), to) != s.end();
}

int count_ops(const TaskGraph& g, CollectiveOp op) {
  int n = 0;
  for (uint32_t v = 0; v < g.num_tasks(); ++v)
    n += g.task(v).kind == TaskKind::comm && g.task(v).op == op;
  return n;
}

}  // namespace

TEST(ShardedDag, Zero3GathersEveryUnitTwiceAndScattersItsGradient) {
  auto b = build_sharded({{"type", "zero"}, {"stage", 3}, {"prefetch", false}});
  Fragment f = b->scheme->build(0);
  const TaskGraph& g = f.graph;
  EXPECT_EQ(count_ops(g, CollectiveOp::allgather), 8);
  EXPECT_EQ(count_ops(g, CollectiveOp::reduce_scatter), 4);
  EXPECT_EQ(count_ops(g, CollectiveOp::allreduce), 0);
  // Forward unit u is bucket 3 - u; each worker's forward of u waits for its all-gather, which
  // waits for every worker's forward of u - 1 (no prefetch).
  for (int u = 0; u < 4; ++u) {
    const int bucket = 3 - u;
    const auto gathers = find(g, TaskKind::comm, bucket, -1, CollectiveOp::allgather);
    ASSERT_EQ(gathers.size(), 2u);  // forward, then backward
    const uint32_t ag = gathers[0];
    for (int k = 0; k < 4; ++k) {
      EXPECT_TRUE(has_edge(g, ag, find(g, TaskKind::fwd, u, k)[0]));
      if (u > 0) {
        EXPECT_TRUE(has_edge(g, find(g, TaskKind::fwd, u - 1, k)[0], ag));
      }
      // Backward of the bucket waits for its second all-gather; its reduce-scatter for it.
      const uint32_t bwd = find(g, TaskKind::bwd, bucket, k)[0];
      EXPECT_TRUE(has_edge(g, gathers[1], bwd));
      EXPECT_TRUE(
          has_edge(g, bwd, find(g, TaskKind::comm, bucket, -1, CollectiveOp::reduce_scatter)[0]));
    }
    EXPECT_EQ(g.task(ag).bytes, b->workload.buckets[bucket].bytes);
  }
}

TEST(ShardedDag, ForwardPrefetchLetsTheNextGatherOverlapTheCurrentForward) {
  auto off = build_sharded({{"type", "fsdp"}, {"forward_prefetch", false}});
  auto on = build_sharded({{"type", "fsdp"}, {"forward_prefetch", true}});
  for (auto* b : {off.get(), on.get()}) {
    const bool prefetch = b == on.get();
    Fragment f = b->scheme->build(0);
    const TaskGraph& g = f.graph;
    for (int u = 1; u < 4; ++u) {
      const uint32_t ag = find(g, TaskKind::comm, 3 - u, -1, CollectiveOp::allgather)[0];
      // Without prefetch unit u's gather waits for unit u-1's forward; with it, for u-2's only.
      EXPECT_EQ(has_edge(g, find(g, TaskKind::fwd, u - 1, 0)[0], ag), !prefetch) << u;
      if (u >= 2) {
        EXPECT_EQ(has_edge(g, find(g, TaskKind::fwd, u - 2, 0)[0], ag), prefetch);
      }
    }
  }
}

TEST(ShardedDag, BackwardPrefetchOrdersTheStream) {
  // backward_pre: bucket 1's gather is issued before bucket 0's backward and reduce-scatter
  // (the stream: gather 0, gather 1, reduce-scatter 0);
  // backward_post: after bucket 0's backward, before its reduce-scatter; none: after it.
  for (const char* mode : {"backward_pre", "backward_post", "none"}) {
    auto b = build_sharded({{"type", "fsdp"}, {"backward_prefetch", mode}});
    Fragment f = b->scheme->build(0);
    const TaskGraph& g = f.graph;
    const uint32_t ag1 = find(g, TaskKind::comm, 1, -1, CollectiveOp::allgather)[1];
    const uint32_t rs0 = find(g, TaskKind::comm, 0, -1, CollectiveOp::reduce_scatter)[0];
    const uint32_t bwd0 = find(g, TaskKind::bwd, 0, 0)[0];
    const std::string m = mode;
    EXPECT_EQ(has_edge(g, bwd0, ag1), m != "backward_pre") << m;
    EXPECT_EQ(has_edge(g, rs0, ag1), m == "none") << m;
    EXPECT_EQ(has_edge(g, ag1, rs0), m != "none") << m;  // pre: issued even earlier
  }
}

TEST(ShardedDag, Zero1And2StepTheShardThenGatherTheParameters) {
  for (int stage : {1, 2}) {
    auto b = build_sharded({{"type", "zero"}, {"stage", stage}});
    Fragment f = b->scheme->build(1);
    const TaskGraph& g = f.graph;
    // Both stages reduce-scatter the gradients (DDP's volume with the all-gather below).
    EXPECT_EQ(count_ops(g, CollectiveOp::reduce_scatter), 4);
    EXPECT_EQ(count_ops(g, CollectiveOp::allreduce), 0);
    EXPECT_EQ(count_ops(g, CollectiveOp::allgather), 4);
    const uint32_t update = find(g, TaskKind::update, 0, 0)[0];
    EXPECT_TRUE(has_edge(g, update, find(g, TaskKind::comm, 0, -1, CollectiveOp::allgather)[0]));
    // The sharded optimizer step: 1/Nd of the parameters.
    EXPECT_DOUBLE_EQ(g.task(update).duration_s, b->workload.update_s / 4);
    // The next iteration starts once the last gather has delivered the parameters.
    const uint32_t last = find(g, TaskKind::comm, 3, -1, CollectiveOp::allgather)[0];
    EXPECT_TRUE(std::any_of(f.cross.begin(), f.cross.end(),
                            [&](const CrossEdge& c) { return c.from == last; }));
  }
}

TEST(ShardedDag, HybridShardsInGroupsAndAllreducesAcrossReplicas) {
  auto b = build_sharded({{"type", "fsdp"}, {"hybrid", true}, {"shard_group", 2}}, 8, 2);
  Fragment f = b->scheme->build(0);
  const TaskGraph& g = f.graph;
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    if (t.kind != TaskKind::comm) continue;
    if (t.op == CollectiveOp::allreduce) {
      EXPECT_EQ(t.subgroup, -2);
      EXPECT_DOUBLE_EQ(t.bytes, b->workload.buckets[t.index].bytes / 2);
    } else {
      EXPECT_EQ(t.subgroup, 2);
    }
  }
  EXPECT_EQ(count_ops(g, CollectiveOp::allreduce), 4);
  EXPECT_DOUBLE_EQ(g.task(find(g, TaskKind::update, 0, 0)[0]).duration_s, b->workload.update_s / 2);
}

TEST(ShardedDag, Zero3WithoutOverlapIsComputePlusThreeCollectivesPerUnit) {
  auto b =
      build_sharded({{"type", "zero"}, {"stage", 3}, {"prefetch", false}, {"overlap", "none"}});
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta ab{5e-6, 1.0 / 1.25e9, 0};
  auto comm_s = [&](const Task& t) {
    CollectiveGroup g{4};
    g.op = t.op;
    return ring.formula_s(g, t.bytes, NetworkCost{ab, ab});
  };
  TaskGraph g = join_fragments(build_fragments(*b->scheme, 3));
  const auto finish = g.earliest_finish_s(
      [&](const Task& t) { return t.kind == TaskKind::comm ? comm_s(t) : t.duration_s; });
  std::vector<double> end(3, 0.0);  // each iteration's last update
  for (uint32_t v = 0; v < g.num_tasks(); ++v)
    if (g.task(v).kind == TaskKind::update)
      end[g.task(v).iteration] = std::max(end[g.task(v).iteration], finish[v]);
  const Workload& w = b->workload;
  double expected = w.forward_s + w.backward_s + w.update_s / 4;
  for (const Bucket& bucket : w.buckets) {
    CollectiveGroup ag{4}, rs{4};
    ag.op = CollectiveOp::allgather;
    rs.op = CollectiveOp::reduce_scatter;
    expected += 2 * ring.formula_s(ag, bucket.bytes, NetworkCost{ab, ab}) +
                ring.formula_s(rs, bucket.bytes, NetworkCost{ab, ab});
  }
  EXPECT_NEAR(end[2] - end[1], expected, 1e-12 * expected);
}

TEST(ShardedDag, ShardGroupOnlyWithHybridButItsDefaultAlways) {
  // A resolved scenario (scenario.resolved.json, a sweep's sweep-scenario.json) writes every
  // default, shard_group 0 included: it must parse again without hybrid; a group must not.
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1,
      "layers": [{"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2}]},
      "workers": {"count": 4}, "scheme": {"type": "fsdp", "shard_group": 0}})");
  EXPECT_NO_THROW(parse_scenario(j, "toy.json"));
  j["scheme"]["shard_group"] = 2;
  try {
    parse_scenario(j, "toy.json");
    FAIL() << "shard_group 2 without hybrid";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/scheme/shard_group"), std::string::npos) << e.what();
  }
  j["scheme"]["hybrid"] = true;
  EXPECT_NO_THROW(parse_scenario(j, "toy.json"));
}

TEST(ShardedDag, RefusesAlgorithmsWithoutTheOperations) {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1,
      "layers": [{"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2}]},
      "workers": {"count": 4}, "scheme": {"type": "zero"}, "collective": {"algorithm": "tree"}})");
  Scenario s = parse_scenario(j, "toy.json");
  Workload w = load_workload(s);
  try {
    make_scheme({&s, &w});
    FAIL() << "tree has no all-gather";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/collective/algorithm"), std::string::npos) << e.what();
  }
}

// Rajbhandari et al. 2020, Figure 1: 7.5B parameters, Nd = 64, mixed-precision Adam (K = 12):
// 120 GB (DDP), 31.4 GB (P_os), 16.6 GB (P_os+g), 1.9 GB (P_os+g+p).
TEST(Memory, ZeroPaperFigure1) {
  const StateBytes amp{2, 2, 12};
  ShardedStates ddp, os, osg, osgp;
  os.degree = osg.degree = osgp.degree = 64;
  os.optimizer = osg.optimizer = osgp.optimizer = true;
  osg.gradients = osgp.gradients = true;
  osgp.parameters = true;
  const double psi = 7.5e9;
  EXPECT_DOUBLE_EQ(memory_per_gpu(psi, amp, ddp, {}).model_states_bytes(), 120e9);
  EXPECT_DOUBLE_EQ(memory_per_gpu(psi, amp, os, {}).model_states_bytes(), psi * (4 + 12.0 / 64));
  EXPECT_DOUBLE_EQ(memory_per_gpu(psi, amp, osg, {}).model_states_bytes(), psi * (2 + 14.0 / 64));
  EXPECT_DOUBLE_EQ(memory_per_gpu(psi, amp, osgp, {}).model_states_bytes(), psi * 16 / 64);
  EXPECT_NEAR(memory_per_gpu(psi, amp, os, {}).model_states_bytes() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(memory_per_gpu(psi, amp, osg, {}).model_states_bytes() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(memory_per_gpu(psi, amp, osgp, {}).model_states_bytes() / 1e9, 1.9, 0.05);
}

TEST(Memory, SchemesCountTheirStatesFromTheScenario) {
  // The same figure from scenarios: 64 workers, fp16 gradients, device.optimizer adam_amp.
  json j = json::parse(R"({"model": {"name": "7.5B", "kind": "measured", "batch_size": 1,
      "layers": [{"name": "all", "parameters": 7500000000, "forward_ms": 1, "backward_ms": 2}]},
      "workers": {"count": 64}, "gradient_precision": "fp16",
      "device": {"optimizer": "adam_amp", "memory_bandwidth": "900GBps"}})");
  const std::vector<std::pair<json, double>> cases = {
      {{{"type", "sync"}}, 120e9},
      {{{"type", "zero"}, {"stage", 1}}, 7.5e9 * (4 + 12.0 / 64)},
      {{{"type", "zero"}, {"stage", 2}}, 7.5e9 * (2 + 14.0 / 64)},
      {{{"type", "zero"}, {"stage", 3}}, 7.5e9 * 16 / 64},
      {{{"type", "fsdp"}}, 7.5e9 * 16 / 64}};
  for (const auto& [scheme, states] : cases) {
    j["scheme"] = scheme;
    Scenario s = parse_scenario(j, "m.json");
    Workload w = load_workload(s);
    const MemoryBreakdown m = scheme_memory(s, w);
    EXPECT_DOUBLE_EQ(m.model_states_bytes(), states) << scheme.dump();
    EXPECT_FALSE(m.activations_bytes) << "the profiles have no activation sizes";
  }
  // ZeRO-3 with prefetch holds two gathered units (here the one unit, the whole model, less
  // its own shard) and the unit's whole gradient before its reduce-scatter.
  j["scheme"] = {{"type", "zero"}, {"stage", 3}};
  Scenario s = parse_scenario(j, "m.json");
  const MemoryBreakdown m = scheme_memory(s, load_workload(s));
  EXPECT_DOUBLE_EQ(m.gathered_bytes, 7.5e9 * 2 * 63 / 64);
  EXPECT_DOUBLE_EQ(m.buffers_bytes, 7.5e9 * 2);
}
