#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/schemes/scheme.hpp"
#include "tests/unit/scheme_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;
using sgdsim::test::build_scheme_of;
using sgdsim::test::BuiltScheme;

namespace {

std::unique_ptr<BuiltScheme> build_dag(const std::string& overlap, int workers = 3,
                                       int accumulation_steps = 1,
                                       const std::string& type = "sync") {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": [
      {"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2},
      {"name": "b", "parameters": 2000, "forward_ms": 1, "backward_ms": 3},
      {"name": "c", "parameters": 3000, "forward_ms": 1, "backward_ms": 4}]},
      "batch_size": 1, "iterations": 4, "warmup_iterations": 1,
      "scheme": {"type": "sync", "fusion_bytes": 0}})");
  j["workers"]["count"] = workers;
  j["scheme"]["overlap"] = overlap;
  j["scheme"]["accumulation_steps"] = accumulation_steps;
  j["scheme"]["type"] = type;
  return build_scheme_of(j);
}

std::vector<uint32_t> of_kind(const TaskGraph& g, TaskKind k) {
  std::vector<uint32_t> out;
  for (uint32_t v = 0; v < g.num_tasks(); ++v)
    if (g.task(v).kind == k) out.push_back(v);
  return out;
}

std::set<uint32_t> preds(const TaskGraph& g, uint32_t v) {
  std::set<uint32_t> out;
  for (auto [a, b] : g.edges())
    if (b == v) out.insert(a);
  return out;
}

}  // namespace

TEST(SyncDag, WfbpStartsEachBucketAfterItsOwnBackward) {
  auto b = build_dag("wfbp");
  Fragment f = b->scheme->build(0);
  const TaskGraph& g = f.graph;
  auto comms = of_kind(g, TaskKind::comm);
  ASSERT_EQ(comms.size(), 3u);  // one bucket per layer
  for (uint32_t c : comms) {
    const int bucket = g.task(c).index;
    std::set<uint32_t> expected;
    for (uint32_t v : of_kind(g, TaskKind::bwd))
      if (g.task(v).index == bucket) expected.insert(v);
    EXPECT_EQ(expected.size(), 3u);  // every worker's backward of that bucket
    for (uint32_t c2 : comms)
      if (g.task(c2).index == bucket - 1) expected.insert(c2);  // the collective stream
    EXPECT_EQ(preds(g, c), expected) << "bucket " << bucket;
    EXPECT_EQ(g.task(c).worker, -1);
  }
  // Backward runs last layer first: bucket 0 holds layer c (3000 params x 4 bytes).
  EXPECT_DOUBLE_EQ(g.task(comms[0]).bytes, 12000);
}

TEST(SyncDag, NoOverlapWaitsForTheWholeBackwardPass) {
  auto b = build_dag("none");
  const TaskGraph& g = b->scheme->build(0).graph;
  for (uint32_t c : of_kind(g, TaskKind::comm))
    for (uint32_t p : preds(g, c))
      if (g.task(p).kind == TaskKind::bwd) {
        EXPECT_EQ(g.task(p).index, 2);
      }
}

TEST(SyncDag, NextIterationWaitsForTheUpdate) {
  auto b = build_dag("wfbp");
  Fragment f1 = b->scheme->build(1);
  ASSERT_EQ(f1.cross.size(), 3u);
  Fragment f0 = b->scheme->build(0);
  for (const auto& c : f1.cross) {
    EXPECT_EQ(c.lag, 1);
    EXPECT_EQ(f0.graph.task(c.from).kind, TaskKind::update);
    EXPECT_EQ(f1.graph.task(c.to).kind, TaskKind::fwd);
    EXPECT_EQ(f0.graph.task(c.from).worker, f1.graph.task(c.to).worker);
  }
  // Every update waits for the last collective of its iteration.
  const TaskGraph& g = f0.graph;
  uint32_t last_comm = of_kind(g, TaskKind::comm).back();
  for (uint32_t u : of_kind(g, TaskKind::update)) EXPECT_TRUE(preds(g, u).count(last_comm));
}

