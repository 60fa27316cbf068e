#pragma once
/// What the analytic scheduler (sim/analytic/scheduler.cpp) keeps: its events, the state of
/// each task, fragment and host, laid out for the waves of 10^5 equal tasks that it processes
/// (docs/DESIGN.md, section 6, says why each is the size it is), the route cost table, and
/// where a fragment's task and state are and how they are loaded ahead. Internal to
/// sim/analytic.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sim/analytic/scheduler.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim::sched {

/// No task, no list element.
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
/// Speed of SimGrid's timer host (sim/engine runs analytic collectives there as Execs).
constexpr double kTimerSpeed = 1e9;
/// SimGrid's time precision as sgdsim sets it (surf/precision:1e-12): activities due within it
/// of the clock end together.
constexpr double kPrecision_s = 1e-12;
/// How many completions ahead of the one being processed their data is prefetched.
constexpr size_t kPrefetchAhead = 8;

struct Live;
struct WorkerState;

/// True for a point-to-point message that takes time (a push or pull between two hosts).
inline bool is_message(const Task& task) {
  return task.kind == TaskKind::comm && task.src >= 0 && task.src != task.dst && task.bytes > 0;
}

/// Task `task` of a template built for group `base` (per worker: a worker's host index is its
/// worker index), as group `group` runs it `shift` iterations later.
inline Task instantiate(const Task& task, int base, int group, int shift) {
  Task t = task;
  t.iteration += shift;
  if (t.worker == base) t.worker = group;
  if (t.src == base) t.src = group;
  if (t.dst == base) t.dst = group;
  return t;
}

/// No start time (one group: a task's start is in its state).
struct NoStart {
  NoStart() = default;
  NoStart(double /*start_s*/) {}  // NOLINT(google-explicit-constructor): the time's stand-in
};

/// A completion on a heap: a timed activity (host < 0) or the host's next compute completion
/// as of `version` (stale once the host's set of running tasks changed).
template <bool kPerWorker>
struct EventOf {
  double time_s = 0;
  uint64_t seq = 0;  // ties complete in the order they were scheduled
  Live* live = nullptr;
  int32_t host = -1;
  uint32_t version = 0;
  uint32_t task = 0;
  // Per worker: when a timed activity started (its state then holds no start time: starting a
  // task writes nothing of its fragment's).
  [[no_unique_address]] std::conditional_t<kPerWorker, double, NoStart> start_s{};
};
static_assert(sizeof(EventOf<false>) == 40 && sizeof(EventOf<true>) == 48);

/// Events: the earliest first, and on ties the first scheduled.
struct Later {
  template <class Event>
  bool operator()(const Event& a, const Event& b) const {
    return a.time_s > b.time_s || (a.time_s == b.time_s && a.seq > b.seq);
  }
};

/// Timed activities: the earliest first, and on ties the most recently started (`seq` counts
/// their starts), as SimGrid 3.32 ends same-date activities of one multi-core host.
struct LaterTimed {
  template <class Event>
  bool operator()(const Event& a, const Event& b) const {
    return a.time_s > b.time_s || (a.time_s == b.time_s && a.seq < b.seq);
  }
};

/// An activity ended in the current round, waiting for its completion callback: what the
/// callback needs of its event (one group: a wave of 10^5 of them is copied, 16 bytes each).
template <bool kPerWorker>
struct DueOf {
  Live* live = nullptr;
  uint32_t task = 0;
  int32_t host = -1;
  [[no_unique_address]] std::conditional_t<kPerWorker, double, NoStart> start_s{};  // per worker
};
static_assert(sizeof(DueOf<false>) == 16);

/// A task ended, waiting to be completed, and (per worker) when it started.
template <bool kPerWorker>
struct FinishedOf {
  Live* live = nullptr;
  uint32_t task = 0;
  [[no_unique_address]] std::conditional_t<kPerWorker, double, NoStart> start_s{};
};
static_assert(sizeof(FinishedOf<false>) == 16);

