#include "sim/coupling/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "models/learn/gossip.hpp"
#include "models/learn/learn.hpp"
#include "sim/core/rng.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

using learn::Dataset;

struct Trainer::Impl {
  const Scenario& s;
  TaskObserver& inner;
  Dataset train, test;
  std::unique_ptr<learn::Model> model;
  std::vector<std::vector<int>> shards;            // per worker: its training samples
  std::vector<std::vector<float>> grads;           // per worker: latest gradient
  std::vector<std::vector<float>> snapshots;       // per worker: parameters the gradient used
  std::vector<std::vector<float>> local;           // local_sgd: per-worker parameters
  std::vector<std::vector<float>> local_velocity;  // local_sgd: per-worker momentum
  std::vector<learn::AdamW> local_adamw;           // diloco's inner AdamW: per-worker state
  std::vector<std::vector<float>> pulled;          // async: parameters each worker holds
  std::unique_ptr<learn::GossipReplicas> gossip;   // dpsgd, adpsgd: every worker's replica
  bool pairwise = false;                           // adpsgd: averaging with one partner
  std::vector<float> velocity;                     // head momentum (sync family, async servers)
  std::vector<float> delta;  // head EMA of weight deltas (a predictor's delta_lookahead)
  // Sync family (sync, pseudo_sync, ssp): every replica applies the same step at the same
  // step index, so replica w is the head (params(), velocity) rewound to the number of steps
  // it has applied. Versions some worker still holds are kept here, by steps applied: one
  // (two parameter-sized vectors) per step the fastest replica is ahead of the slowest.
  struct Version {
    std::vector<float> params, velocity;
    std::vector<float> delta;  // the predictor's EMA of weight deltas (empty unless it uses one)
  };
  std::map<int, Version> versions;
  std::vector<int> steps_held;  // per worker: steps its replica has applied (its updates done)
  int head_steps = 0;           // steps the head has applied
  // local_sgd: each worker's parameters after its update of an evaluated iteration.
  std::map<int, std::vector<std::vector<float>>> eval_locals;
  std::map<int, std::pair<std::vector<float>, std::vector<float>>> averaged;  // iter -> (G, params)
  // Sync family: each worker's gradient of an iteration, kept until its allreduce ends (a
  // worker may already compute the next iteration's gradient while this one is in flight).
  std::map<int, std::vector<std::vector<float>>> in_flight;
  std::map<int, std::vector<float>> in_flight_params;  // iter -> parameters it was computed at
  std::map<int, int> updates_seen;
  std::unique_ptr<learn::Predictor> predictor;
  // scheme.compression: each worker's gradient compressed (its residual kept inside), and the
  // messages of the last bucket's exchange seen per iteration (the last delivers the average).
  std::unique_ptr<learn::Compressor> compressor;
  int exchange_messages = 1;
  std::map<int, int> last_bucket_messages;
  std::vector<ConvergencePoint> points;
  double time_to_target_s = -1;
  int buckets = 0;
  int servers = 1;
  // async per layer or bucket: each key's slice of the proxy's parameters, and the keys of
  // each push unit (a unit's forward reads its slices as they were last pulled).
  std::vector<std::pair<size_t, size_t>> key_slices;
  std::vector<std::vector<int>> unit_keys;
  bool per_unit = false;

  UpdateRule rule;  // the scheme's: which of the state above the math uses

  Impl(const Scenario& sc, TaskObserver& in) : s(sc), inner(in), rule(scheme_update_rule(sc)) {}

  std::vector<float>& params() { return model->parameters(); }

  /// The parameters worker `w` holds now (sync family).
  const std::vector<float>& replica_params(int w) {
    const int held = steps_held[static_cast<size_t>(w)];
    return held == head_steps ? params() : versions.at(held).params;
  }
  /// The momentum worker `w` holds now (sync family).
  const std::vector<float>& replica_velocity(int w) {
    const int held = steps_held[static_cast<size_t>(w)];
    return held == head_steps ? velocity : versions.at(held).velocity;
  }
  /// The EMA of weight deltas worker `w` holds now (sync family).
  const std::vector<float>& replica_delta(int w) {
    const int held = steps_held[static_cast<size_t>(w)];
    return held == head_steps ? delta : versions.at(held).delta;
  }
  /// The parameters after `steps` steps (sync family), for evaluation.
  const std::vector<float>& params_after(int steps) {
    return steps == head_steps ? params() : versions.at(steps).params;
  }