TEST(SyncDag, CriticalPathOfOneIteration) {
  // 1 worker: collectives take no time; the path is fwd + bwd + update.
  auto b = build_dag("wfbp", 1);
  TaskGraph g = join_fragments(build_fragments(*b->scheme, 2));
  auto finish = g.earliest_finish_s([](const Task& t) { return t.duration_s; });
  double end = *std::max_element(finish.begin(), finish.end());
  const Workload& w = b->workload;
  EXPECT_NEAR(end, 2 * (w.forward_s + w.backward_s + w.update_s), 1e-12);
  EXPECT_NEAR(w.forward_s, 0.003, 1e-12);
}

TEST(SyncDag, WfbpCriticalPathIsNeverLongerThanNoOverlap) {
  auto comm_cost = [](const Task& t) {
    return t.kind == TaskKind::comm ? t.bytes * 1e-7 : t.duration_s;
  };
  auto wf = build_dag("wfbp"), no = build_dag("none");
  auto end = [&](const Scheme& s) {
    auto f = join_fragments(build_fragments(s, 4)).earliest_finish_s(comm_cost);
    return *std::max_element(f.begin(), f.end());
  };
  EXPECT_LT(end(*wf->scheme), end(*no->scheme));
}

/// The accumulation DAG checks of one scheme and overlap: `one` and `three` micro-batches.
void check_accumulation_dag(const std::unique_ptr<BuiltScheme>& one,
                            const std::unique_ptr<BuiltScheme>& three, const std::string& overlap) {
  const TaskGraph& g = three->scheme->build(0).graph;
  EXPECT_EQ(of_kind(g, TaskKind::fwd).size(), 6u);
  EXPECT_EQ(of_kind(g, TaskKind::bwd).size(), 18u);
  EXPECT_EQ(of_kind(g, TaskKind::comm).size(), 3u);
  EXPECT_EQ(of_kind(g, TaskKind::update).size(), 2u);
  const Workload& w = three->workload;
  const double micro_s = w.forward_s + w.backward_s;  // 9 ms
  auto finish = g.earliest_finish_s([](const Task& t) { return t.duration_s; });
  for (uint32_t c : of_kind(g, TaskKind::comm))
    for (uint32_t p : preds(g, c))
      if (g.task(p).kind == TaskKind::bwd) {
        EXPECT_GT(finish[p], 2 * micro_s + 1e-12);
      }
  // The communication overlaps no earlier micro-batch: whatever a collective costs, the
  // step is longer by exactly the two extra micro-batches.
  for (double s_per_byte : {0.0, 1e-7, 1e-5}) {
    auto cost = [&](const Task& t) {
      return t.kind == TaskKind::comm ? t.bytes * s_per_byte : t.duration_s;
    };
    auto end = [&](const Scheme& s) {
      auto f = join_fragments(build_fragments(s, 1)).earliest_finish_s(cost);
      return *std::max_element(f.begin(), f.end());
    };
    EXPECT_NEAR(end(*three->scheme) - end(*one->scheme), 2 * micro_s, 1e-12)
        << overlap << " " << s_per_byte;
  }
}

TEST(SyncDag, AccumulationExchangesOnlyTheLastMicroBatch) {
  // 3 micro-batches per step: each worker runs 3 forward and 3 x 3 backward tasks, the
  // collectives are the same 3, and each waits only for backward tasks of the last micro-batch;
  // in every scheme that declares the option (pseudo_sync and ssp build the same worker chain).
  for (const std::string type : {"sync", "pseudo_sync", "ssp"})
    for (const std::string overlap : {"wfbp", "none"}) {
      SCOPED_TRACE(type + " " + overlap);
      check_accumulation_dag(build_dag(overlap, 2, 1, type), build_dag(overlap, 2, 3, type),
                             overlap);
    }
}