/// A compute task running on a host, with the work left in flops.
struct Running {
  Live* live = nullptr;
  uint32_t task = 0;
  double remaining_flops = 0;
  double start_s = 0;  // when it started
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

/// Successors a task's state holds itself: most tasks have one or two (a chain's next task, a
/// push's apply), and reading them from the fragment's lists would cost a cache miss more per
/// completion where fragments are larger than the caches.
constexpr uint32_t kInlineSuccessors = 2;

/// What the scheduler keeps per task, in one place: a start or completion touches one cache
/// line, not one per array (10^5 workers' fragments do not fit in a cache).
struct TaskState {
  double start_s = 0;
  uint32_t pending = 0;  // predecessors not done
  uint32_t succ_count : 31 = 0;
  uint32_t done : 1 = 0;
  // Up to kInlineSuccessors: the successors; more: their range [succ[0], succ[1]) in Live::succ.
  uint32_t succ[kInlineSuccessors] = {0, 0};
  uint32_t cross_head = kNone, cross_tail = kNone;

  /// Sets the successors to `targets[begin, end)` (`targets`: the fragment's lists).
  void set_successors(const uint32_t* targets, uint32_t begin, uint32_t end) {
    succ_count = end - begin;
    if (succ_count > kInlineSuccessors) {
      succ[0] = begin;
      succ[1] = end;
    } else {
      for (uint32_t i = 0; i < succ_count; ++i) succ[i] = targets[begin + i];
    }
  }
  /// Calls `fn(s)` for each successor `s`, in order (`lists`: the fragment's).
  template <class Fn>
  void for_each_successor(const uint32_t* lists, Fn&& fn) const {
    if (succ_count <= kInlineSuccessors) {
      for (uint32_t i = 0; i < succ_count; ++i) fn(succ[i]);
    } else {
      for (uint32_t i = succ[0]; i < succ[1]; ++i) fn(lists[i]);
    }
  }
  /// The first successor, or kNone.
  uint32_t first_successor(const uint32_t* lists) const {
    if (succ_count == 0) return kNone;
    return succ_count <= kInlineSuccessors ? succ[0] : lists[succ[0]];
  }
};
static_assert(sizeof(TaskState) == 32);

/// Per worker: what the scheduler keeps per task, in 8 bytes (a fragment's 17 tasks in three
/// cache lines, not nine): the successors are its template's, which stays in the caches, and
/// its start time travels with its event or its host's running task.
struct WorkerState {
  uint32_t pending : 31 = 0;    // predecessors not done
  uint32_t done : 1 = 0;        // completed
  uint32_t cross_head = kNone;  // its first cross-iteration successor (Live::cross), or kNone
};
static_assert(sizeof(WorkerState) == 8);

/// Per worker: a fragment's tasks, messages' durations, successor lists, cross edges and fresh
/// states, shared by the workers whose fragments equal it once worker `base` is replaced by
/// theirs (as a task's worker, src or dst: a worker's host index is its worker index) and its
/// iteration shifted (instantiate). 10^4 workers' fragments are then one copy that stays in the
/// caches, and each fragment keeps its states only (sim/analytic/fragment_template.hpp).
struct Template {
  int base = 0;                     // the group (worker) whose fragment it was built from
  int iteration = 0;                // the iteration it was built for
  bool uniform_iteration = true;    // every task is of `iteration`
  std::vector<Task> tasks;          // as built for `base`
  std::vector<double> message_s;    // each message's duration (alpha + n beta), 0 for the others
  std::vector<uint32_t> offsets;    // successor lists: task t's in targets[offsets[t], [t + 1])
  std::vector<uint32_t> targets;    // their tasks
  std::vector<CrossEdge> cross;     // cross-iteration edges into the fragment
  std::vector<WorkerState> states;  // fresh: predecessors within the fragment counted
  // Per task: 1 if its one predecessor within the fragment readies it (no cross edge into it):
  // completing that one readies it without reading its state, a line elsewhere.
  std::vector<uint8_t> solo;
};

/// A fragment read in place: its graph and its tasks' states.
struct InPlace {
  Fragment f;
  std::vector<TaskState> states;
};

/// A fragment being executed. Per worker (async) its tasks, messages' durations and lists are
/// a Template's, shared with the workers whose fragments are the same but for the worker, and
/// it keeps its tasks' states only (10^4 workers' fragments then fit where their tasks did
/// not); with one group (10^5 tasks a fragment, visited in waves) it keeps its graph and its
/// states in an array beside it. Either way task t and its state sit at fixed strides from two
/// bases. It stays at one address while it lives (the scheduler's pool does not move its
/// elements). What every start and completion reads comes first, in one cache line (the one an
/// event loads ahead): the arrays' addresses, not their vectors. Per worker the states and
/// cross-iteration successors of a small fragment (an async worker's iteration: 17 tasks with
/// 4 servers) follow in the lines after it, not in blocks of their own elsewhere on the heap:
/// at 10^4 workers each is a miss, and building a fragment read the vectors' line too.
struct alignas(64) Live {
  /// States kept inline (more: in state_store).
  static constexpr uint32_t kInlineStates = 24;
  /// Cross-iteration successors kept inline (more: all of them in cross_store).
  static constexpr uint32_t kInlineCross = 4;

