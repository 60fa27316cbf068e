// The coupled trainer's math under a 2x straggler against a reference loop written here from
// the learn API alone: every worker keeps its own explicit replica (parameters, momentum
// buffer, predictor state) and applies the same events in the same order. pseudo_sync, ssp
// and sync must end bit-identical to the trainer, whose replicas share one head plus the
// versions slower workers still hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "models/learn/learn.hpp"
#include "sim/core/rng.hpp"
#include "sim/coupling/trainer.hpp"
#include "sim/scenario/scenario.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {

constexpr int kWorkers = 4, kSlow = 3, kBatch = 16, kIterations = 24;

struct Event {
  Task task;
  double start_s = 0, end_s = 0;
};

Task make_task(TaskKind kind, int worker, int iteration) {
  Task t;
  t.kind = kind;
  t.worker = worker;
  t.iteration = iteration;
  return t;
}

/// The completion order of a one-bucket run: worker kSlow computes 2x slower; a worker's
/// compute of step i follows its update of step i-1; the allreduce of step i follows every
/// gradient of step i and the previous allreduce; the update of step i waits for the
/// allreduce of step i - lag (lag 0 sync, 1 pseudo_sync, s ssp).
std::vector<Event> straggler_schedule(int lag) {
  std::vector<Event> events;
  std::vector<double> update_end(kWorkers, 0.0);
  std::vector<double> allreduce_end;
  for (int i = 0; i < kIterations; ++i) {
    std::vector<double> bwd_end(kWorkers);
    for (int w = 0; w < kWorkers; ++w) {
      const double compute_s = w == kSlow ? 2.0 : 1.0;
      bwd_end[w] = update_end[w] + compute_s;
      events.push_back({make_task(TaskKind::bwd, w, i), update_end[w], bwd_end[w]});
    }
    const double ar_start = std::max(*std::max_element(bwd_end.begin(), bwd_end.end()),
                                     allreduce_end.empty() ? 0.0 : allreduce_end.back());
    allreduce_end.push_back(ar_start + 0.37);
    events.push_back({make_task(TaskKind::comm, -1, i), ar_start, allreduce_end.back()});
    for (int w = 0; w < kWorkers; ++w) {
      const double ready = i >= lag ? std::max(bwd_end[w], allreduce_end[i - lag]) : bwd_end[w];
      update_end[w] = ready + 0.05;
      events.push_back({make_task(TaskKind::update, w, i), ready, update_end[w]});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.end_s < b.end_s; });
  return events;
}

class Ignore final : public TaskObserver {
 public:
  void task_done(const Task&, double, double) override {}
};

Scenario training_scenario(const std::vector<std::string>& scheme) {
  json raw = json::parse(R"({"model": "mlp", "workers": {"count": 4}, "batch_size": 16,
      "iterations": 24, "training": {"model": {"type": "mlp", "hidden": [16]},
      "dataset": "synthetic", "learning_rate": 0.05, "momentum": 0.9, "eval_every": 8}})");
  raw["scheme"] = json::object();
  for (const auto& kv : scheme) {  // "key=JSON" sets scheme.key, "training.key=JSON" training.key
    const auto eq = kv.find('=');
    const bool training = kv.rfind("training.", 0) == 0;
    json& section = training ? raw["training"] : raw["scheme"];
    section[kv.substr(training ? 9 : 0, eq - (training ? 9 : 0))] = json::parse(kv.substr(eq + 1));
  }
  return parse_scenario(raw, "replica.json");
}

/// One worker of the reference: its own replica, momentum and predictor.
struct Replica {
  std::vector<float> params;
  learn::Sgd sgd;
  std::unique_ptr<learn::Predictor> predictor;
  std::map<int, std::vector<float>> taken_at;  // iteration -> where its gradient was taken
  int steps = 0;
};

struct ReferenceResult {
  std::vector<std::vector<float>> replicas;
  int gradients_at_an_older_version = 0;  // gradients taken while some replica was ahead
  int momentum_restarts = 0;              // replica steps the predictor restarted momentum at
};