  std::vector<int> batch(int worker, int iteration) const {
    const auto& shard = shards[static_cast<size_t>(worker)];
    std::vector<int> b(static_cast<size_t>(s.batch_size));
    for (int j = 0; j < s.batch_size; ++j)
      b[static_cast<size_t>(j)] =
          shard[(static_cast<size_t>(iteration) * s.batch_size + j) % shard.size()];
    return b;
  }

  int lr_iteration = 0;  // iteration whose learning rate the next step uses

  /// v = m v + g + wd w; w -= lr v, with the training's momentum and learning rate unless a
  /// predictor's step asks for other ones (`momentum` >= 0 replaces m, `rate_scale` scales lr).
  void sgd_step(std::vector<float>& w, std::vector<float>& v, const std::vector<float>& g,
                size_t lo, size_t hi, double momentum = -1, double rate_scale = 1) const {
    const auto& t = s.training;
    const auto rate = static_cast<float>(t.learning_rate_at(lr_iteration, s.workers));
    const auto m = static_cast<float>(momentum >= 0 ? momentum : t.momentum);
    const auto step_rate = rate_scale == 1 ? rate : static_cast<float>(rate * rate_scale);
    for (size_t k = lo; k < hi; ++k) {
      v[k] = m * v[k] + g[k] + static_cast<float>(t.weight_decay) * w[k];
      w[k] -= step_rate * v[k];
    }
  }

  /// The parameters key `key` covers: a shard of the whole vector (granularity "model"), or the
  /// key's share of the timed gradient mapped proportionally onto the proxy's parameters.
  std::pair<size_t, size_t> key_range(int key) const {
    return per_unit ? key_slices[static_cast<size_t>(key)] : shard_range(key);
  }