  const std::byte* tasks = nullptr;  // task t at tasks + t * sizeof(Task) (per worker: as built
                                     // for `base`)
  std::byte* states = nullptr;       // its state at states + t * the state's size
  const uint32_t* succ = nullptr;    // successor lists
  const Template* tmpl = nullptr;    // per worker: its tasks, lists and messages' durations
  CrossOut* cross = nullptr;         // cross-iteration successors: inline_cross or cross_store
  uint32_t remaining = 0;
  int group = 0;
  int iteration = 0;
  // The iteration this fragment runs less the one its tasks were built for (one group: a
  // fragment reused for a later iteration keeps its tasks as they are, Scheme::repeats_from;
  // per worker: its template's).
  int iteration_shift = 0;
  int base = 0;                    // per worker: the group its template was built for
  bool next_built = false;         // the group's next iteration is built (or none is due)
  bool runs_own = false;           // per worker: `tmpl` is `own`
  bool own_durations = false;      // per worker: compute durations in `durations`, not tmpl's
  uint8_t inline_cross_count = 0;  // cross-iteration successors in inline_cross
  std::array<CrossOut, kInlineCross> inline_cross;  // the first kInlineCross successors
  alignas(64) std::array<WorkerState, kInlineStates> inline_states;  // per worker, if they fit
  // Per worker (own_durations): each task's duration where the template's compute durations
  // are not this fragment's (drawn per worker and iteration: jitter, stragglers).
  std::array<double, kInlineStates> durations;
  std::vector<CrossOut> cross_store;     // more cross-iteration successors
  std::vector<WorkerState> state_store;  // per worker, more than kInlineStates tasks
  std::unique_ptr<Template> own;         // per worker: a template of its own (none shared matched)
  std::unique_ptr<InPlace> in_place;     // one group's fragments

  /// Makes this fragment (new or retired) the one of `iteration_index` of `group_index`, with
  /// `n` tasks none of which has started. Its arrays of a retired fragment are reused (no fresh
  /// pages per iteration).
  void renew(int group_index, int iteration_index, uint32_t n) {
    group = group_index;
    iteration = iteration_index;
    remaining = n;
    iteration_shift = 0;
    inline_cross_count = 0;
    cross = inline_cross.data();
    next_built = false;
  }
  /// Adds a cross-iteration successor; returns its index.
  uint32_t add_cross(const CrossOut& c) {
    if (cross == inline_cross.data()) {
      if (inline_cross_count < kInlineCross) {
        inline_cross[inline_cross_count] = c;
        return inline_cross_count++;
      }
      cross_store.assign(inline_cross.begin(), inline_cross.end());  // all of them there from now
    }
    cross_store.push_back(c);
    cross = cross_store.data();
    return static_cast<uint32_t>(cross_store.size() - 1);
  }
  /// Per worker: sets the states to `fresh` (one per task), inline if they fit.
  void set_states(const std::vector<WorkerState>& fresh) {
    WorkerState* to = inline_states.data();
    if (fresh.size() > kInlineStates) {
      state_store.resize(fresh.size());
      to = state_store.data();
    }
    std::copy(fresh.begin(), fresh.end(), to);
    states = reinterpret_cast<std::byte*>(to);
  }
};

/// The route costs asked so far, in an open-addressing table (one probe per message where a
/// node-based map chases pointers: async runs send 10^5 messages per iteration).
class RouteCache {
 public:
  /// The cost of `src` -> `dst`, from `compute(src, dst)` the first time.
  template <class Compute>
  const AlphaBeta& get(int src, int dst, Compute&& compute) {
    const uint64_t key = key_of(src, dst);
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot_of(key);
    if (slots_[i].key != key) {
      slots_[i] = {key, compute(src, dst)};
      ++size_;
    }
    return slots_[i].value;
  }
  /// Starts loading the slot of `src` -> `dst` (lookups of many pairs then overlap).
  void prefetch(int src, int dst) const {
    if (slots_.empty()) return;
    __builtin_prefetch(&slots_[home(key_of(src, dst))]);
  }