TEST(SyncDag, AccumulationIsRefusedWhereTheSchemeHasNoMicroBatches) {
  EXPECT_THROW(build_dag("wfbp", 2, 3, "async"), InputError);
  EXPECT_THROW(build_dag("wfbp", 2, 3, "local_sgd"), InputError);
}
TEST(TaskGraph, CycleIsDetected) {
  TaskGraph g;
  uint32_t a = g.add_task({}), c = g.add_task({});
  g.add_edge(a, c);
  g.add_edge(c, a);
  EXPECT_THROW(g.topological_order(), std::logic_error);
}

TEST(TaskGraph, ReusedStorageStartsEmptyAndViewsEqualCopies) {
  // Graphs take the storage of destroyed ones (sim/dag's pool): a new one must not see the
  // old tasks, edges or successor lists.
  {
    TaskGraph old;
    for (int k = 0; k < 5; ++k) old.add_task({TaskKind::fwd, k});
    old.add_edge(0, 1);
    old.add_edge(3, 4);
    EXPECT_EQ(old.successors(0), std::vector<uint32_t>({1}));
  }
  TaskGraph g;
  EXPECT_EQ(g.num_tasks(), 0u);
  EXPECT_EQ(g.num_edges(), 0u);
  g.add_task({TaskKind::fwd, 0});
  g.add_task({TaskKind::bwd, 0});
  g.add_task({TaskKind::update, 0});
  g.add_edge(0, 2);
  g.add_edge(0, 1);
  g.add_edge(1, 2);
  std::vector<uint32_t> offsets, targets;
  g.successor_lists(offsets, targets);
  const std::vector<uint32_t>*view_offsets = nullptr, *view_targets = nullptr;
  g.successor_lists_view(&view_offsets, &view_targets);
  EXPECT_EQ(*view_offsets, offsets);
  EXPECT_EQ(*view_targets, targets);
  EXPECT_EQ(offsets, std::vector<uint32_t>({0, 2, 3, 3}));
  EXPECT_EQ(targets, std::vector<uint32_t>({2, 1, 2}));  // insertion order
  EXPECT_EQ(g.in_degrees(), std::vector<uint32_t>({0, 1, 2}));
}

TEST(TaskGraph, ExportsDotAndJson) {
  auto b = build_dag("wfbp", 2);
  TaskGraph g = join_fragments(build_fragments(*b->scheme, 2));
  std::string dot = to_dot(g);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("comm[0] all i1"), std::string::npos);
  json j = json::parse(to_json(g));
  EXPECT_EQ(j["tasks"].size(), g.num_tasks());
  EXPECT_EQ(j["edges"].size(), g.num_edges());
}

TEST(Variability, SeededAndReproducible) {
  VariabilitySpec v;
  v.compute_jitter_cv = 0.2;
  v.straggler_fraction = 0.25;
  v.straggler_slowdown = 3.0;
  ComputeVariability a(v, 42, 8), b(v, 42, 8);
  int stragglers = 0;
  for (int w = 0; w < 8; ++w) {
    stragglers += a.is_straggler(w);
    EXPECT_EQ(a.factor(w, 3, 1), b.factor(w, 3, 1));
  }
  EXPECT_EQ(stragglers, 2);
  double sum = 0;
  const int n = 20000;
  VariabilitySpec j;
  j.compute_jitter_cv = 0.2;
  ComputeVariability jitter(j, 1, 1);
  for (int i = 0; i < n; ++i) sum += jitter.factor(0, i, 0);
  EXPECT_NEAR(sum / n, 1.0, 0.01);  // mean-one log-normal
}

