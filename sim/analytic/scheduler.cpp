// The analytic scheduler (DESIGN.md §6): the same just-in-time execution of the schemes' task
// DAG as sim/engine's SimGrid runner at fidelity "analytic", on an event heap of its own.
// Models: a task's duration as that runner gives it; a host's processor shared equally among
// the compute tasks running on it (SimGrid's CPU model on one core); queues (server applies)
// serving in ready order; collectives and messages as contention-free timed activities.
// Leaves out what "analytic" leaves out on SimGrid too: network contention, link sharing,
// per-step reductions of flow collectives.
#include "sim/analytic/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sgdsim {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
/// Speed of SimGrid's timer host (sim/engine runs analytic collectives there as Execs).
constexpr double kTimerSpeed = 1e9;
/// SimGrid's time precision as sgdsim sets it (surf/precision:1e-12): activities due within it
/// of the clock end together.
constexpr double kPrecision_s = 1e-12;
/// How many completions ahead of the one being processed their data is prefetched.
constexpr size_t kPrefetchAhead = 8;

/// A completion on a heap: a timed activity (host < 0) or the host's next compute completion
/// as of `version` (stale once the host's set of running tasks changed).
struct Live;

struct Event {
  double time_s = 0;
  uint64_t seq = 0;  // ties complete in the order they were scheduled
  Live* live = nullptr;
  int32_t host = -1;
  uint32_t version = 0;
  uint32_t task = 0;
};

struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time_s > b.time_s || (a.time_s == b.time_s && a.seq > b.seq);
  }
};

/// Timed activities: the earliest first, and on ties the most recently started (`seq` counts
/// their starts), as SimGrid 3.32 ends same-date activities of one multi-core host.
struct LaterTimed {
  bool operator()(const Event& a, const Event& b) const {
    return a.time_s > b.time_s || (a.time_s == b.time_s && a.seq < b.seq);
  }
};

/// A priority queue of events with a first-in-first-out fast path: an event due no earlier than
/// the last one queued (`after(e, last)`, or equal) is appended to a sorted FIFO instead of the
/// heap. Waves of equal-length tasks started together (every worker's forward, without
/// jitter) then cost O(1) each instead of a heap of 10^5 entries.
template <class After>
class EventQueue {
 public:
  bool empty() const { return fifo_.empty() && heap_.empty(); }
  void push(const Event& e) {
    if (fifo_.empty() || !After()(fifo_.back(), e))
      fifo_.push_back(e);
    else
      heap_.push(e);
  }
  const Event& top() const { return from_fifo() ? fifo_.front() : heap_.top(); }
  void pop() {
    if (from_fifo())
      fifo_.pop_front();
    else
      heap_.pop();
  }

 private:
  bool from_fifo() const {
    return !fifo_.empty() && (heap_.empty() || !After()(fifo_.front(), heap_.top()));
  }
  std::deque<Event> fifo_;
  std::priority_queue<Event, std::vector<Event>, After> heap_;
};

/// A compute task running on a host, with the work left in flops.
struct Running {
  Live* live = nullptr;
  uint32_t task = 0;
  double remaining_flops = 0;
};

/// A task of a live fragment.
struct Ref {
  Live* live = nullptr;
  uint32_t task = 0;
};

/// Cross-iteration successors of a task, in the order they were added (a linked list).
struct CrossOut {
  Live* live = nullptr;
  uint32_t task = 0;
  uint32_t next = kNone;
};

/// What the scheduler keeps per task, in one place: a start or completion touches one cache
/// line, not one per array (10^5 workers' fragments do not fit in a cache).
struct TaskState {
  double start_s = 0;
  uint32_t pending = 0;                   // predecessors not done
  uint32_t succ_begin = 0, succ_end = 0;  // successors in Live::succ
  uint32_t cross_head = kNone, cross_tail = kNone;
  bool done = false;
};

/// A fragment being executed. It stays at one address while it lives (a deque's elements do
/// not move when others are added at the back or removed at the front).
struct Live {
  Fragment f;
  std::vector<TaskState> state;
  std::vector<CrossOut> cross;
  const Task* tasks = nullptr;     // f's tasks, read on every start and completion
  const uint32_t* succ = nullptr;  // f's successor lists
  uint32_t remaining = 0;
  int group = 0;
  int iteration = 0;
};

