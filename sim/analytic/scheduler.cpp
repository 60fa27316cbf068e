// The analytic scheduler (DESIGN.md §6): the same just-in-time execution of the schemes' task
// DAG as sim/engine's SimGrid runner at fidelity "analytic", on an event heap of its own.
// Models: a task's duration as that runner gives it; a host's processor shared equally among
// the compute tasks running on it (SimGrid's CPU model on one core); queues (server applies)
// serving in ready order; collectives and messages as contention-free timed activities.
// Leaves out what "analytic" leaves out on SimGrid too: network contention, link sharing,
// per-step reductions of flow collectives.
#include "sim/analytic/scheduler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "sim/analytic/event_queues.hpp"
#include "sim/analytic/fragment_store.hpp"
#include "sim/analytic/scheduler_state.hpp"

namespace sgdsim {

namespace {

using namespace sched;  // NOLINT(google-build-using-namespace): the scheduler's own types

/// The scheduler. `kPerWorker`: the scheme runs each worker as a group of its own (async),
/// whose workers drift apart, so that every event visits another worker's small fragment: its
/// tasks (and messages' durations, set when built) are a template shared by the workers whose
/// fragments are the same but for the worker, its states its own, and the event queues have lanes
/// that say which events come next (loaded early). Otherwise (one group: waves of 10^5 equal tasks)
/// fragments are read in place and the queues have one FIFO.
template <bool kPerWorker>
class Scheduler : private FragmentLayout<kPerWorker> {
  using Layout = FragmentLayout<kPerWorker>;
  using Layout::prefetch_ahead;
  using Layout::prefetch_successors;
  using Layout::prefetch_task;
  using Layout::st_of;
  using Layout::task_of;

 public:
  Scheduler(const Scheme& scheme, int iterations, const Collective& collective,
            const AnalyticCosts& costs, TaskObserver& observer)
      : collective_(collective),
        costs_(costs),
        observer_(observer),
        groups_(scheme.groups()),
        fragments_(scheme, iterations, observer, ready_, routes_, costs) {
    slowed_speeds_ = costs.host_speed_flops;
    std::copy(costs.host_slowed_speed_flops.begin(), costs.host_slowed_speed_flops.end(),
              slowed_speeds_.begin());
  }

  EngineResult run() {
    for (int g = 0; g < groups_; ++g) fragments_.ensure_built(g, 0);
    drain();
    std::vector<Due> batch;
    for (double date_s; next_time(&date_s);) {
      // SimGrid advances its clock by the delay to the next date, ends every activity due
      // within its time precision of the new clock first (earliest date first), then runs their
      // completion callbacks one after another: the same rounds give the same order on ties.
      now_ = now_ + (date_s - now_);
      ++round_;
      batch.clear();
      for (Event e; pop_due(now_, &e);) batch.push_back({e.live, e.task, e.host, e.start_s});
      for (size_t i = 0; i < batch.size(); ++i) {
        const Due& e = batch[i];
        // A wave of 10^5 completions at one instant (every worker's forward) visits as many
        // fragments' tasks, strided across them: ask for those a few events ahead early.
        if (i + 2 * kPrefetchAhead < batch.size()) {
          const Due& a = batch[i + 2 * kPrefetchAhead];
          prefetch_task(a.live, a.task);
          // and its host, where its completion's next task starts
          if (a.host >= 0) __builtin_prefetch(&hosts_[static_cast<size_t>(a.host)], 1);
        }
        if (i + kPrefetchAhead < batch.size()) {
          const Due& a = batch[i + kPrefetchAhead];
          prefetch_successors(a.live, a.task);
        }
        // The SimGrid runner releases an activity at the next completion callback; only then
        // does its resource change (and take its place among the changed ones).
        touch(grave_);
        grave_ = e.host;
        finished_.push_back({e.live, e.task, e.start_s});
        drain();
      }
    }
    fragments_.check_all_retired();
    return {now_, activities_, fragments_.iterations_built()};
  }

 private:
  struct Queue {
    bool busy = false;
    RingQueue<Ref> waiting;
  };
  using Event = EventOf<kPerWorker>;
  using Due = DueOf<kPerWorker>;
  using Finished = FinishedOf<kPerWorker>;

  /// Starts loading what completing event `a` reads first, from the event alone: its host,
  /// its fragment's header and (a small fragment's) its task's state.
  void prefetch_event(const Event* a) const {
    if (a->host >= 0) __builtin_prefetch(&hosts_[static_cast<size_t>(a->host)], 1);
    __builtin_prefetch(a->live);
    // Its state, without the header: a small fragment's states are at a fixed place in it.
    if (a->task < Live::kInlineStates) __builtin_prefetch(&a->live->inline_states[a->task], 1);
  }