namespace {
/// The toy scenario with scheme `type` (its fields `extra`) and the top-level fields `top`.
std::unique_ptr<BuiltScheme> build_scheme(const std::string& type, json extra = json::object(),
                                          const json& top = json::object()) {
  json j = json::parse(R"({"model": {"name": "toy", "kind": "measured", "batch_size": 1, "layers": [
      {"name": "a", "parameters": 1000, "forward_ms": 1, "backward_ms": 2},
      {"name": "b", "parameters": 2000, "forward_ms": 1, "backward_ms": 3}]},
      "workers": {"count": 3}, "batch_size": 1, "iterations": 6, "warmup_iterations": 1})");
  j["scheme"] = {{"type", type}, {"fusion_bytes", 0}};
  j["scheme"].update(extra);
  j.update(top);
  return build_scheme_of(j);
}
}  // namespace

TEST(PseudoSyncDag, ForwardDoesNotWaitForThePreviousAllreduceButTheUpdateDoes) {
  auto b = build_scheme("pseudo_sync");
  Fragment f0 = b->scheme->build(0), f1 = b->scheme->build(1);
  for (const auto& c : f1.cross) {
    const Task& from = f0.graph.task(c.from);
    const Task& to = f1.graph.task(c.to);
    if (from.kind == TaskKind::comm) {  // the previous allreduce gates prediction and the stream
      EXPECT_TRUE(to.kind == TaskKind::predict || to.kind == TaskKind::comm)
          << task_kind_name(to.kind);
    }
    if (to.kind == TaskKind::fwd) {
      EXPECT_EQ(from.kind, TaskKind::update);
    }
  }
  // Within an iteration the update follows the prediction, not this iteration's allreduce.
  for (uint32_t u : of_kind(f1.graph, TaskKind::update)) {
    for (uint32_t p : preds(f1.graph, u)) EXPECT_NE(f1.graph.task(p).kind, TaskKind::comm);
    bool after_predict = false;
    for (uint32_t p : preds(f1.graph, u))
      after_predict |= f1.graph.task(p).kind == TaskKind::predict;
    EXPECT_TRUE(after_predict);
  }
  EXPECT_EQ(of_kind(f1.graph, TaskKind::predict).size(), 3u);
}

TEST(AsyncDag, NoEdgeBetweenWorkers) {
  auto b = build_scheme("async", {{"servers", 2}});
  Fragment f0 = b->scheme->build(0), f1 = b->scheme->build(1);
  for (auto [a, c] : f1.graph.edges()) EXPECT_EQ(f1.graph.task(a).worker, f1.graph.task(c).worker);
  for (const auto& c : f1.cross)
    EXPECT_EQ(f0.graph.task(c.from).worker, f1.graph.task(c.to).worker);
  // Each worker pushes to, gets applied on and pulls from every server; applies queue per server.
  EXPECT_EQ(of_kind(f1.graph, TaskKind::apply).size(), 3u * 2);
  for (uint32_t a : of_kind(f1.graph, TaskKind::apply))
    EXPECT_EQ(f1.graph.task(a).queue, f1.graph.task(a).index);
  EXPECT_TRUE(of_kind(f1.graph, TaskKind::comm).size() == 3u * 2 * 2);
}

namespace {
/// Every field of `a` but its iteration equals `b`'s (bitwise for the doubles).
void expect_same_but_iteration(const Task& a, const Task& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(std::bit_cast<uint64_t>(a.duration_s), std::bit_cast<uint64_t>(b.duration_s));
  EXPECT_EQ(std::bit_cast<uint64_t>(a.bytes), std::bit_cast<uint64_t>(b.bytes));
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.pull, b.pull);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.subgroup, b.subgroup);
}

/// Group g's fragments of iterations `from` - 1 to 5 differ in their tasks' iteration only.
void expect_fragments_repeat(const Scheme& scheme, int from, int g) {
  for (int i = from; i < 6; ++i) {
    const Fragment prev = scheme.build_group(i - 1, g);
    const Fragment next = scheme.build_group(i, g);
    EXPECT_EQ(next.iteration, i);
    ASSERT_EQ(next.graph.num_tasks(), prev.graph.num_tasks());
    for (uint32_t t = 0; t < next.graph.num_tasks(); ++t) {
      EXPECT_EQ(prev.graph.task(t).iteration, i - 1);
      EXPECT_EQ(next.graph.task(t).iteration, i);
      expect_same_but_iteration(next.graph.task(t), prev.graph.task(t));
    }
    EXPECT_EQ(next.graph.edges(), prev.graph.edges());
    ASSERT_EQ(next.cross.size(), prev.cross.size());
    for (size_t c = 0; c < next.cross.size(); ++c) {
      EXPECT_EQ(next.cross[c].lag, prev.cross[c].lag);
      EXPECT_EQ(next.cross[c].from, prev.cross[c].from);
      EXPECT_EQ(next.cross[c].to, prev.cross[c].to);
    }
  }
}
}  // namespace