  /// Slices for async's keys: key k starts at round(n o_k / G) where o_k is its offset in the
  /// timed gradient (layers in forward order) and G the gradient size, and ends where the next
  /// key (by offset) starts, so the slices partition the parameters.
  void set_key_slices(const std::vector<PsKey>& keys) {
    const size_t n = params().size();
    double total = 0;
    for (const auto& k : keys) total += k.bytes;
    std::vector<int> order(keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return keys[a].offset_bytes < keys[b].offset_bytes; });
    key_slices.assign(keys.size(), {0, 0});
    auto start = [&](int k) {
      return total > 0
                 ? std::min(n, static_cast<size_t>(std::llround(n * keys[k].offset_bytes / total)))
                 : size_t{0};
    };
    for (size_t i = 0; i < order.size(); ++i)
      key_slices[order[i]] = {i == 0 ? 0 : start(order[i]),
                              i + 1 < order.size() ? start(order[i + 1]) : n};
    for (size_t k = 0; k < keys.size(); ++k) {
      if (unit_keys.size() <= static_cast<size_t>(keys[k].unit)) unit_keys.resize(keys[k].unit + 1);
      unit_keys[keys[k].unit].push_back(static_cast<int>(k));
    }
  }

  std::pair<size_t, size_t> shard_range(int shard) const {
    const size_t n = params().size(), per = (n + servers - 1) / servers;
    return {std::min(n, per * shard), std::min(n, per * (shard + 1))};
  }
  const std::vector<float>& params() const { return model->parameters(); }

  /// Evaluates after `iteration` iterations: the sync family at the parameters after that many
  /// steps, local SGD at the mean of `locals` (every worker's parameters after that iteration).
  void evaluate(double time_s, int iteration,
                const std::vector<std::vector<float>>* locals = nullptr) {
    std::unique_ptr<learn::Model> probe = model->clone();
    if (locals != nullptr) {
      auto& p = probe->parameters();
      std::fill(p.begin(), p.end(), 0.0f);
      for (const auto& l : *locals)
        for (size_t k = 0; k < p.size(); ++k) p[k] += l[k] / static_cast<float>(locals->size());
    } else if (!steps_held.empty()) {
      probe->parameters() = params_after(iteration);
    }
    learn::Evaluation e = probe->evaluate(test);
    points.push_back({time_s, iteration, e.loss, e.accuracy});
    if (time_to_target_s < 0 && s.training.target_accuracy > 0 &&
        e.accuracy >= s.training.target_accuracy)
      time_to_target_s = time_s;
  }
  /// A worker's last bucket of backward: its gradient at the parameters it holds now (the
  /// sync family keeps it until its allreduce ends).
  static void backward_done(Impl& m, const Task& task) {
    const Scenario& s = m.s;
    const int it = task.iteration;
    const auto* averaged = std::get_if<AveragedUpdate>(&m.rule);
    const auto* local = std::get_if<LocalUpdate>(&m.rule);
    const bool by_servers = std::holds_alternative<ServerUpdate>(m.rule);
    const int w = task.worker;
    // The worker's own replica: a faster worker's update may have advanced the head already.
    const std::vector<float>& at = local        ? m.local[w]
                                   : by_servers ? m.pulled[w]
                                   : m.pairwise ? m.snapshots[w]  // read at its forward
                                   : m.gossip   ? m.gossip->at(w, it)
                                                : m.replica_params(w);
    m.snapshots[w] = at;
    if (m.predictor && m.predictor->lookahead() > 0) {
      // Weight prediction: the gradient is taken near where its delayed step will land.
      const auto c =
          static_cast<float>(m.predictor->lookahead() * s.training.learning_rate_at(it, s.workers));
      const std::vector<float>& v = m.replica_velocity(w);
      for (size_t k = 0; k < at.size(); ++k) m.snapshots[w][k] -= c * v[k];
    }
    if (m.predictor && m.predictor->delta_lookahead() > 0) {
      // Weight extrapolation: the gradient is taken at w + s d, d the EMA of weight deltas.
      const auto c = static_cast<float>(m.predictor->delta_lookahead());
      const std::vector<float>& d = m.replica_delta(w);
      for (size_t k = 0; k < at.size(); ++k) m.snapshots[w][k] += c * d[k];
    }
    m.model->gradient(m.snapshots[w], m.train, m.batch(w, it), m.grads[w]);
    if (averaged) {
      auto& slot = m.in_flight[it];
      slot.resize(static_cast<size_t>(s.workers));
      slot[static_cast<size_t>(w)] = m.grads[w];
      m.in_flight_params.try_emplace(it, m.snapshots[w]);
    }
  }

  /// The allreduce of iteration `it` has delivered the average of every worker's gradient.
  static void allreduce_done(Impl& m, int it) {
    // The allreduce of this iteration has delivered the average of every worker's gradient.
    std::vector<float> avg(m.params().size(), 0.0f);
    const auto& all = m.in_flight.at(it);
    if (m.compressor)  // the average of the workers' decompressed compressed gradients
      m.compressor->exchange(all, avg);
    else
      for (const auto& g : all)
        for (size_t k = 0; k < avg.size(); ++k) avg[k] += g[k] / static_cast<float>(all.size());
    m.averaged[it] = {std::move(avg), std::move(m.in_flight_params.at(it))};
    m.in_flight.erase(it);
    m.in_flight_params.erase(it);
  }

  /// Whether `task` ends the exchange of its iteration's gradients: the last bucket's gradient
  /// collective (an all-gather moves parameters, not gradients), or with compression the last
  /// message of the last bucket's exchange.
  bool gradient_exchange_done(const Task& task) {
    const int it = task.iteration;
    if (task.kind != TaskKind::comm || task.worker >= 0 || task.index + 1 != buckets ||
        !in_flight.count(it))
      return false;
    if (!compressor) return task.op != CollectiveOp::allgather;
    if (++last_bucket_messages[it] < exchange_messages) return false;
    last_bucket_messages.erase(it);
    return true;
  }

  /// The element-wise mean of the replicas' vectors.
  static std::vector<float> replica_mean(const std::vector<std::vector<float>>& group) {
    std::vector<float> mean(group.front().size(), 0.0f);
    for (const auto& l : group)
      for (size_t k = 0; k < mean.size(); ++k) mean[k] += l[k] / static_cast<float>(group.size());
    return mean;
  }

  /// DiLoCo's outer step on the replicas' mean; each replica restarts at the new global
  /// parameters (the head's) and keeps its inner momentum.
  static void outer_step(Impl& m, const OuterOptimizer& outer) {
    outer_optimizer_step(m.params(), m.velocity, replica_mean(m.local), outer);
    for (auto& l : m.local) l = m.params();
  }

  /// Local SGD and DiLoCo: every worker's replica, momentum and inner AdamW state.
  void start_replicas(const LocalUpdate& rule) {
    const size_t n = params().size(), workers = static_cast<size_t>(s.workers);
    local.assign(workers, params());
    local_velocity.assign(workers, std::vector<float>(n, 0.0f));
    if (const auto& a = rule.adamw)
      local_adamw.assign(workers, learn::AdamW(n, {a->beta1, a->beta2, a->eps, a->weight_decay}));
  }

  /// Worker `w`'s inner step on its own replica: SGD with momentum, or DiLoCo's AdamW.
  void inner_step(size_t w) {
    if (local_adamw.empty())
      sgd_step(local[w], local_velocity[w], grads[w], 0, params().size());
    else
      local_adamw[w].step(local[w], grads[w], s.training.learning_rate_at(lr_iteration, s.workers));
  }

  /// Streaming DiLoCo: the outer step of the parameters [lo, hi) only (one fragment); the
  /// replicas restart there, the rest of each replica goes on.
  static void outer_step(Impl& m, const OuterOptimizer& outer, size_t lo, size_t hi) {
    auto slice = [lo, hi](const std::vector<float>& v) {
      return std::vector<float>(v.begin() + static_cast<ptrdiff_t>(lo),
                                v.begin() + static_cast<ptrdiff_t>(hi));
    };
    std::vector<std::vector<float>> parts;
    for (const auto& l : m.local) parts.push_back(slice(l));
    std::vector<float> global = slice(m.params()), velocity = slice(m.velocity);
    outer_optimizer_step(global, velocity, replica_mean(parts), outer);
    std::copy(global.begin(), global.end(), m.params().begin() + static_cast<ptrdiff_t>(lo));
    std::copy(velocity.begin(), velocity.end(), m.velocity.begin() + static_cast<ptrdiff_t>(lo));
    for (auto& l : m.local)
      std::copy(global.begin(), global.end(), l.begin() + static_cast<ptrdiff_t>(lo));
  }

  /// The fragments synchronized after iteration `it` (all: [0] when not streaming).
  static std::vector<int> fragments_due(const LocalUpdate& local, int it) {
    std::vector<int> due;
    for (int p = 0; p < local.fragments; ++p)
      if (local.fragments == 1 ? (it + 1) % local.period == 0
                               : fragment_synchronizes(p, local.fragments, local.period, it))
        due.push_back(p);
    return due;
  }

  /// Local SGD: the worker's local step, and every period the replicas' average.
  static void local_update(Impl& m, const Task& task, const LocalUpdate& local, int seen) {
    const Scenario& s = m.s;
    const int it = task.iteration;
    const int w = task.worker;
    const std::vector<int> due = fragments_due(local, it);
    if (due.empty()) {
      m.inner_step(static_cast<size_t>(w));
    } else if (seen == 1) {
      // The allreduce has ended, so every worker's gradient of this step is in: each replica
      // takes its local step, then replicas average parameters and momentum (so that a period
      // of 1 is exactly sync), before any worker starts its next step on them.
      for (size_t v = 0; v < m.local.size(); ++v) m.inner_step(v);
      if (local.outer && local.fragments > 1) {
        const size_t n = m.params().size(), f = static_cast<size_t>(local.fragments);
        for (int p : due) {
          const auto q = static_cast<size_t>(p);
          outer_step(m, *local.outer, n * q / f, n * (q + 1) / f);
        }
      } else if (local.outer) {
        outer_step(m, *local.outer);
      } else {
        for (auto* group : {&m.local, &m.local_velocity}) {
          const std::vector<float> mean = replica_mean(*group);
          for (auto& l : *group) l = mean;
        }
      }
    }
    if ((it + 1) % s.training.eval_every == 0 || it + 1 == s.iterations) {
      auto& held = m.eval_locals[it];
      held.resize(static_cast<size_t>(s.workers));
      held[static_cast<size_t>(w)] = m.local[w];
    }
    m.averaged.clear();
  }

  /// D-PSGD: worker `w` steps its own replica with its own gradient and momentum; its
  /// messages of iteration `it` carry the result.
  /// AD-PSGD: the update averages worker `w`'s replica with its partner's (none: `partner`
  /// < 0) and applies `w`'s gradient to its own.
  static void gossip_step(Impl& m, int w, int it, int partner) {
    if (m.pairwise && partner >= 0) m.gossip->average_pair(w, partner);
    m.sgd_step(m.gossip->params(w), m.gossip->velocity(w), m.grads[w], 0, m.params().size());
    if (!m.pairwise) m.gossip->sent(w, it);
  }

  /// The sync family: the head takes step `it` with the average of iteration it - lag.
  static void averaged_update(Impl& m, int it, const AveragedUpdate* averaged) {
    const size_t n = m.params().size();
    // A worker's update of step `it` is its replica's step `it` (its next compute waits for
    // it), and every replica takes the same step: the head takes it at the first worker's
    // update and keeps the version the workers still behind it hold.
    m.versions[m.head_steps] = {m.params(), m.velocity, m.delta};
    const int step = m.head_steps++;
    const int source = it - averaged->lag;
    auto found = m.averaged.find(source);
    if (found != m.averaged.end()) {
      if (averaged->predicted) {
        std::vector<float> predicted;
        m.predictor->predict(found->second.first, m.params(), found->second.second, predicted);
        if (m.predictor->restart_momentum()) std::fill(m.velocity.begin(), m.velocity.end(), 0.0f);
        m.sgd_step(m.params(), m.velocity, predicted, 0, n,
                   m.predictor->effective_momentum(m.s.training.momentum),
                   m.predictor->learning_rate_scale(step));
      } else {
        m.sgd_step(m.params(), m.velocity, found->second.first, 0, n);
      }
    }
    if (!m.delta.empty()) {  // d = g d + (1 - g) (w_new - w_old) over this step
      const auto g = static_cast<float>(m.predictor->delta_decay());
      const std::vector<float>& before = m.versions.at(step).params;
      for (size_t k = 0; k < n; ++k)
        m.delta[k] = g * m.delta[k] + (1 - g) * (m.params()[k] - before[k]);
    }
    m.averaged.erase(m.averaged.begin(),
                     m.averaged.lower_bound(source + 1 - std::max(1, averaged->lag)));
  }

  /// After a worker's update: old versions no replica holds go, and a finished iteration is
  /// evaluated when due.
  static void update_done(Impl& m, const Task& task, int seen, double end_s) {
    const Scenario& s = m.s;
    const int it = task.iteration;
    const bool by_servers = std::holds_alternative<ServerUpdate>(m.rule);
    if (!m.steps_held.empty()) {
      ++m.steps_held[static_cast<size_t>(task.worker)];
      const int oldest = *std::min_element(m.steps_held.begin(), m.steps_held.end());
      m.versions.erase(m.versions.begin(), m.versions.lower_bound(oldest));
    }
    const bool iteration_done = by_servers || m.pairwise ? task.worker == 0 : seen == s.workers;
    if (iteration_done) {
      m.updates_seen.erase(it);
      if (m.gossip && ((it + 1) % s.training.eval_every == 0 || it + 1 == s.iterations)) {
        // Every worker has sent its step of `it`: evaluate the mean of the mixed replicas
        // (adpsgd: of the replicas as they are when worker 0 ends it).
        const auto mixed = m.pairwise ? m.gossip->replicas() : m.gossip->mixed(it);
        m.evaluate(end_s, it + 1, &mixed);
        m.points.back().consensus_distance = learn::consensus_distance(mixed);
      } else if ((it + 1) % s.training.eval_every == 0 || it + 1 == s.iterations) {
        auto held = m.eval_locals.find(it);
        m.evaluate(end_s, it + 1, held != m.eval_locals.end() ? &held->second : nullptr);
        if (held != m.eval_locals.end()) m.eval_locals.erase(held);
      }
    }
  }
};

