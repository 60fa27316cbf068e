// The SimGrid runner (runner.hpp says what it runs as what). Left out: what the platform and
// the SimGrid models leave out (docs/DESIGN.md, section 6).
#include "sim/engine/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/core/errors.hpp"
#include "sim/engine/activities.hpp"
#include "sim/engine/runner_state.hpp"

namespace sg4 = simgrid::s4u;

namespace sgdsim {

namespace {

using namespace run_state;  // NOLINT(google-build-using-namespace): the runner's own types

/// Closed-form messages on private routes where the config asks for them (else null);
/// InputError where they cannot stand for SimGrid's.
std::unique_ptr<PrivateRoutes> private_routes_for(const EngineConfig& config, Platform& platform) {
  if (!config.private_routes || config.fidelity != Fidelity::flow) return nullptr;
  const std::string why = platform.private_routes_refusal(config);
  if (why.empty()) return platform.private_routes();
  if (!config.private_routes_required) return nullptr;  // "auto": every message on SimGrid
  throw InputError(config.scenario_file, "/flow_private_routes",
                   "\"closed_form\" cannot time this run's messages: " + why);
}

/// Executes a lazily built sequence of fragments just in time on SimGrid.
class Runner {
 public:
  Runner(const EngineConfig& config, Platform& platform, const Scheme* scheme, int iterations,
         const Collective& collective, TaskObserver* observer)
      : config_(config),
        group_(config.group),
        platform_(platform),
        scheme_(scheme),
        iterations_(iterations),
        collective_(collective),
        observer_(observer),
        acts_(platform, private_routes_for(config, platform)) {
    group_.ranks = platform.size();
    groups_ = scheme != nullptr ? scheme->groups() : 1;
    live_.resize(static_cast<size_t>(groups_));
    base_.assign(static_cast<size_t>(groups_), 0);
    built_.assign(static_cast<size_t>(groups_), 0);
    if (config.fidelity == Fidelity::analytic)
      cost_ = platform.network_cost(group_, config.reduction_Bps);
    // E.g. nccl_tuner's staged ring: its flow schedule adds what its slices add beyond the
    // ring's messages as a start delay, reckoned on the route costs.
    if (config.fidelity == Fidelity::flow && collective.flow_needs_route_costs(group_))
      group_.tuning_cost = platform.network_cost(group_, config.reduction_Bps);
    rotation_ = config.rotation_symmetry && config.fidelity == Fidelity::flow;
    block_ = rotation_ ? std::max(1, config.rotation_block_ranks) : 1;
    mirror_compute_ = block_ > 1 && config.uniform_compute && config.workers % block_ == 0;
    images_per_task_ = static_cast<size_t>(config.workers / block_);
    if (rotation_)
      if (const std::string why =
              block_ > 1 ? platform.block_asymmetry(config) : platform.rotation_asymmetry(config);
          !why.empty())
        throw InputError(
            config.scenario_file, "/flow_symmetry",
            "\"rotation\" needs a platform that looks the same from every rank: " + why);
    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_completion(a); });
  }

  /// Runs the training DAG to the end.
  EngineResult run_training() {
    for (int g = 0; g < groups_; ++g) ensure_built(g);
    start_background();
    drain();
    platform_.engine().run();
    if (!images_.empty()) fail_symmetry("a worker's compute task has no image in the first block");
    check_symmetry();
    for (int g = 0; g < groups_; ++g)
      if (!live_[g].empty())
        throw std::logic_error(fmt::format("simulation stalled in iteration {}", base_[g]));
    // The other jobs' operation under way when the training ended ran on past it.
    const bool background = config_.background.jobs > 0;
    return with_counts({background ? last_done_s_ : sg4::Engine::get_clock(), acts_.count()});
  }

  /// Runs one collective of `bytes` on all workers.
  EngineResult run_collective(double bytes) { return run_jobs(bytes, 1, 1, 0.0); }

  /// `jobs` chains of `operations` collective tasks, chain j after a delay of j x offset_s
  /// (a compute task of no worker: the timer host's).
  EngineResult run_jobs(double bytes, int jobs, int operations, double offset_s) {
    own_jobs_ = true;
    Fragment f;
    for (int j = 0; j < jobs; ++j) {
      std::optional<uint32_t> prev;
      if (j > 0 && offset_s > 0) prev = f.graph.add_task({TaskKind::io, -1, 0, j, j * offset_s});
      for (int i = 0; i < operations; ++i) {
        Task t{TaskKind::comm, -1, 0, j, 0, bytes};
        t.op = group_.op;
        const uint32_t id = f.graph.add_task(t);
        if (prev) f.graph.add_edge(*prev, id);
        prev = id;
      }
    }
    add_fragment(std::move(f));
    drain();
    platform_.engine().run();
    check_symmetry();
    if (!live_[0].empty()) throw std::logic_error("collective did not finish");
    return with_counts({sg4::Engine::get_clock(), acts_.count()});
  }