// The analytic scheduler copies a worker's previous fragment from Scheme::repeats_from on: each
// worker's fragment must then be the previous one with its iteration one more, nothing else.
TEST(AsyncDag, FragmentsRepeatFromTheSecondIterationUnlessComputeTimesAreDrawn) {
  for (const std::string granularity : {"model", "layer", "bucket"}) {
    for (const std::string placement : {"colocated", "dedicated"}) {
      SCOPED_TRACE(granularity + " " + placement);
      auto b = build_scheme(
          "async", {{"servers", 2}, {"granularity", granularity}, {"server_placement", placement}});
      const int from = b->scheme->repeats_from();
      ASSERT_EQ(from, 2);
      for (int g = 0; g < b->scheme->groups(); ++g) expect_fragments_repeat(*b->scheme, from, g);
    }
  }
  // Jitter or stragglers draw compute times per iteration: nothing repeats.
  const json servers = {{"servers", 2}};
  EXPECT_EQ(build_scheme("async", servers, {{"variability", {{"compute_jitter", 0.05}}}})
                ->scheme->repeats_from(),
            -1);
  const json stragglers = {{"stragglers", {{"fraction", 0.5}, {"slowdown", 2}}}};
  EXPECT_EQ(build_scheme("async", servers, {{"variability", stragglers}})->scheme->repeats_from(),
            -1);
}

// One group too: the analytic scheduler runs a retired sync fragment again (its tasks kept as
// built, the iteration the observer sees shifted) instead of building the same one.
TEST(SyncDag, FragmentsRepeatFromTheSecondIterationUnlessComputeTimesAreDrawn) {
  for (const json& scheme : {json::object(), json{{"overlap", "none"}},
                             json{{"accumulation_steps", 3}}, json{{"merge", "mgwfbp"}}}) {
    SCOPED_TRACE(scheme.dump());
    auto b = build_scheme("sync", scheme);
    ASSERT_EQ(b->scheme->repeats_from(), 2);
    expect_fragments_repeat(*b->scheme, 2, 0);
  }
  EXPECT_EQ(build_scheme("sync", json::object(), {{"variability", {{"compute_jitter", 0.05}}}})
                ->scheme->repeats_from(),
            -1);
}

TEST(SspDag, UpdateWaitsForTheAllreduceOfSStepsBack) {
  auto b = build_scheme("ssp", {{"staleness", 2}});
  EXPECT_EQ(update_lag(scheme_update_rule(b->scenario)), 2);
  Fragment f1 = b->scheme->build(1), f3 = b->scheme->build(3);
  for (const auto& c : f1.cross) EXPECT_NE(f1.graph.task(c.to).kind, TaskKind::update);
  int gated = 0;
  for (const auto& c : f3.cross)
    gated += c.lag == 2 && f3.graph.task(c.to).kind == TaskKind::update;
  EXPECT_EQ(gated, 3);
}

TEST(LocalSgdDag, CollectivesOnlyEveryPeriod) {
  auto b = build_scheme("local_sgd", {{"period", 3}});
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(of_kind(b->scheme->build(i).graph, TaskKind::comm).empty(), (i + 1) % 3 != 0) << i;
}