learn::PredictorOptions predictor_options(const TrainingSpec& t) {
  learn::PredictorOptions o;
  o.learning_rate = t.learning_rate;
  o.momentum = t.momentum;
  o.values = t.predictor_values;
  return o;
}

Trainer::Trainer(const Scenario& s, int buckets, TaskObserver& inner, std::vector<PsKey> keys)
    : impl_(std::make_unique<Impl>(s, inner)) {
  Impl& m = *impl_;
  m.buckets = buckets;
  const auto& t = s.training;
  if (t.dataset == "fashion-mnist") {
    m.train = learn::fashion_mnist("train");
    m.test = learn::fashion_mnist("test");
  } else {
    const int dim = t.input_dim();
    Dataset all = learn::gaussian_mixture(24000, dim, t.classes(), s.seed, t.synthetic_overlap,
                                          t.synthetic_label_noise);
    m.train = all;
    m.test = all;
    m.train.x.resize(static_cast<size_t>(20000) * dim);
    m.train.y.resize(20000);
    m.test.x.assign(all.x.begin() + static_cast<ptrdiff_t>(20000) * dim, all.x.end());
    m.test.y.assign(all.y.begin() + 20000, all.y.end());
  }
  if (t.model == "cnn") {
    learn::CnnShape shape;
    shape.height = shape.width = 28;  // the scenario allows cnn on Fashion-MNIST only
    shape.channels = t.channels;
    shape.kernel = t.kernel;
    shape.hidden = t.hidden;
    shape.classes = m.train.classes;
    m.model = std::make_unique<learn::Cnn>(shape, s.seed);
  } else {
    m.model = std::make_unique<learn::Mlp>(
        m.train.dim, t.model == "mlp" ? t.hidden : std::vector<int>{}, m.train.classes, s.seed);
  }
  // iid shards: a seeded permutation dealt round-robin.
  std::vector<int> perm(static_cast<size_t>(m.train.size()));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(s.seed, 0x5348415244ULL);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.next_u64() % (i + 1)]);
  m.shards.assign(static_cast<size_t>(s.workers), {});
  if (t.shards == "by_label") {
    // Non-iid: sorted by label, dealt in contiguous blocks, so each worker sees few classes.
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int a, int b) { return m.train.y[a] < m.train.y[b]; });
    const size_t block = (perm.size() + s.workers - 1) / s.workers;
    for (size_t i = 0; i < perm.size(); ++i) m.shards[i / block].push_back(perm[i]);
  } else {
    for (size_t i = 0; i < perm.size(); ++i) m.shards[i % s.workers].push_back(perm[i]);
  }
  const size_t n = m.params().size();
  m.grads.assign(static_cast<size_t>(s.workers), std::vector<float>(n, 0.0f));
  m.snapshots = m.grads;
  m.velocity.assign(n, 0.0f);
  if (const auto* averaged = std::get_if<AveragedUpdate>(&m.rule)) {
    m.steps_held.assign(static_cast<size_t>(s.workers), 0);
    if (averaged->predicted) {
      m.predictor = learn::make_predictor(s.scheme.predictor, n, predictor_options(t));
      if (m.predictor->delta_lookahead() > 0) m.delta.assign(n, 0.0f);
    }
    if (const learn::CompressorKind* kind = s.scheme.compressor()) {
      m.compressor =
          learn::make_compressor(m.model->tensors(), s.workers, s.seed, s.scheme.compression);
      // Every bucket's exchange has the same number of messages (a nominal bucket tells it).
      m.exchange_messages = static_cast<int>(
          kind->plan({1e6, s.workers, s.gradient_bytes_per_parameter, {1e6}}, s.scheme.compression)
              .messages.size());
    }
  } else if (const auto* local = std::get_if<LocalUpdate>(&m.rule)) {
    m.start_replicas(*local);
  } else if (const auto* gossip = std::get_if<GossipUpdate>(&m.rule)) {
    m.gossip = std::make_unique<learn::GossipReplicas>(gossip->mixing, m.params());
    m.pairwise = gossip->pairwise;
  } else {  // ServerUpdate
    m.pulled.assign(static_cast<size_t>(s.workers), m.params());
    m.servers = s.scheme.servers;
    m.per_unit = s.scheme.granularity != "model";
    if (m.per_unit) m.set_key_slices(keys);
  }
}