  /// `r` with the closed-form messages counted, where they were asked for.
  EngineResult with_counts(EngineResult r) const {
    r.closed_form_messages = acts_.closed_form_count();
    r.closed_form_handovers = acts_.handover_count();
    return r;
  }

 private:
  /// flow_symmetry "rotation" met a message it cannot stand for by rank 0's: the run stopped
  /// starting tasks, and this reports it.
  void check_symmetry() const {
    if (!symmetry_error_.empty())
      throw InputError(
          config_.scenario_file, "/flow_symmetry",
          "\"rotation\" cannot simulate this run exactly: " + symmetry_error_ + "; use \"none\"");
  }

  /// Records why the run is not rotation-symmetric; nothing starts after it.
  void fail_symmetry(const std::string& why) {
    if (symmetry_error_.empty()) symmetry_error_ = why;
  }

  // Fragments are keyed by fid = iteration * groups + group: a scheme whose workers never wait
  // for each other (async) builds one fragment per worker, so a fast worker's iterations do not
  // keep a slow worker's future tasks alive.
  Live& live(int fid) {
    if (fid == kBackground) return background_;
    auto& d = live_[static_cast<size_t>(fid % groups_)];
    return d[static_cast<size_t>(fid / groups_ - base_[fid % groups_])];
  }

  void ensure_built(int fid) {
    const int g = fid % groups_, iteration = fid / groups_;
    if (observer_ != nullptr && observer_->should_stop()) return;
    while (built_[g] <= iteration && built_[g] < iterations_)
      add_fragment(scheme_->build_group(built_[g], g), g);
  }

  void add_fragment(Fragment f, int group = 0) {
    Live l;
    const uint32_t n = f.graph.num_tasks();
    l.pending = f.graph.in_degrees();
    l.start.assign(n, 0.0);
    l.done.assign(n, 0);
    l.remaining = n;
    l.succ_off.assign(n + 1, 0);
    for (uint32_t t = 0; t < n; ++t) {
      auto s = f.graph.successors(t);
      l.succ.insert(l.succ.end(), s.begin(), s.end());
      l.succ_off[t + 1] = static_cast<uint32_t>(l.succ.size());
    }
    const int me = f.iteration * groups_ + group;
    for (const auto& c : f.cross) {
      const int src = f.iteration - c.lag;
      if (src < base_[group] || src < 0) continue;  // retired: already done
      Live& s = live(src * groups_ + group);
      if (s.done[c.from]) continue;
      ++l.pending[c.to];
      s.cross_out[c.from].emplace_back(me, c.to);
    }
    built_[group] = f.iteration + 1;
    l.f = std::move(f);
    live_[group].push_back(std::move(l));
    Live& added = live_[group].back();
    for (uint32_t t = 0; t < n; ++t)
      if (added.pending[t] == 0) ready_.emplace_back(me, t);
  }

  void start_task(int iteration, uint32_t t) {
    Live& l = live(iteration);
    const Task& task = l.f.graph.task(t);
    if (task.queue >= 0) {
      if (queues_.size() <= static_cast<size_t>(task.queue)) queues_.resize(task.queue + 1);
      Queue& q = queues_[task.queue];
      if (q.busy) {
        q.waiting.emplace_back(iteration, t);
        return;
      }
      q.busy = true;
    }
    start_now(iteration, t);
  }