/// The route costs asked so far, in an open-addressing table (one probe per message where a
/// node-based map chases pointers: async runs send 10^5 messages per iteration).
class RouteCache {
 public:
  /// The cost of `src` -> `dst`, from `compute(src, dst)` the first time.
  template <class Compute>
  const AlphaBeta& get(int src, int dst, Compute&& compute) {
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst);
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot_of(key);
    if (slots_[i].key != key) {
      slots_[i] = {key, compute(src, dst)};
      ++size_;
    }
    return slots_[i].value;
  }

 private:
  static constexpr uint64_t kEmpty = ~0ULL;
  struct Slot {
    uint64_t key = kEmpty;
    AlphaBeta value;
  };
  /// The slot holding `key`, or the empty one where it belongs.
  size_t slot_of(uint64_t key) const {
    const size_t mask = slots_.size() - 1;
    // splitmix64's finalizer: every bit of (src, dst) reaches the low bits used here.
    uint64_t h = key;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    size_t i = static_cast<size_t>(h) & mask;
    while (slots_[i].key != key && slots_[i].key != kEmpty) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    for (const Slot& o : old)
      if (o.key != kEmpty) slots_[slot_of(o.key)] = o;
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

/// The compute tasks on a host: the first two inline (a worker's chain runs one task at a
/// time, a server's apply queue too), more in a vector. A host's state is then one cache line
/// or two, not a line plus a separately allocated array.
class RunningSet {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Running& operator[](size_t i) { return i < kInline ? inline_[i] : more_[i - kInline]; }
  void push_back(const Running& r) {
    if (size_ < kInline)
      inline_[size_] = r;
    else
      more_.push_back(r);
    ++size_;
  }
  /// Removes element `i`, keeping the others' order.
  void erase(size_t i) {
    for (size_t k = i; k + 1 < size_; ++k) (*this)[k] = (*this)[k + 1];
    --size_;
    if (size_ >= kInline) more_.pop_back();
  }

 private:
  static constexpr size_t kInline = 2;
  Running inline_[kInline];
  size_t size_ = 0;
  std::vector<Running> more_;
};

/// A host's processor: the compute tasks sharing it and when their work was last updated.
struct Host {
  double speed_flops = 1;
  double last_s = 0;
  uint32_t version = 0;
  uint64_t stamp = 0;              // seq when the host last changed (its place on ties)
  uint64_t touched_round = ~0ULL;  // round of that change
  RunningSet running;
};

class Scheduler {
 public:
  Scheduler(const Scheme& scheme, int iterations, const Collective& collective,
            const AnalyticCosts& costs, TaskObserver& observer)
      : scheme_(scheme),
        iterations_(iterations),
        collective_(collective),
        costs_(costs),
        observer_(observer),
        groups_(scheme.groups()) {
    live_.resize(static_cast<size_t>(groups_));
    base_.assign(static_cast<size_t>(groups_), 0);
    built_.assign(static_cast<size_t>(groups_), 0);
  }

  EngineResult run() {
    for (int g = 0; g < groups_; ++g) ensure_built(g, 0);
    drain();
    std::vector<Event> batch;
    for (double date_s; next_time(&date_s);) {
      // SimGrid advances its clock by the delay to the next date, ends every activity due
      // within its time precision of the new clock first (earliest date first), then runs their
      // completion callbacks one after another: the same rounds give the same order on ties.
      now_ = now_ + (date_s - now_);
      ++round_;
      batch.clear();
      for (Event e; pop_due(now_, &e);) batch.push_back(e);
      for (size_t i = 0; i < batch.size(); ++i) {
        const Event& e = batch[i];
        // A wave of 10^5 completions at one instant (every worker's forward) visits as many
        // fragments' tasks, strided across them: ask for those a few events ahead early.
        if (i + 2 * kPrefetchAhead < batch.size()) prefetch(batch[i + 2 * kPrefetchAhead]);
        if (i + kPrefetchAhead < batch.size()) prefetch_next(batch[i + kPrefetchAhead]);
        // The SimGrid runner releases an activity at the next completion callback; only then
        // does its resource change (and take its place among the changed ones).
        touch(grave_);
        grave_ = e.host;
        finished_.push_back({e.live, e.task});
        drain();
      }
    }
    for (int g = 0; g < groups_; ++g)
      if (!live_[g].empty())
        throw std::logic_error(fmt::format("simulation stalled in iteration {}", base_[g]));
    int done = iterations_;
    for (int g = 0; g < groups_; ++g) done = std::min(done, built_[g]);
    return {now_, activities_, done};
  }

 private:
  struct Queue {
    bool busy = false;
    std::deque<Ref> waiting;
  };

  // Fragments are keyed by fid = iteration * groups + group, as in the SimGrid runner.
  Live& live(int fid) {
    auto& d = live_[static_cast<size_t>(fid % groups_)];
    return d[static_cast<size_t>(fid / groups_ - base_[fid % groups_])];
  }

  /// Starts loading what completing `e` will read: its task and its state.
  static void prefetch(const Event& e) {
    __builtin_prefetch(&e.live->tasks[e.task]);
    __builtin_prefetch(&e.live->state[e.task], 1);
  }

  /// Once `e`'s state is loaded: starts loading that of its first successor and of its first
  /// successor in a later iteration (the next forward after an update).
  static void prefetch_next(const Event& e) {
    const Live& l = *e.live;
    const TaskState& st = l.state[e.task];
    if (st.succ_begin < st.succ_end) {
      const uint32_t s = l.succ[st.succ_begin];
      __builtin_prefetch(&l.state[s], 1);
      __builtin_prefetch(&l.tasks[s]);
    }
    if (st.cross_head != kNone) {
      const CrossOut& c = l.cross[st.cross_head];
      __builtin_prefetch(&c.live->state[c.task], 1);
      __builtin_prefetch(&c.live->tasks[c.task]);
    }
  }

  /// Builds group `g` up to `iteration` (unless the observer stops the run).
  void ensure_built(int g, int iteration) {
    if (built_[g] > iteration || built_[g] >= iterations_) return;  // nothing to build
    if (observer_.should_stop()) return;
    while (built_[g] <= iteration && built_[g] < iterations_)
      add_fragment(scheme_.build_group(built_[g], g), g);
  }

  void add_fragment(Fragment f, int group) {
    const uint32_t n = f.graph.num_tasks();
    const int iteration = f.iteration;
    live_[group].emplace_back();
    Live& l = live_[group].back();
    l.f = std::move(f);
    l.group = group;
    l.iteration = iteration;
    l.remaining = n;
    // Vectors of retired fragments are reused: no fresh pages per iteration.
    l.state = std::move(spare_state_);
    l.state.assign(n, TaskState{});
    l.cross = std::move(spare_cross_);
    l.cross.clear();
    // The fragment's tasks and lists do not move while it lives (its graph is not changed any
    // more).
    const std::vector<uint32_t>*offsets, *targets;
    l.f.graph.successor_lists_view(&offsets, &targets);
    l.succ = targets->data();
    for (uint32_t t = 0; t < n; ++t) {
      l.state[t].succ_begin = (*offsets)[t];
      l.state[t].succ_end = (*offsets)[t + 1];
    }
    for (uint32_t target : *targets) ++l.state[target].pending;
    if (n > 0) l.tasks = &l.f.graph.task(0);
    for (const auto& c : l.f.cross) {
      const int src = iteration - c.lag;
      if (src < base_[group] || src < 0) continue;  // retired: already done
      Live& s = live(src * groups_ + group);
      TaskState& from = s.state[c.from];
      if (from.done) continue;
      ++l.state[c.to].pending;
      const auto k = static_cast<uint32_t>(s.cross.size());
      s.cross.push_back({&l, c.to, kNone});
      if (from.cross_tail == kNone)
        from.cross_head = k;
      else
        s.cross[from.cross_tail].next = k;
      from.cross_tail = k;
    }
    built_[group] = iteration + 1;
    for (uint32_t t = 0; t < n; ++t)
      if (l.state[t].pending == 0) ready_.push_back({&l, t});
  }

  void start_task(Ref r) {
    const Task& task = r.live->tasks[r.task];
    if (task.queue >= 0) {
      if (queues_.size() <= static_cast<size_t>(task.queue)) queues_.resize(task.queue + 1);
      Queue& q = queues_[task.queue];
      if (q.busy) {
        q.waiting.push_back(r);
        return;
      }
      q.busy = true;
    }
    start_now(r);
  }

  void start_now(Ref r) {
    Live& l = *r.live;
    const Task& task = l.tasks[r.task];
    l.state[r.task].start_s = now_;
    observer_.task_started(task, now_);
    ensure_built(l.group, l.iteration + 1);
    if (task.kind == TaskKind::comm && task.src >= 0) {  // point to point
      if (task.src == task.dst || task.bytes <= 0) {
        finished_.push_back(r);
        return;
      }
      const AlphaBeta& ab = routes_.get(task.src, task.dst, costs_.route);
      start_timed(r, ab.alpha_s + task.bytes * ab.beta_s_per_byte);
      return;
    }
    const bool comm = task.kind == TaskKind::comm;
    const double duration = comm ? collective_s(task.bytes) : task.duration_s;
    if (duration <= 0) {
      finished_.push_back(r);
      return;
    }
    if (comm)
      start_timed(r, duration);
    else
      start_compute(r, task.kind == TaskKind::apply ? task.dst : task.worker, duration);
  }

  /// A collective or message: an activity of its own, never sharing anything.
  void start_timed(Ref r, double duration_s) {
    ++activities_;
    touch_timed();
    // SimGrid's arithmetic (an Exec of duration x speed flops on its timer host), so that
    // both runners agree to the last bit.
    const double flops = duration_s * kTimerSpeed;
    timed_.push({now_ + flops / kTimerSpeed, timed_started_++, r.live, -1, 0, r.task});
  }

  void start_compute(Ref r, int where, double duration_s) {
    ++activities_;
    if (hosts_.size() <= static_cast<size_t>(where)) {
      const size_t old = hosts_.size();
      hosts_.resize(static_cast<size_t>(where) + 1);
      for (size_t k = old; k < hosts_.size(); ++k)
        hosts_[k].speed_flops =
            k < costs_.host_speed_flops.size() ? costs_.host_speed_flops[k] : 1.0;
    }
    Host& h = hosts_[static_cast<size_t>(where)];
    advance(h);
    h.running.push_back({r.live, r.task, duration_s * h.speed_flops});
    touch_host(h);
    reschedule(where);
  }

  /// Charges the work done since the host's last change: each of its n tasks ran at 1/n of
  /// its speed.
  void advance(Host& h) const {
    const size_t n = h.running.size();
    if (n > 0 && now_ > h.last_s) {
      const double done_flops = h.speed_flops / static_cast<double>(n) * (now_ - h.last_s);
      for (size_t i = 0; i < n; ++i) {
        Running& r = h.running[i];
        r.remaining_flops = std::max(0.0, r.remaining_flops - done_flops);
      }
    }
    h.last_s = now_;
  }

  /// Schedules the host's next completion: the task with the least work left (the first
  /// started on ties), at the shared rate.
  void reschedule(int where) {
    Host& h = hosts_[static_cast<size_t>(where)];
    ++h.version;
    if (h.running.empty()) return;
    size_t k = 0;
    for (size_t i = 1; i < h.running.size(); ++i)
      if (h.running[i].remaining_flops < h.running[k].remaining_flops) k = i;
    const double share_flops = h.speed_flops / static_cast<double>(h.running.size());
    const double end_s = now_ + h.running[k].remaining_flops / share_flops;
    heap_.push({end_s, h.stamp, h.running[k].live, where, h.version, h.running[k].task});
  }

  void finish_compute(const Event& e) {
    Host& h = hosts_[static_cast<size_t>(e.host)];
    advance(h);
    for (size_t i = 0; i < h.running.size(); ++i)
      if (h.running[i].live == e.live && h.running[i].task == e.task) {
        h.running.erase(i);
        break;
      }
    reschedule(e.host);
  }

  void drop_stale() {
    while (!heap_.empty() && heap_.top().version != hosts_[heap_.top().host].version) heap_.pop();
  }

  /// When the next activity ends; false when none is left.
  bool next_time(double* time_s) {
    drop_stale();
    if (heap_.empty() && timed_.empty()) return false;
    if (timed_.empty())
      *time_s = heap_.top().time_s;
    else if (heap_.empty())
      *time_s = timed_.top().time_s;
    else
      *time_s = std::min(heap_.top().time_s, timed_.top().time_s);
    return true;
  }

  /// Takes the next activity due at `time_s`, in SimGrid's order on ties: by when its resource
  /// last changed (the timed activities share one, as they share SimGrid's timer host), and
  /// on that resource the most recently started first.
  bool pop_due(double clock_s, Event* e) {
    drop_stale();
    const bool host = !heap_.empty() && std::fabs(heap_.top().time_s - clock_s) < kPrecision_s;
    const bool timed = !timed_.empty() && std::fabs(timed_.top().time_s - clock_s) < kPrecision_s;
    if (!host && !timed) return false;
    const Event* h = host ? &heap_.top() : nullptr;
    const Event* m = timed ? &timed_.top() : nullptr;
    if (m != nullptr && (h == nullptr || m->time_s < h->time_s ||
                         (m->time_s == h->time_s && timed_changed_ < h->seq))) {
      *e = timed_.top();
      timed_.pop();
      touch_timed();
      return true;
    }
    *e = heap_.top();
    heap_.pop();
    finish_compute(*e);
    return true;
  }

  /// Resource `where` (a host, or -1: the timed activities' one; -2: none) changed.
  void touch(int where) {
    if (where == -1) touch_timed();
    if (where < 0) return;
    Host& h = hosts_[static_cast<size_t>(where)];
    if (h.touched_round == round_ || h.running.empty()) return;  // a change with no task
    touch_host(h);                                               // places nothing
    advance(h);
    reschedule(where);
  }

  /// A host changed in this round: its tasks take the place of the first change.
  void touch_host(Host& h) {
    if (h.touched_round == round_) return;
    h.touched_round = round_;
    h.stamp = seq_++;
  }

  /// The timed activities' resource changed in this round.
  void touch_timed() {
    if (timed_round_ == round_) return;
    timed_round_ = round_;
    timed_changed_ = seq_++;
  }

  double collective_s(double bytes) {
    auto it = collective_s_.find(bytes);
    if (it == collective_s_.end())
      it = collective_s_.emplace(bytes, collective_.formula_s(costs_.group, bytes, costs_.network))
               .first;
    return it->second;
  }

  /// Completes finished tasks and starts ready ones until neither is left.
  void drain() {
    while (!finished_.empty() || !ready_.empty()) {
      if (!ready_.empty()) {
        // A collective's end readies every worker's next task at once: load ahead.
        if (ready_.size() > kPrefetchAhead) {
          const Ref& ahead = ready_[kPrefetchAhead];
          __builtin_prefetch(&ahead.live->tasks[ahead.task]);
          __builtin_prefetch(&ahead.live->state[ahead.task], 1);
        }
        const Ref r = ready_.front();
        ready_.pop_front();
        start_task(r);
        continue;
      }
      const Ref r = finished_.front();
      finished_.pop_front();
      complete(r);
    }
  }

  void complete(Ref r) {
    Live& l = *r.live;
    const uint32_t t = r.task;
    TaskState& st = l.state[t];
    st.done = true;
    const Task& task = l.tasks[t];
    observer_.task_done(task, st.start_s, now_);
    if (task.queue >= 0) {
      Queue& q = queues_[task.queue];
      q.busy = false;
      if (!q.waiting.empty()) {
        const Ref w = q.waiting.front();
        q.waiting.pop_front();
        q.busy = true;
        start_now(w);
      }
    }
    for (uint32_t i = st.succ_begin; i < st.succ_end; ++i)
      if (--l.state[l.succ[i]].pending == 0) ready_.push_back({&l, l.succ[i]});
    for (uint32_t k = st.cross_head; k != kNone; k = l.cross[k].next) {
      const CrossOut c = l.cross[k];
      if (--c.live->state[c.task].pending == 0) ready_.push_back({c.live, c.task});
    }
    --l.remaining;
    const int g = l.group;
    auto& d = live_[static_cast<size_t>(g)];
    while (!d.empty() && d.front().remaining == 0) {
      spare_state_ = std::move(d.front().state);
      spare_cross_ = std::move(d.front().cross);
      d.pop_front();
      ++base_[g];
    }
  }

  const Scheme& scheme_;
  int iterations_;
  const Collective& collective_;
  const AnalyticCosts& costs_;
  TaskObserver& observer_;
  int groups_ = 1;
  double now_ = 0;
  uint64_t seq_ = 0;
  uint64_t activities_ = 0;
  std::vector<std::deque<Live>> live_;  // per group, oldest iteration first
  std::vector<int> base_, built_;       // per group: oldest live and next unbuilt iteration
  std::deque<Ref> ready_, finished_;
  std::vector<TaskState> spare_state_;  // of the last retired fragment, for the next one
  std::vector<CrossOut> spare_cross_;
  EventQueue<Later> heap_;                // compute, per host
  EventQueue<LaterTimed> timed_;          // collectives, messages
  uint64_t round_ = 0, timed_round_ = 0;  // rounds of completions at one instant
  uint64_t timed_changed_ = 0;            // seq_ when the timed activities last changed
  uint64_t timed_started_ = 0;
  int grave_ = -2;  // resource of the activity the SimGrid runner would still hold
  std::vector<Host> hosts_;
  std::vector<Queue> queues_;
  RouteCache routes_;
  std::map<double, double> collective_s_;
};

}  // namespace

EngineResult run_analytic(const Scheme& scheme, int iterations, const Collective& collective,
                          const AnalyticCosts& costs, TaskObserver& observer) {
  Scheduler s(scheme, iterations, collective, costs, observer);
  return s.run();
}

}  // namespace sgdsim