 private:
  static constexpr uint64_t kEmpty = ~0ULL;
  struct Slot {
    uint64_t key = kEmpty;
    AlphaBeta value;
  };
  static uint64_t key_of(int src, int dst) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst);
  }
  /// Where the search for `key` starts.
  size_t home(uint64_t key) const {
    // splitmix64's finalizer: every bit of (src, dst) reaches the low bits used here.
    uint64_t h = key;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return static_cast<size_t>(h) & (slots_.size() - 1);
  }
  /// The slot holding `key`, or the empty one where it belongs.
  size_t slot_of(uint64_t key) const {
    const size_t mask = slots_.size() - 1;
    size_t i = home(key);
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

/// Each collective task's time from its closed form, worked out once per size, operation and
/// subgroup (every worker's bucket of one iteration asks for the same).
class CollectiveTimes {
 public:
  /// The time of collective task `task` under `collective` on `costs`.
  double get(const Task& task, const Collective& collective, const AnalyticCosts& costs) {
    const std::tuple<double, CollectiveOp, int> key{task.bytes, task.op, task.subgroup};
    auto it = times_s_.find(key);
    if (it == times_s_.end()) {
      CollectiveGroup g = costs.group;
      g.op = task.op;
      it = times_s_
               .emplace(key,
                        subgroup_formula_s(collective, g, task.bytes, costs.network, task.subgroup))
               .first;
    }
    return it->second;
  }

 private:
  std::map<std::tuple<double, CollectiveOp, int>, double> times_s_;
};

/// A host's processor: the compute tasks sharing it and when their work was last updated, in one
/// cache line: a wave of 10^5 completions (one group) visits every worker's host twice (at its
/// pop, then at the next task's start), so that its size is what such a wave moves, and per
/// worker (async) 10^4 hosts visited at random are 64 bytes each, not two lines. The first
/// running task is inline (a worker's chain runs one task at a time, a server's apply queue too),
/// the others in the scheduler's overflow lists; the speed and version are in arrays of their own.
struct alignas(64) CompactHost {
  double last_s = 0;
  uint64_t stamp = 0;              // seq when the host last changed (its place on ties)
  uint64_t touched_round = ~0ULL;  // round of that change
  uint32_t running = 0;            // compute tasks running
  Running first;                   // the first of them
};
static_assert(sizeof(CompactHost) == 64);

/// Both ends of `*p` (a 48-byte task spans two cache lines half the time).
template <int kWrite = 0, class T>
void prefetch_whole(const T* p) {
  __builtin_prefetch(p, kWrite);
  __builtin_prefetch(reinterpret_cast<const char*>(p) + sizeof(T) - 1, kWrite);
}

/// Where task t of a fragment and its state are, and loading them ahead. The strides are
/// constants, so that a write to a state cannot make the compiler reload them. Per worker
/// (`kPerWorker`) a task is its template's with the worker substituted (a copy; the template
/// stays in the caches, so that only its state is loaded ahead).
template <bool kPerWorker>
struct FragmentLayout {
  /// Task `t` of fragment `l`.
  static std::conditional_t<kPerWorker, Task, const Task&> task_of(const Live& l, uint32_t t) {
    const Task& task = reinterpret_cast<const Task*>(l.tasks)[t];
    if constexpr (kPerWorker)
      return instantiate(task, l.base, l.group, l.iteration_shift);
    else
      return task;
  }
  /// What the scheduler keeps per task.
  using State = std::conditional_t<kPerWorker, WorkerState, TaskState>;
  /// The scheduler's state of task `t` of fragment `l`.
  static State& st_of(const Live& l, uint32_t t) { return reinterpret_cast<State*>(l.states)[t]; }
  /// Calls `fn(s)` for each successor `s` of task `t` of `l` (state `st`), in order.
  template <class Fn>
  static void for_each_successor(const Live& l, uint32_t t, const State& st, Fn&& fn) {
    if constexpr (kPerWorker) {
      const uint32_t* offsets = l.tmpl->offsets.data();
      for (uint32_t i = offsets[t]; i < offsets[t + 1]; ++i) fn(l.succ[i]);
    } else {
      st.for_each_successor(l.succ, fn);
    }
  }
  /// The first successor of task `t` of `l` (state `st`), or kNone.
  static uint32_t first_successor(const Live& l, uint32_t t, const State& st) {
    if constexpr (kPerWorker) {
      const uint32_t* offsets = l.tmpl->offsets.data();
      return offsets[t] < offsets[t + 1] ? l.succ[offsets[t]] : kNone;
    } else {
      return st.first_successor(l.succ);
    }
  }
  /// Appends cross-iteration successor `k` (in `s.cross_store`) to those of `from`, a state
  /// of `s` (per worker the state holds the list's head only: the lists have a few elements).
  static void append_cross(Live& s, State& from, uint32_t k) {
    if constexpr (kPerWorker) {
      if (from.cross_head == kNone) {
        from.cross_head = k;
        return;
      }
      uint32_t j = from.cross_head;
      while (s.cross[j].next != kNone) j = s.cross[j].next;
      s.cross[j].next = k;
    } else {
      if (from.cross_tail == kNone)
        from.cross_head = k;
      else
        s.cross[from.cross_tail].next = k;
      from.cross_tail = k;
    }
  }

  // Loading ahead: what starting or completing a task reads, in three steps a few events
  // apart, since each needs the previous one's data (the fragment's header, then the task and
  // its state, then its first successors').

  /// Starts loading the header of the fragment of `live`.
  static void prefetch_header(const Live* live) { __builtin_prefetch(live); }

  /// Once the header of `live` is loaded: starts loading task `t` and its state (per worker
  /// the state only, 8 bytes: the task is its template's, in the caches).
  static void prefetch_task(const Live* live, uint32_t t) {
    __builtin_prefetch(&st_of(*live, t), 1);
    if constexpr (!kPerWorker) prefetch_whole(&task_of(*live, t));
  }

  /// Once task `t`'s state is loaded: starts loading that of its first successor and of its
  /// first successor in a later iteration (the next forward after an update).
  static void prefetch_successors(const Live* live, uint32_t t) {
    const Live& l = *live;
    const State& st = st_of(l, t);
    if (const uint32_t s = first_successor(l, t, st); s != kNone && !solo(l, s))
      prefetch_task(&l, s);
    if (st.cross_head != kNone) {
      const CrossOut& c = l.cross[st.cross_head];
      prefetch_task(c.live, c.task);
    }
  }

  /// Starts loading the states and tasks of the successors of task `t` of `l` (state `st`)
  /// if it has a few (not a collective's 10^5): one readied starts at once and reads its task.
  static void prefetch_held_successors(const Live& l, uint32_t t, const State& st) {
    if constexpr (kPerWorker) {
      const uint32_t* offsets = l.tmpl->offsets.data();
      if (offsets[t + 1] - offsets[t] > kInlineSuccessors) return;
      for (uint32_t i = offsets[t]; i < offsets[t + 1]; ++i)
        if (!solo(l, l.succ[i])) prefetch_task(&l, l.succ[i]);
    } else {
      if (st.succ_count > kInlineSuccessors) return;
      for (uint32_t i = 0; i < st.succ_count; ++i) prefetch_task(&l, st.succ[i]);
    }
  }

  /// True if task `s` of `l` is readied by its one predecessor's completion alone (per worker:
  /// its state is then not read to ready it; one group: never).
  static bool solo(const Live& l, uint32_t s) {
    if constexpr (kPerWorker) return l.tmpl->solo[s] != 0;
    return false;
  }

  /// The three steps for the items of a sequence known to be processed in order, `at(k)`
  /// giving the k-th item after the current one (null past the end).
  template <class At>
  static void prefetch_ahead(At&& at) {
    if (const auto* a = at(3 * kPrefetchAhead)) prefetch_header(a->live);
    if (const auto* a = at(2 * kPrefetchAhead)) prefetch_task(a->live, a->task);
    if (const auto* a = at(kPrefetchAhead)) prefetch_successors(a->live, a->task);
  }
};

/// The hosts' processors: a CompactHost each, the speeds in an array and the running tasks but
/// the first in overflow lists (a co-located server's host runs its worker's chain beside the
/// applies). The hosts' versions are in an array of their own: every event popped is checked
/// against its host's version, and 4 bytes a host stay in the caches where a host's record
/// (10^5 of them) does not. One class per scheduler mode (`kPerWorker`, though both keep the
/// same): each mode's loop then inlines its own copy as it did when their hosts differed (one
/// shared copy made a 262,144-worker sync run about 15 % slower).
template <bool kPerWorker>
class HostTable {
 public:
  /// Host `w`.
  CompactHost& operator[](size_t w) { return hosts_[w]; }
  const CompactHost& operator[](size_t w) const { return hosts_[w]; }
  /// Hosts so far.
  size_t size() const { return hosts_.size(); }
  /// Starts loading what starting a task on host `w` reads and writes (if it exists yet).
  void prefetch(size_t w) const {
    if (w >= hosts_.size()) return;
    __builtin_prefetch(&hosts_[w], 1);
    __builtin_prefetch(&versions_[w], 1);
    __builtin_prefetch(&speeds_[w]);
  }
  /// Starts loading the host compute task `task` will run on (nothing for other tasks).
  void prefetch_host_of(const Task& task) const {
    if (task.kind != TaskKind::comm) prefetch(static_cast<size_t>(compute_host(task)));
  }
  /// Adds hosts up to `w`, host k at speed `speeds_flops[k]` (1 past its end).
  void ensure(size_t w, const std::vector<double>& speeds_flops) {
    if (hosts_.size() > w) return;
    const size_t old = hosts_.size();
    hosts_.resize(w + 1);
    versions_.resize(w + 1);
    speeds_.resize(w + 1);
    for (size_t k = old; k < hosts_.size(); ++k)
      speeds_[k] = k < speeds_flops.size() ? speeds_flops[k] : 1.0;
  }
  /// The version of host `w`'s next completion (bumped at every change of its running tasks).
  uint32_t& version(size_t w) { return versions_[w]; }
  uint32_t version(size_t w) const { return versions_[w]; }
  /// How many compute tasks run on host `where`.
  size_t running_count(size_t where) const { return hosts_[where].running; }
  /// The `i`-th compute task running on host `where` (in the order they started).
  Running& running(size_t where, size_t i) {
    return i == 0 ? hosts_[where].first : more_running_[where][i - 1];
  }
  /// Adds a compute task to host `where`, after the others.
  void push_running(size_t where, const Running& r) {
    CompactHost& h = hosts_[where];
    if (h.running == 0) {
      h.first = r;
    } else {
      if (more_running_.size() <= where) more_running_.resize(hosts_.size());
      more_running_[where].push_back(r);
    }
    ++h.running;
  }
  /// Removes running task `i` of host `where`, keeping the others' order.
  void erase_running(size_t where, size_t i) {
    CompactHost& h = hosts_[where];
    for (size_t k = i; k + 1 < h.running; ++k) running(where, k) = running(where, k + 1);
    --h.running;
    if (h.running > 0) more_running_[where].pop_back();
  }
  /// Speed of host `where` in flop/s.
  double speed_flops(size_t where) const { return speeds_[where]; }
  /// Charges the work done on host `where` since its last change, up to `now_s`: each of its
  /// n tasks ran at 1/n of its speed.
  void advance(size_t where, double now_s) {
    CompactHost& h = hosts_[where];
    const size_t n = running_count(where);
    if (n > 0 && now_s > h.last_s) {
      const double done_flops = speed_flops(where) / static_cast<double>(n) * (now_s - h.last_s);
      for (size_t i = 0; i < n; ++i) {
        Running& r = running(where, i);
        r.remaining_flops = std::max(0.0, r.remaining_flops - done_flops);
      }
    }
    h.last_s = now_s;
  }
  /// Sets host `where`'s speed (a pstate change: its running tasks need advancing first).
  void set_speed_flops(size_t where, double speed_flops) { speeds_[where] = speed_flops; }

 private:
  std::vector<CompactHost> hosts_;
  std::vector<uint32_t> versions_;
  // Per host, its speed (flop/s) and its running tasks but the first.
  std::vector<double> speeds_;
  std::vector<std::vector<Running>> more_running_;
};

}  // namespace sgdsim::sched