  void start_now(int iteration, uint32_t t) {
    Live& l = live(iteration);
    const Task& task = l.f.graph.task(t);
    if (!symmetry_error_.empty()) return;
    l.start[t] = sg4::Engine::get_clock();
    if (iteration != kBackground) {
      if (observer_ != nullptr) observer_->task_started(task, l.start[t]);
      ensure_built(iteration + groups_);
    }
    if (task.kind == TaskKind::comm && task.src >= 0) {  // point to point
      if (rotation_) {
        fail_symmetry(
            "its point-to-point messages (parameter servers, Chakra sends) do not "
            "rotate with the ranks");
        return;
      }
      if (task.src == task.dst || task.bytes <= 0) {
        finished_.emplace_back(iteration, t);
        return;
      }
      if (config_.fidelity == Fidelity::analytic) {
        // Contention-free, like analytic collectives: one timed activity per message. (Flows
        // of thousands of concurrent pushes also strain SimGrid 3.32's LMM precision.)
        const AlphaBeta& ab = p2p_cost(task.src, task.dst);
        const double duration = ab.alpha_s + task.bytes * ab.beta_s_per_byte;
        acts_.start_exec(platform_.timer(), duration * platform_.timer()->get_speed(),
                         Slot{nullptr, iteration, t, -1, 0, false});
        return;
      }
      acts_.send(platform_.host(task.src), platform_.host(task.dst), task.bytes,
                 Slot{nullptr, iteration, t, -1, 0, false}, MessageSender{0, task.pull});
      return;
    }
    if (task.kind == TaskKind::comm && iteration != kBackground) collective_begins();
    if (task.kind == TaskKind::comm && config_.fidelity != Fidelity::analytic) {
      start_collective(iteration, t, task);
      return;
    }
    const bool analytic = task.kind == TaskKind::comm;
    const double duration = analytic ? analytic_s(task) : task.duration_s;
    if (duration <= 0) {
      finished_.emplace_back(iteration, t);
      return;
    }
    if (!analytic && follows_image(iteration, t, task)) return;
    // A compute task of no worker is a delay (run_jobs): the timer host's, shared with none.
    // A worker's work is its duration at the host's first speed, whichever pstate runs now.
    const bool timer = analytic || task.worker < 0;
    sg4::Host* host = timer ? platform_.timer() : platform_.host(compute_host(task));
    const double speed = timer ? host->get_speed() : platform_.speed(compute_host(task));
    acts_.start_exec(host, duration * speed, Slot{nullptr, iteration, t, -1, 0, false});
  }

  /// device.overlap_slowdown: the workers compute at their slowed speed while at least one
  /// collective of the training is under way (from its task's start to its end).
  void collective_begins() {
    if (config_.overlap_slowdown > 0 && collectives_running_++ == 0)
      platform_.set_workers_slowed(true);
  }
  void collective_ends() {
    if (config_.overlap_slowdown > 0 && --collectives_running_ == 0)
      platform_.set_workers_slowed(false);
  }

  /// Rotating by blocks with uniform compute, a compute task outside the first block ends
  /// with its image inside (same start and duration by the symmetry, checked): true for such
  /// a follower, which is then not simulated (SimGrid 3.32 scans a list of every running Exec
  /// at each end: thousands of workers computing at once make that the run's largest cost).
  bool follows_image(int fid, uint32_t t, const Task& task) {
    if (!mirrored(task)) return false;
    Image& m = images_[{fid, static_cast<int>(task.kind), task.index, task.worker % block_}];
    const double now = sg4::Engine::get_clock();
    const uint64_t order = started_++;
    if (task.worker < block_) {
      if (m.start_s >= 0) fail_symmetry("two compute tasks of a worker look alike");
      m.start_s = now, m.duration_s = task.duration_s;
      for (const auto& [o, f, ft] : m.followers) check_follower(m, f, ft);
      return false;
    }
    m.followers.emplace_back(order, fid, t);
    if (m.start_s >= 0) check_follower(m, fid, t);
    return true;
  }

  /// A worker's own compute task while compute follows images (not a server's apply).
  bool mirrored(const Task& task) const {
    return mirror_compute_ && task.worker >= 0 && task.kind != TaskKind::apply;
  }

  void check_follower(const Image& m, int fid, uint32_t t) {
    Live& l = live(fid);
    if (l.start[t] != m.start_s || l.f.graph.task(t).duration_s != m.duration_s)
      fail_symmetry("a worker's compute task starts or lasts unlike its image's");
  }

  /// The image task of the first block ended: its followers end with it, after every image
  /// ending at this instant and in the order they started, as SimGrid ends equal Execs (a
  /// zero-flop Exec on a ghost host ends after the activities of this instant).
  void end_followers(int fid, const Task& task) {
    if (!mirrored(task) || task.worker >= block_) return;
    auto it = images_.find({fid, static_cast<int>(task.kind), task.index, task.worker});
    if (it == images_.end() || it->second.followers.size() + 1 != images_per_task_)
      return fail_symmetry("a worker's compute task has no image in another block");
    releases_.insert(releases_.end(), it->second.followers.begin(), it->second.followers.end());
    images_.erase(it);
    if (!release_pending_) {
      release_pending_ = true;
      acts_.start_exec(platform_.ghost(0), 0, Slot{nullptr, 0, 0, kRelease, 0, false});
    }
  }