void outer_optimizer_step(std::vector<float>& global, std::vector<float>& velocity,
                          const std::vector<float>& mean, const OuterOptimizer& outer) {
  const auto lr = static_cast<float>(outer.learning_rate);
  const auto mu = static_cast<float>(outer.momentum);
  for (size_t k = 0; k < global.size(); ++k) {
    const float d = global[k] - mean[k];
    const float v_old = velocity[k];
    velocity[k] = mu * v_old + d;
    const float momentum_term = outer.nesterov ? mu * velocity[k] : mu * v_old;
    // global - lr (d + mu v) (or - lr v) written from the mean: lr 1, mu 0 give it exactly.
    global[k] = mean[k] + (1.0f - lr) * d - lr * momentum_term;
  }
}

Trainer::~Trainer() = default;

void Trainer::task_started(const Task& task, double start_s) {
  Impl& m = *impl_;
  if (m.pairwise && task.kind == TaskKind::fwd)  // adpsgd: the gradient's point is read now
    m.snapshots[task.worker] = m.gossip->params(task.worker);
  if (task.kind == TaskKind::comm && task.pull) {  // the pull carries the shard as it is now
    auto [lo, hi] = m.key_range(task.index);
    std::copy(m.params().begin() + lo, m.params().begin() + hi, m.pulled[task.worker].begin() + lo);
  }
  if (m.per_unit && task.kind == TaskKind::fwd && task.worker >= 0 &&
      static_cast<size_t>(task.index) < m.unit_keys.size()) {
    // A unit's forward reads the parameters its keys last pulled: the gradient is taken there.
    for (int key : m.unit_keys[task.index]) {
      auto [lo, hi] = m.key_slices[key];
      std::copy(m.pulled[task.worker].begin() + lo, m.pulled[task.worker].begin() + hi,
                m.snapshots[task.worker].begin() + lo);
    }
  }
  m.inner.task_started(task, start_s);
}