  /// Events known to be processed in this order (a lane's), `at(k)` giving the k-th after
  /// the current one (null past the end): their states a few events ahead, once those have
  /// arrived their successors'. `current(a)`: `a` is not stale (its fragment may be gone).
  template <class At, class Current>
  void prefetch_events_ahead(At&& at, Current&& current) const {
    if (const Event* a = at(2 * kPrefetchAhead)) prefetch_event(a);
    if (const Event* a = at(kPrefetchAhead); a != nullptr && current(a)) {
      prefetch_successors(a->live, a->task);
      observer_.prefetch(task_of(*a->live, a->task));
    }
  }

  /// Task `task` (task `t` of `l`) as the observer sees it: in the iteration `l` runs (a
  /// reused fragment's tasks keep the one they were built for: rewriting 10^6 of them every
  /// iteration costs about what building them does), per worker with its own duration.
  const Task& observed(const Live& l, uint32_t t, const Task& task) {
    if constexpr (kPerWorker) {
      // The task read is its template's with the iteration shifted already.
      if (!l.own_durations) return task;
      observed_ = task;
      observed_.duration_s = l.durations[t];
      return observed_;
    }
    if (l.iteration_shift == 0) return task;
    observed_ = task;
    observed_.iteration += l.iteration_shift;
    return observed_;
  }

  /// The duration of compute task `task` (task `t` of `l`): per worker its fragment's own
  /// where its template's are another's.
  static double duration_of(const Live& l, uint32_t t, const Task& task) {
    if (kPerWorker && l.own_durations) return l.durations[t];
    return task.duration_s;
  }

  void start_task(Ref r) {
    const Task& task = task_of(*r.live, r.task);
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
    const Task& task = task_of(l, r.task);
    if constexpr (!kPerWorker) st_of(l, r.task).start_s = now_;
    observer_.task_started(observed(l, r.task, task), now_);
    if (!l.next_built) l.next_built = fragments_.build_after(l);
    if (task.kind == TaskKind::comm && task.src >= 0) {  // point to point
      if (!is_message(task)) {
        finished_.push_back({r.live, r.task, now_});
        return;
      }
      if constexpr (kPerWorker) {
        start_timed(r, l.tmpl->message_s[r.task]);
      } else {
        const AlphaBeta& ab = routes_.get(task.src, task.dst, costs_.route);
        start_timed(r, ab.alpha_s + task.bytes * ab.beta_s_per_byte);
      }
      return;
    }
    const bool comm = task.kind == TaskKind::comm;
    if (comm) collective_begins();
    const double duration =
        comm ? collective_s_.get(task, collective_, costs_) : duration_of(l, r.task, task);
    if (duration <= 0) {
      finished_.push_back({r.live, r.task, now_});
      return;
    }
    if (comm)
      start_timed(r, duration);
    else
      start_compute(r, compute_host(task), duration);
  }

  /// A collective or message: an activity of its own, never sharing anything.
  void start_timed(Ref r, double duration_s) {
    ++activities_;
    touch_timed();
    // SimGrid's arithmetic (an Exec of duration x speed flops on its timer host), so that
    // both runners agree to the last bit.
    const double flops = duration_s * kTimerSpeed;
    timed_.push({now_ + flops / kTimerSpeed, timed_started_++, r.live, -1, 0, r.task, now_},
                std::bit_cast<uint64_t>(duration_s));
  }

  void start_compute(Ref r, int where, double duration_s) {
    ++activities_;
    const auto w = static_cast<size_t>(where);
    ensure_host(w);
    hosts_.advance(w, now_);
    // Its work is its duration at the host's first speed, whichever speed runs now.
    const double speed_flops = slowed_ ? costs_.host_speed_flops.at(w) : hosts_.speed_flops(w);
    hosts_.push_running(w, {r.live, r.task, duration_s * speed_flops, now_});
    touch_host(hosts_[w]);
    reschedule(where);
  }

  /// Adds hosts up to `w` at the speeds of the moment (slowed while a collective runs).
  void ensure_host(size_t w) {
    hosts_.ensure(w, slowed_ ? slowed_speeds_ : costs_.host_speed_flops);
  }

  /// device.overlap_slowdown: the workers compute slowed while a collective is under way (from
  /// its task's start to its end), as the SimGrid runner switches their pstates.
  void collective_begins() {
    if (!costs_.host_slowed_speed_flops.empty() && collectives_running_++ == 0) set_slowed(true);
  }
  void collective_ends() {
    if (!costs_.host_slowed_speed_flops.empty() && --collectives_running_ == 0) set_slowed(false);
  }