  const AlphaBeta& p2p_cost(int src, int dst) {
    auto key = (static_cast<int64_t>(src) << 32) | static_cast<uint32_t>(dst);
    auto it = p2p_costs_.find(key);
    if (it == p2p_costs_.end()) it = p2p_costs_.emplace(key, platform_.route_cost(src, dst)).first;
    return it->second;
  }

  /// The cache key of a tensor's collective: its size, and its index where the collective
  /// depends on it (byteps hashes the tensor's key; the bucket index stands for the key), its
  /// operation and its subgroups.
  using TensorKey = std::tuple<double, int, CollectiveOp, int>;
  TensorKey tensor_of(const Task& task) const {
    return {task.bytes, collective_.per_tensor() ? task.index : 0, task.op, task.subgroup};
  }
  CollectiveGroup group_for(const TensorKey& key) const {
    CollectiveGroup g = group_;
    g.tensor_key = std::get<1>(key);
    g.op = std::get<2>(key);
    return g;
  }

  double analytic_s(const Task& task) {
    const auto key = tensor_of(task);
    auto it = analytic_.find(key);
    if (it == analytic_.end())
      it = analytic_
               .emplace(key, subgroup_formula_s(collective_, group_for(key), task.bytes, cost_,
                                                task.subgroup))
               .first;
    return it->second;
  }

  const Schedule& schedule_for(const Task& task) {
    const auto key = tensor_of(task);
    auto it = schedules_.find(key);
    if (it != schedules_.end()) return it->second;
    if (rotation_ && block_ > 1 && task.subgroup == 0)  // built without the other blocks'
      if (auto direct = collective_.block_schedule(group_for(key), task.bytes, block_))
        return schedules_.emplace(key, std::move(*direct)).first->second;
    Schedule full = subgroup_schedule(collective_, group_for(key), task.bytes, task.subgroup);
    if (!rotation_) return schedules_.emplace(key, std::move(full)).first->second;
    std::string why;
    std::optional<Schedule> reduced = rotation_reduced(full, block_, &why);
    if (!reduced)
      fail_symmetry(fmt::format("the {} schedule of {} bytes is not the same from every rank ({})",
                                collective_.name(), task.bytes, why));
    return schedules_.emplace(key, reduced ? std::move(*reduced) : Schedule{}).first->second;
  }

  void start_collective(int iteration, uint32_t t, const Task& task) {
    const Schedule& sched = schedule_for(task);
    if (!symmetry_error_.empty()) return;
    if (sched.steps.empty()) {
      finished_.emplace_back(iteration, t);
      return;
    }
    int c;
    if (!free_collectives_.empty()) {
      c = free_collectives_.back();
      free_collectives_.pop_back();
    } else {
      collectives_.emplace_back();
      c = static_cast<int>(collectives_.size() - 1);
    }
    CollectiveRun& run = collectives_[c];
    run.schedule = &sched;
    run.pending = sched.pred_count;
    run.remaining = static_cast<uint32_t>(sched.steps.size());
    run.iteration = iteration;
    run.task = t;
    // Other jobs' processes have connections of their own (run_jobs: job j is task.index).
    run.job = iteration == kBackground ? 1 + task.index : (own_jobs_ ? task.index : 0);
    if (sched.start_delay_s > 0) {
      // The collective's latency, paid once before its messages (nccl_tuner).
      acts_.start_exec(platform_.timer(), sched.start_delay_s * platform_.timer()->get_speed(),
                       Slot{nullptr, iteration, t, c, kStartDelay, false});
      return;
    }
    start_roots(c);
  }

  void start_roots(int c) {
    const Schedule& sched = *collectives_[c].schedule;
    for (uint32_t k = 0; k < sched.steps.size(); ++k)
      if (sched.pred_count[k] == 0) start_step(c, k);
  }

  void start_step(int c, uint32_t k) {
    const CommStep& step = collectives_[c].schedule->steps[k];
    // Rotating by blocks, a message from the first block to another one goes to the ghost
    // standing for its receiver there, on the first block's images of the real route's links.
    sg4::Host* to = block_ > 1 && step.dst >= block_ ? platform_.ghost(step.dst % block_)
                                                     : platform_.host(step.dst);
    acts_.send(platform_.host(step.src), to, step.bytes,
               Slot{nullptr, collectives_[c].iteration, collectives_[c].task, c, k, false},
               MessageSender{collectives_[c].job, step.from_server});
  }