/// The reference loop over `events`: the same data, shards and model as the trainer builds
/// (documented in README "Real training math"), every replica kept explicitly.
ReferenceResult reference(const Scenario& s, const std::vector<Event>& events) {
  const auto& t = s.training;
  learn::Dataset all = learn::gaussian_mixture(24000, t.input_dim(), t.classes(), s.seed,
                                               t.synthetic_overlap, t.synthetic_label_noise);
  all.x.resize(static_cast<size_t>(20000) * all.dim);
  all.y.resize(20000);
  std::vector<int> perm(20000);
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(s.seed, 0x5348415244ULL);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.next_u64() % (i + 1)]);
  std::vector<std::vector<int>> shards(kWorkers);
  for (size_t i = 0; i < perm.size(); ++i) shards[i % kWorkers].push_back(perm[i]);
  learn::Mlp model(all.dim, t.hidden, t.classes(), s.seed);
  const size_t n = model.num_parameters();
  std::vector<Replica> replicas;
  for (int w = 0; w < kWorkers; ++w)
    replicas.push_back({model.parameters(),
                        learn::Sgd(n, t.momentum, t.weight_decay),
                        s.scheme.type == "pseudo_sync"
                            ? learn::make_predictor(s.scheme.predictor, n, predictor_options(t))
                            : nullptr,
                        {},
                        0});
  const int lag = s.scheme.type == "pseudo_sync" ? 1
                  : s.scheme.type == "ssp"       ? s.scheme.staleness
                                                 : 0;
  std::map<int, std::vector<std::vector<float>>> gradients;
  std::map<int, std::vector<float>> averaged;
  ReferenceResult r;
  for (const auto& e : events) {
    const int w = e.task.worker, i = e.task.iteration;
    const double lr = t.learning_rate_at(i, kWorkers);
    if (e.task.kind == TaskKind::bwd) {
      Replica& me = replicas[w];
      std::vector<float> at = me.params;
      const double c = me.predictor ? me.predictor->lookahead() : 0.0;
      for (size_t k = 0; k < n; ++k) at[k] -= static_cast<float>(c * lr) * me.sgd.velocity()[k];
      std::vector<int> batch(kBatch);
      for (int j = 0; j < kBatch; ++j)
        batch[j] = shards[w][(static_cast<size_t>(i) * kBatch + j) % shards[w].size()];
      auto& slot = gradients[i];
      slot.resize(kWorkers);
      model.gradient(at, all, batch, slot[w]);
      me.taken_at[i] = at;
      for (const auto& other : replicas)
        if (other.steps > me.steps) {
          ++r.gradients_at_an_older_version;
          break;
        }
    } else if (e.task.kind == TaskKind::comm) {
      std::vector<float> avg(n, 0.0f);
      for (const auto& g : gradients.at(i))
        for (size_t k = 0; k < n; ++k) avg[k] += g[k] / static_cast<float>(kWorkers);
      averaged[i] = avg;
    } else if (e.task.kind == TaskKind::update) {
      Replica& me = replicas[w];
      ++me.steps;
      if (i - lag < 0) continue;
      const std::vector<float>& g = averaged.at(i - lag);  // must have arrived
      if (me.predictor) {
        std::vector<float> predicted;
        me.predictor->predict(g, me.params, me.taken_at.at(i - lag), predicted);
        if (me.predictor->restart_momentum()) {
          me.sgd.reset_velocity();
          ++r.momentum_restarts;
        }
        me.sgd.step(me.params, predicted, lr);
      } else {
        me.sgd.step(me.params, g, lr);
      }
    }
  }
  for (auto& me : replicas) r.replicas.push_back(me.params);
  return r;
}

}  // namespace

TEST(Replicas, StragglerMathEqualsExplicitPerWorkerReplicas) {
  const std::vector<std::vector<std::string>> schemes = {
      {"type=\"pseudo_sync\""},
      {"type=\"pseudo_sync\"", "predictor=\"none\""},
      // A large step: the restart safeguard fires, and each replica restarts alike.
      {"type=\"pseudo_sync\"", "training.learning_rate=0.5"},
      {"type=\"ssp\"", "staleness=2"},
      {"type=\"sync\""}};
  for (const auto& scheme : schemes) {
    const Scenario s = training_scenario(scheme);
    const int lag = s.scheme.type == "pseudo_sync" ? 1 : s.scheme.type == "ssp" ? 2 : 0;
    const std::vector<Event> events = straggler_schedule(lag);
    Ignore ignore;
    Trainer trainer(s, 1, ignore);
    for (const auto& e : events) {
      trainer.task_started(e.task, e.start_s);
      trainer.task_done(e.task, e.start_s, e.end_s);
    }
    const ReferenceResult ref = reference(s, events);
    // The straggler really computes at a version the fast workers have left (not for sync).
    if (lag > 0) {
      EXPECT_GT(ref.gradients_at_an_older_version, 0) << scheme.front();
    }
    if (scheme.back() == "training.learning_rate=0.5") {
      EXPECT_GT(ref.momentum_restarts, 0);
    }
    const std::vector<float>& got = trainer.parameters();
    for (int w = 0; w < kWorkers; ++w) {
      ASSERT_EQ(ref.replicas[w].size(), got.size());
      EXPECT_EQ(std::memcmp(ref.replicas[w].data(), got.data(), got.size() * sizeof(float)), 0)
          << scheme.front() << " worker " << w;
    }
    EXPECT_EQ(trainer.convergence().size(), static_cast<size_t>(kIterations / 8));
  }
}

TEST(Replicas, TheScheduleHasAStraggler) {
  // The fast workers' second update ends before the straggler's second gradient (pseudo_sync).
  double fast_update = 0, slow_bwd = 0;
  for (const auto& e : straggler_schedule(1)) {
    if (e.task.iteration != 1) continue;
    if (e.task.kind == TaskKind::update && e.task.worker == 0) fast_update = e.end_s;
    if (e.task.kind == TaskKind::bwd && e.task.worker == kSlow) slow_bwd = e.end_s;
  }
  EXPECT_LT(fast_update, slow_bwd);
}