void Trainer::task_done(const Task& task, double start_s, double end_s) {
  Impl& m = *impl_;
  const int it = task.iteration;
  // The backward pass of a worker ends with its last bucket: compute its gradient now, at
  // the parameters the worker holds at this simulated instant.
  if (m.per_unit && task.kind == TaskKind::bwd && task.worker >= 0 && task.index == 0) {
    // async per layer or bucket: the first unit's keys are pushed now, so the gradient (the
    // whole backward pass's, at the parameters every unit's forward read) is needed now.
    const int w = task.worker;
    m.model->gradient(m.snapshots[w], m.train, m.batch(w, it), m.grads[w]);
  }
  if (!m.per_unit && task.kind == TaskKind::bwd && task.worker >= 0 && task.index + 1 == m.buckets)
    Impl::backward_done(m, task);
  if (m.gradient_exchange_done(task)) Impl::allreduce_done(m, it);
  m.lr_iteration = it;
  if (task.kind == TaskKind::apply) {  // async: the server applies one shard of one gradient
    auto [lo, hi] = m.key_range(task.index);
    m.sgd_step(m.params(), m.velocity, m.grads[task.worker], lo, hi);
  }
  if (task.kind == TaskKind::update) {
    const int seen = ++m.updates_seen[it];
    if (const auto* local = std::get_if<LocalUpdate>(&m.rule))
      Impl::local_update(m, task, *local, seen);
    else if (const auto* averaged = std::get_if<AveragedUpdate>(&m.rule); averaged && seen == 1)
      Impl::averaged_update(m, it, averaged);
    else if (m.gossip)  // dpsgd: the local step its messages carry; adpsgd: average and step
      Impl::gossip_step(m, task.worker, it, task.dst);
    Impl::update_done(m, task, seen, end_s);
  }
  m.inner.task_done(task, start_s, end_s);
}

bool Trainer::should_stop() const {
  return impl_->time_to_target_s >= 0;
}

const std::vector<ConvergencePoint>& Trainer::convergence() const {
  return impl_->points;
}

const std::vector<float>& Trainer::parameters() const {
  return impl_->params();
}

nlohmann::json Trainer::summary() const {
  const Impl& m = *impl_;
  const std::string proxy = m.s.training.model + " " + m.s.training.layers_name();
  nlohmann::json j = {{"proxy_model", proxy},
                      {"parameters", m.params().size()},
                      {"dataset", m.s.training.dataset},
                      {"evaluations", m.points.size()}};
  j["final_loss"] =
      m.points.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.points.back().loss);
  j["final_accuracy"] =
      m.points.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.points.back().accuracy);
  j["time_to_target_s"] =
      m.time_to_target_s >= 0 ? nlohmann::json(m.time_to_target_s) : nlohmann::json(nullptr);
  return j;
}

}  // namespace sgdsim