  void on_completion(sg4::Activity const& a) {
    done_.clear();
    acts_.ended(a, &done_);
    for (size_t i = 0; i < done_.size(); ++i) on_slot_done(Slot(done_[i]));
  }

  /// What slot `slot` stood for ended: its task, its collective step or its reduction.
  void on_slot_done(const Slot& slot) {
    if (slot.collective == kRelease) {
      std::sort(releases_.begin(), releases_.end());
      for (const auto& [o, f, ft] : releases_) finished_.emplace_back(f, ft);
      releases_.clear();
      release_pending_ = false;
    } else if (slot.collective < 0) {
      finished_.emplace_back(slot.iteration, slot.task);
      if (mirror_compute_)  // (only then: finding the task costs a lookup per Exec)
        end_followers(slot.iteration, live(slot.iteration).f.graph.task(slot.task));
    } else {
      if (slot.step == kStartDelay) {
        start_roots(slot.collective);
        drain();
        return;
      }
      CollectiveRun& run = collectives_[slot.collective];
      const Schedule& sched = *run.schedule;
      const CommStep& step = sched.steps[slot.step];
      const double server_Bps = group_.server_reduction_Bps;
      if (!slot.reduction && step.server_reduce && server_Bps > 0 && step.reduce_bytes > 0) {
        // A server's sum runs on its CPU at the server summation throughput.
        sg4::Host* cpu = platform_.cpu(step.dst);
        acts_.start_exec(
            cpu, step.reduce_bytes / server_Bps * cpu->get_speed(),
            Slot{nullptr, slot.iteration, slot.task, slot.collective, slot.step, true});
        drain();
        return;
      }
      if (!slot.reduction && !step.server_reduce && config_.reduction_Bps > 0 &&
          step.reduce_bytes > 0) {
        // The receiver reduces what arrived before anything that depends on it proceeds.
        const double flops = step.reduce_bytes / config_.reduction_Bps * platform_.speed(step.dst);
        acts_.start_exec(
            platform_.host(step.dst), flops,
            Slot{nullptr, slot.iteration, slot.task, slot.collective, slot.step, true});
        drain();
        return;
      }
      for (uint32_t i = sched.succ_offsets[slot.step]; i < sched.succ_offsets[slot.step + 1]; ++i)
        if (--run.pending[sched.succ[i]] == 0) start_step(slot.collective, sched.succ[i]);
      if (--run.remaining == 0) {
        finished_.emplace_back(run.iteration, run.task);
        free_collectives_.push_back(slot.collective);
      }
    }
    drain();
  }

  /// Completes finished tasks and starts ready ones until neither is left.
  void drain() {
    while (!finished_.empty() || !ready_.empty()) {
      if (!ready_.empty()) {
        auto [i, t] = ready_.front();
        ready_.pop_front();
        start_task(i, t);
        continue;
      }
      auto [i, t] = finished_.front();
      finished_.pop_front();
      complete(i, t);
    }
  }

  void complete(int iteration, uint32_t t) {
    if (iteration == kBackground) return background_done(t);
    Live& l = live(iteration);
    const double now = sg4::Engine::get_clock();
    last_done_s_ = now;
    l.done[t] = 1;
    const Task& task = l.f.graph.task(t);
    if (observer_ != nullptr) observer_->task_done(task, l.start[t], now);
    if (task.kind == TaskKind::comm && task.src < 0) collective_ends();
    if (task.queue >= 0) {
      Queue& q = queues_[task.queue];
      q.busy = false;
      if (!q.waiting.empty()) {
        auto [wi, wt] = q.waiting.front();
        q.waiting.pop_front();
        q.busy = true;
        start_now(wi, wt);
      }
    }
    for (uint32_t i = l.succ_off[t]; i < l.succ_off[t + 1]; ++i)
      if (--l.pending[l.succ[i]] == 0) ready_.emplace_back(iteration, l.succ[i]);
    if (auto it = l.cross_out.find(t); it != l.cross_out.end()) {
      for (auto [iter, task] : it->second)
        if (--live(iter).pending[task] == 0) ready_.emplace_back(iter, task);
      l.cross_out.erase(it);
    }
    --l.remaining;
    auto& d = live_[static_cast<size_t>(iteration % groups_)];
    while (!d.empty() && d.front().remaining == 0) {
      d.pop_front();
      ++base_[iteration % groups_];
    }
  }