  /// Every worker's host changes pstate: the work so far at the old speed, the rest at the new.
  void set_slowed(bool slowed) {
    slowed_ = slowed;
    const std::vector<double>& speeds = slowed ? slowed_speeds_ : costs_.host_speed_flops;
    const size_t workers = std::min(hosts_.size(), costs_.host_slowed_speed_flops.size());
    for (size_t w = 0; w < workers; ++w) {
      const bool busy = hosts_.running_count(w) > 0;
      if (busy) hosts_.advance(w, now_);
      hosts_.set_speed_flops(w, speeds[w]);
      if (busy) touch_host(hosts_[w]);
      if (busy) reschedule(static_cast<int>(w));
    }
  }

  /// Schedules the host's next completion: the task with the least work left (the first
  /// started on ties), at the shared rate.
  void reschedule(int where) {
    const auto w = static_cast<size_t>(where);
    CompactHost& h = hosts_[w];
    const uint32_t superseded = hosts_.version(w)++;
    const size_t n = hosts_.running_count(w);
    if (n == 0) return;
    size_t k = 0;
    for (size_t i = 1; i < n; ++i)
      if (hosts_.running(w, i).remaining_flops < hosts_.running(w, k).remaining_flops) k = i;
    const Running& r = hosts_.running(w, k);
    const double share_flops = hosts_.speed_flops(w) / static_cast<double>(n);
    const double end_s = now_ + r.remaining_flops / share_flops;
    heap_.push({end_s, h.stamp, r.live, where, hosts_.version(w), r.task, r.start_s},
               lane_key_of(*r.live, r.task), superseded);
  }

  /// A compute task's event lane: its duration as built (per worker; one group's queue has
  /// no lanes).
  static uint64_t lane_key_of(const Live& l, uint32_t t) {
    if constexpr (kPerWorker)
      return std::bit_cast<uint64_t>(duration_of(l, t, reinterpret_cast<const Task*>(l.tasks)[t]));
    return 0;
  }

  void finish_compute(const Event& e) {
    const auto w = static_cast<size_t>(e.host);
    hosts_.advance(w, now_);
    for (size_t i = 0; i < hosts_.running_count(w); ++i)
      if (hosts_.running(w, i).live == e.live && hosts_.running(w, i).task == e.task) {
        hosts_.erase_running(w, i);
        break;
      }
    reschedule(e.host);
  }

  void drop_stale() {
    if constexpr (kPerWorker)
      heap_.compact([this](const Event& e) {
        return e.version != hosts_.version(static_cast<size_t>(e.host));
      });
    while (!heap_.empty() &&
           heap_.top().version != hosts_.version(static_cast<size_t>(heap_.top().host)))
      heap_.pop();
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
    const bool from_timed = m != nullptr && (h == nullptr || m->time_s < h->time_s ||
                                             (m->time_s == h->time_s && timed_changed_ < h->seq));
    if (from_timed) {
      *e = timed_.top();
      timed_.pop();
      // Messages of one length end in the order they started (async's pushes and pulls): the
      // lane says which come next.
      prefetch_after_pop(timed_, e, [](const Event*) { return true; });
      touch_timed();
      return true;
    }
    *e = heap_.top();
    heap_.pop();
    // The compute completions due next in its lane, those still current (a stale event's
    // fragment may be gone).
    prefetch_after_pop(heap_, e, [this](const Event* a) {
      return hosts_.version(static_cast<size_t>(a->host)) == a->version;
    });
    finish_compute(*e);
    return true;
  }

  /// Per worker, once `e` is popped from `q`: starts loading its own data (whatever was loaded
  /// ahead: the loads then overlap), the next event's, and those its lane says come after it
  /// (`current(a)`: `a` still counts).
  template <class Q, class Current>
  void prefetch_after_pop(const Q& q, const Event* e, Current&& current) const {
    if constexpr (kPerWorker) {
      prefetch_event(e);
      if (!q.empty()) prefetch_event(&q.top());
      prefetch_events_ahead([&q](size_t k) { return q.next_in_lane(k); }, current);
    }
  }

  /// Resource `where` (a host, or -1: the timed activities' one; -2: none) changed.
  void touch(int where) {
    if (where == -1) touch_timed();
    if (where < 0) return;
    const auto w = static_cast<size_t>(where);
    CompactHost& h = hosts_[w];
    if (h.touched_round == round_ || hosts_.running_count(w) == 0) return;  // a change with no task
    touch_host(h);                                                          // places nothing
    hosts_.advance(w, now_);
    reschedule(where);
  }