TEST(MgWfbp, MergesWhenTheCollectiveCannotFinishBeforeTheNextGradient) {
  // Three buckets ready at 1, 2, 3 s; a collective costs 0.5 s + 1 s/byte-unit.
  std::vector<Bucket> in = {{2, 2, 1.0, 1.0}, {1, 1, 1.0, 1.0}, {0, 0, 1.0, 1.0}};
  auto cost = [](double bytes) { return 0.5 + bytes; };
  // Bucket 0's collective would run 1..2.5, past bucket 1's readiness at 2, but it would have
  // started 1 s before: waiting is worse than alpha 0.5, so no merge; bucket 1 (2.5..4) would
  // wait 0.5 s for bucket 2, not less than alpha: no merge either.
  auto out = merge_buckets_mgwfbp(in, 0.5, cost);
  EXPECT_EQ(out.size(), 3u);
  // With alpha 2 the short wait is worth it: everything merges into one collective.
  auto merged = merge_buckets_mgwfbp(in, 2.0, cost);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_DOUBLE_EQ(merged[0].bytes, 3.0);
  EXPECT_EQ(merged[0].first_layer, 0);
  EXPECT_DOUBLE_EQ(merged[0].backward_s, 3.0);
}

namespace {
/// Five layers of 1 s of backward each; layers 2 and 0 have no parameters, so the tensors are
/// ready at 1 s (layer 4), 2 s (layer 3) and 5 s (layer 1, with parameter-free layers 2 and 0
/// run beside it, as its bucket's backward task runs them).
std::vector<LayerCost> horovod_layers() {
  return {{"l0", 0, 1, 0}, {"l1", 0, 1, 1}, {"l2", 0, 1, 0}, {"l3", 0, 1, 1}, {"l4", 0, 1, 1}};
}
/// The buckets as [first_layer, last_layer] pairs, backward order.
std::vector<std::pair<int, int>> spans(const std::vector<Bucket>& buckets) {
  std::vector<std::pair<int, int>> out;
  for (const Bucket& b : buckets) out.emplace_back(b.first_layer, b.last_layer);
  return out;
}
}  // namespace

TEST(HorovodFusion, EachCycleFusesTheGradientsReadySinceTheLast) {
  // Cycles of 1.5 s, an allreduce 0.5 s + 1 s a byte: at 1.5 s layer 4 (ends 3.0); at 3.0
  // layer 3 (ends 4.5); at 6.0 (4.5 finds nothing ready) layer 1 with layers 2 and 0.
  const auto out =
      fuse_buckets_horovod(horovod_layers(), 1e9, 1.5, [](double bytes) { return 0.5 + bytes; });
  using Spans = std::vector<std::pair<int, int>>;
  EXPECT_EQ(spans(out), (Spans{{4, 4}, {3, 3}, {0, 2}}));
  EXPECT_DOUBLE_EQ(out[2].backward_s, 3.0);
}

TEST(HorovodFusion, ASlowAllreduceLetsTheNextCycleFuseMore) {
  // An allreduce of 4.5 s: the cycle after the first starts at its end (6 s), when layers 3
  // and 1 are both ready: one allreduce of both, unless fusion_bytes keeps them apart.
  const auto slow = [](double bytes) { return 0.5 + 4 * bytes; };
  using Spans = std::vector<std::pair<int, int>>;
  const auto fused = fuse_buckets_horovod(horovod_layers(), 1e9, 1.5, slow);
  EXPECT_EQ(spans(fused), (Spans{{4, 4}, {0, 3}}));
  EXPECT_DOUBLE_EQ(fused[1].bytes, 2.0);
  EXPECT_DOUBLE_EQ(fused[1].backward_s, 4.0);
  EXPECT_EQ(spans(fuse_buckets_horovod(horovod_layers(), 1.5, 1.5, slow)),
            (Spans{{4, 4}, {3, 3}, {0, 2}}));
  // A long cycle fuses everything ready by then: 10 s, all three tensors in one allreduce.
  EXPECT_EQ(spans(fuse_buckets_horovod(horovod_layers(), 1e9, 10, slow)), (Spans{{0, 4}}));
}