  /// Other jobs' chains (config.background): job j's operation is task 3j, the gap after it
  /// 3j + 1 and its start delay 3j + 2 (ready first); gaps and delays run on the timer host.
  void start_background() {
    const BackgroundTraffic& b = config_.background;
    for (int j = 0; j < b.jobs; ++j) {
      Task op{TaskKind::comm, -1, 0, j, 0, b.bytes};
      op.op = group_.op;
      background_.f.graph.add_task(op);
      background_.f.graph.add_task({TaskKind::io, -1, 0, j, b.gap_s});
      background_.f.graph.add_task({TaskKind::io, -1, 0, j, j * b.offset_s});
      ready_.emplace_back(kBackground, 3 * j + 2);
    }
    background_.start.assign(background_.f.graph.num_tasks(), 0.0);
  }

  /// A task of the other jobs ended: an operation is followed by its gap, a gap or start delay
  /// by the next operation, while the training runs.
  void background_done(uint32_t t) {
    const double now = sg4::Engine::get_clock();
    if (t % 3 == 0 && config_.background.gap_s == 0 && now == background_.start[t])
      throw InputError(config_.scenario_file, "/background/bytes",
                       "an operation of the other jobs takes no time on this platform and they "
                       "have no gap: they would never let the simulated time pass; give a gap");
    for (int g = 0; g < groups_; ++g)
      if (!live_[g].empty()) {
        ready_.emplace_back(kBackground, t % 3 == 0 ? t + 1 : t - t % 3);
        return;
      }
  }

  static constexpr int kBackground = INT_MIN;  // fid of background_
  bool own_jobs_ = false;  // run_jobs: each chain is a job with processes of its own
  const EngineConfig& config_;
  CollectiveGroup group_;
  NetworkCost cost_;
  std::map<TensorKey, double> analytic_;
  std::map<int64_t, AlphaBeta> p2p_costs_;  // analytic point-to-point cost per (src, dst)
  Platform& platform_;
  const Scheme* scheme_;
  int iterations_;
  const Collective& collective_;
  TaskObserver* observer_;
  Activities acts_;
  std::vector<Slot> done_;  // slots ended with the activity SimGrid just ended
  int groups_ = 1;
  std::vector<std::deque<Live>> live_;  // per group, oldest iteration first
  std::vector<int> base_, built_;       // per group: oldest live and next unbuilt iteration
  std::deque<std::pair<int, uint32_t>> ready_, finished_;
  std::vector<CollectiveRun> collectives_;
  std::vector<Queue> queues_;
  std::vector<int> free_collectives_;
  std::map<TensorKey, Schedule> schedules_;  // the first block's messages only when rotation_
  bool rotation_ = false;                    // flow_symmetry "rotation"
  int block_ = 1;                            // ranks per block of the rotation (1: rank by rank)
  using ImageKey = std::tuple<int, int, int, int>;  // fid, kind, index, worker in its block
  std::map<ImageKey, Image> images_;
  bool mirror_compute_ = false;  // follows_image
  size_t images_per_task_ = 1;   // blocks: the image and its followers
  uint64_t started_ = 0;         // compute tasks started through follows_image, in order
  std::vector<std::tuple<uint64_t, int, uint32_t>> releases_;  // followers ending now
  bool release_pending_ = false;  // the Exec that releases them is running
  std::string symmetry_error_;    // why rotation_ cannot go on (the run stops)
  Live background_;               // the other jobs' tasks (start_background)
  double last_done_s_ = 0;        // when the training's last task ended
  int collectives_running_ = 0;   // the training's collective tasks under way
};

}  // namespace

EngineResult simulate_training(const EngineConfig& config, Platform& platform, const Scheme& scheme,
                               int iterations, const Collective& collective,
                               TaskObserver& observer) {
  Runner runner(config, platform, &scheme, iterations, collective, &observer);
  return runner.run_training();
}

EngineResult simulate_collective(const EngineConfig& config, Platform& platform,
                                 const Collective& collective, double bytes) {
  Runner runner(config, platform, nullptr, 1, collective, nullptr);
  return runner.run_collective(bytes);
}

EngineResult simulate_jobs(const EngineConfig& config, Platform& platform,
                           const Collective& collective, double bytes, int jobs, int operations,
                           double offset_s, TaskObserver& observer) {
  Runner runner(config, platform, nullptr, 1, collective, &observer);
  return runner.run_jobs(bytes, jobs, operations, offset_s);
}

}  // namespace sgdsim