  /// A host changed in this round: its tasks take the place of the first change.
  void touch_host(CompactHost& h) {
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

  /// Completes finished tasks and starts ready ones until neither is left.
  void drain() {
    while (!finished_.empty() || !ready_.empty()) {
      if (!ready_.empty()) {
        // A collective's end readies every worker's next task at once: load ahead its task
        // and state (per worker its fragment's header: a start writes no state), then (once
        // the task is in) the host it will run on.
        if (const size_t k = 2 * kPrefetchAhead; ready_.size() > k) {
          if constexpr (kPerWorker)
            Layout::prefetch_header(ready_[k].live);
          else
            prefetch_task(ready_[k].live, ready_[k].task);
        }
        if (const size_t k = kPrefetchAhead; ready_.size() > k)
          hosts_.prefetch_host_of(task_of(*ready_[k].live, ready_[k].task));
        const Ref r = ready_.front();
        ready_.pop_front();
        start_task(r);
        continue;
      }
      const Finished f = finished_.front();
      finished_.pop_front();
      complete(f);
    }
  }

  void complete(const Finished& r) {
    Live& l = *r.live;
    const uint32_t t = r.task;
    auto& st = st_of(l, t);
    st.done = true;
    const Task& task = task_of(l, t);
    Layout::prefetch_held_successors(l, t, st);  // while the observer records this task
    if constexpr (kPerWorker)
      observer_.task_done(observed(l, t, task), r.start_s, now_);
    else
      observer_.task_done(observed(l, t, task), st.start_s, now_);
    if (task.kind == TaskKind::comm && task.src < 0) collective_ends();
    if (task.queue >= 0) {
      Queue& q = queues_[task.queue];
      q.busy = false;
      if (!q.waiting.empty()) {
        const Ref w = q.waiting.front();
        q.waiting.pop_front();
        // A server applies its queue in order: load the next ones' tasks early.
        if constexpr (kPerWorker)
          prefetch_ahead([&q](size_t k) { return k < q.waiting.size() ? &q.waiting[k] : nullptr; });
        q.busy = true;
        start_now(w);
      }
    }
    Layout::for_each_successor(l, t, st, [&](uint32_t s) {
      if (Layout::solo(l, s) || --st_of(l, s).pending == 0) ready_.push_back({&l, s});
    });
    for (uint32_t k = st.cross_head; k != kNone; k = l.cross[k].next) {
      const CrossOut c = l.cross[k];
      if (--st_of(*c.live, c.task).pending == 0) ready_.push_back({c.live, c.task});
    }
    // Fragments retire oldest first once done, so only a last task can retire any: reading the
    // group's oldest fragment at every completion cost async a miss each (10^4 groups' rings).
    if (--l.remaining == 0) fragments_.retire_done(l.group);
  }

  const Collective& collective_;
  const AnalyticCosts& costs_;
  TaskObserver& observer_;
  int groups_ = 1;
  RouteCache routes_;  // before fragments_
  double now_ = 0;
  uint64_t seq_ = 0;
  uint64_t activities_ = 0;
  RingQueue<Ref> ready_;
  RingQueue<Finished> finished_;
  Task observed_;  // what observed() last returned for a reused task
  template <class After>
  using EventQueue =
      std::conditional_t<kPerWorker, LaneQueue<Event, After>, FifoQueue<Event, After>>;
  EventQueue<Later> heap_;                // compute, per host
  EventQueue<LaterTimed> timed_;          // collectives, messages
  uint64_t round_ = 0, timed_round_ = 0;  // rounds of completions at one instant
  uint64_t timed_changed_ = 0;            // seq_ when the timed activities last changed
  uint64_t timed_started_ = 0;
  int grave_ = -2;               // resource of the activity the SimGrid runner would still hold
  int collectives_running_ = 0;  // collective tasks under way (device.overlap_slowdown)
  bool slowed_ = false;          // the workers run at their slowed speeds
  // The workers' slowed speeds, then the dedicated servers' own (never slowed).
  std::vector<double> slowed_speeds_;
  HostTable<kPerWorker> hosts_;
  std::vector<Queue> queues_;
  CollectiveTimes collective_s_;
  FragmentStore<kPerWorker> fragments_;  // after ready_ and routes_, which it is given
};

}  // namespace

EngineResult run_analytic(const Scheme& scheme, int iterations, const Collective& collective,
                          const AnalyticCosts& costs, TaskObserver& observer) {
  if (scheme.groups() > 1)
    return Scheduler<true>(scheme, iterations, collective, costs, observer).run();
  return Scheduler<false>(scheme, iterations, collective, costs, observer).run();
}

}  // namespace sgdsim
