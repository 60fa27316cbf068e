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
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
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
struct Slot;

/// No slot (one group): events are 40 bytes, not 48 (a wave queues 10^5 of them).
struct NoSlot {
  NoSlot() = default;
  NoSlot(const Slot* /*slot*/) {}  // NOLINT(google-explicit-constructor): stands for the pointer
  operator const Slot*() const { return nullptr; }
};

template <bool kPerWorker>
struct EventOf {
  double time_s = 0;
  uint64_t seq = 0;  // ties complete in the order they were scheduled
  Live* live = nullptr;
  int32_t host = -1;
  uint32_t version = 0;
  uint32_t task = 0;
  // Per worker: the task's slot, so that an event's data can be loaded ahead all at once
  // (without reading its fragment's header first).
  [[no_unique_address]] std::conditional_t<kPerWorker, const Slot*, NoSlot> slot = nullptr;
};
static_assert(sizeof(EventOf<false>) == 40);

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

/// A first-in-first-out queue in one power-of-two ring of slots that it reuses (a std::deque
/// frees and allocates a block every few elements as a FIFO moves on: fresh cache lines on
/// every push). It may also insert near its back, as the event lanes do.
template <class T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The `i`-th element from the front.
  T& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask_]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  void push_back(const T& v) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  /// Inserts `v` before the `i`-th element, moving the ones after it back.
  void insert(size_t i, const T& v) {
    push_back(v);
    for (size_t k = size_ - 1; k > i; --k) (*this)[k] = (*this)[k - 1];
    (*this)[i] = v;
  }

 private:
  void grow() {
    std::vector<T> bigger(std::max<size_t>(16, 2 * slots_.size()));
    for (size_t k = 0; k < size_; ++k) bigger[k] = (*this)[k];
    slots_ = std::move(bigger);
    head_ = 0;
    mask_ = slots_.size() - 1;
  }
  std::vector<T> slots_;
  size_t head_ = 0, size_ = 0, mask_ = 0;
};

/// A priority queue of events with first-in-first-out fast paths ("lanes"). Each push names a
/// lane key (a task's nominal duration): an event due no earlier than the last one in its key's
/// lane is appended to that sorted lane, anything else goes to a heap; the next event is the
/// earliest of the lanes' heads and the heap's top. Tasks of one length started in time order
/// (every worker's forward, a bucket's backward, a server's applies, async's messages) then
/// cost O(1) each instead of a heap of 10^5 entries, and each lane says which events come next.
/// The order is the heap's: (time, seq) is unique among the events that count.
template <class Event, class After>
class LaneQueue {
 public:
  bool empty() const { return size_ == 0; }
  /// Queues `e` in the lane of `lane_key` or the heap. If the last event of that lane is the
  /// one `e` supersedes (same host and task, version `replaces`: a host changed again right
  /// after it queued its next completion, as at SimGrid's release of the previous activity),
  /// `e` takes its place when that keeps the lane in order.
  void push(const Event& e, uint64_t lane_key, std::optional<uint32_t> replaces = std::nullopt) {
    if (replaces && replace_back(e, lane_key, *replaces)) return;
    ++size_;
    size_t pos = 0;
    const int c = lane_for(lane_key, e, &pos);
    if (c == kHeap)
      heap_.push(e);
    else if (pos == lanes_[c].size())
      lanes_[c].push_back(e);
    else
      lanes_[c].insert(pos, e);
    // An event earlier than the first one heads its own container and becomes the first.
    if (best_ != kDirty && (best_ == kNone || After()(head(best_), e))) best_ = c;
  }
  const Event& top() const { return head(best()); }
  void pop() {
    last_ = best();
    if (last_ == kHeap)
      heap_.pop();
    else
      lanes_[last_].pop_front();
    --size_;
    best_ = kDirty;
  }
  /// Drops the stale events (`stale(e)`) of the heap once it has doubled since it last did.
  /// Lazy deletion leaves a superseded completion in the heap until it comes to the top: a
  /// server's host, rescheduled at every apply, leaves 10^4 of them there, each popped in
  /// O(log n). The live events keep their order: (time, seq) orders them totally.
  template <class Stale>
  void compact(Stale&& stale) {
    if (heap_.size() < compact_at_) return;
    size_ -= heap_.remove_if(stale);
    compact_at_ = std::max(kMinCompact, 2 * heap_.size());
    best_ = kDirty;
  }
  /// The `k`-th event after the last one popped in its lane (null past the lane's end, or if
  /// it came from the heap): events known to come in that order, whose data can be loaded early.
  const Event* next_in_lane(size_t k) const {
    if (last_ < 0) return nullptr;
    const auto& lane = lanes_[last_];
    return k < lane.size() ? &lane[k] : nullptr;
  }

 private:
  static constexpr int kLanes = 8;
  static constexpr size_t kMinCompact = 4096;
  static constexpr int kHeap = -1, kNone = -2, kDirty = -3;

  /// Events a push may pass at the end of its lane: those due at the same date that come after
  /// it (timed activities started together end most recent first).
  static constexpr size_t kMaxPass = 8;

  /// The lane for an event of key `key` and the place `*pos` of `e` in it: its key's if `e`
  /// comes after all but the last kMaxPass events there, else an empty lane, else the heap.
  int lane_for(uint64_t key, const Event& e, size_t* pos) {
    int empty = kHeap;
    for (int c = 0; c < kLanes; ++c) {
      const auto& lane = lanes_[c];
      if (lane.empty()) {
        if (keys_[c] == key) {
          *pos = 0;
          return c;
        }
        if (empty == kHeap) empty = c;
      } else if (keys_[c] == key) {
        size_t j = lane.size();
        while (j > 0 && After()(lane[j - 1], e)) {
          if (lane.size() - j == kMaxPass) return kHeap;
          --j;
        }
        *pos = j;
        return c;
      }
    }
    if (empty != kHeap) keys_[empty] = key;
    *pos = 0;
    return empty;
  }
  bool replace_back(const Event& e, uint64_t key, uint32_t replaces) {
    for (int c = 0; c < kLanes; ++c) {
      auto& lane = lanes_[c];
      if (keys_[c] != key || lane.empty()) continue;
      Event& b = lane.back();
      if (b.host != e.host || b.version != replaces || b.live != e.live || b.task != e.task)
        return false;
      if (lane.size() > 1 && After()(lane[lane.size() - 2], e)) return false;
      b = e;
      best_ = kDirty;
      return true;
    }
    return false;
  }
  const Event& head(int c) const { return c == kHeap ? heap_.top() : lanes_[c].front(); }
  /// The container holding the first event.
  int best() const {
    if (best_ != kDirty) return best_;
    best_ = heap_.empty() ? kNone : kHeap;
    for (int c = 0; c < kLanes; ++c)
      if (!lanes_[c].empty() && (best_ == kNone || After()(head(best_), lanes_[c].front())))
        best_ = c;
    return best_;
  }

  /// A heap whose events can be filtered.
  struct Heap : std::priority_queue<Event, std::vector<Event>, After> {
    template <class Stale>
    size_t remove_if(Stale&& stale) {
      const size_t before = this->c.size();
      std::erase_if(this->c, stale);
      std::make_heap(this->c.begin(), this->c.end(), this->comp);
      return before - this->c.size();
    }
  };

  std::array<RingQueue<Event>, kLanes> lanes_;
  std::array<uint64_t, kLanes> keys_{};
  Heap heap_;
  size_t compact_at_ = kMinCompact;
  size_t size_ = 0;
  mutable int best_ = kNone;
  int last_ = kHeap;
};

/// A priority queue of events with one first-in-first-out fast path: an event due no earlier
/// than the last one queued (`after(e, last)`, or equal) is appended to a sorted FIFO instead
/// of the heap. Waves of equal-length tasks started together (every worker's forward, without
/// jitter) then cost O(1) each instead of a heap of 10^5 entries. The runs whose workers go
/// together (one group) use it: their waves need no more, and lanes cost them time.
template <class Event, class After>
class FifoQueue {
 public:
  bool empty() const { return fifo_.empty() && heap_.empty(); }
  /// Queues `e` (a lane key and a superseded version mean nothing here).
  void push(const Event& e, uint64_t /*lane_key*/,
            std::optional<uint32_t> /*replaces*/ = std::nullopt) {
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
  /// No look-ahead: the waves load their data ahead from the batch instead.
  const Event* next_in_lane(size_t /*k*/) const { return nullptr; }

 private:
  bool from_fifo() const {
    return !fifo_.empty() && (heap_.empty() || !After()(fifo_.front(), heap_.top()));
  }
  RingQueue<Event> fifo_;
  std::priority_queue<Event, std::vector<Event>, After> heap_;
};

/// An activity ended in the current round, waiting for its completion callback: what the
/// callback needs of its event (a wave of 10^5 of them is copied: a third of an event's size).
struct Due {
  Live* live = nullptr;
  uint32_t task = 0;
  int32_t host = -1;
};

/// A compute task running on a host, with the work left in flops.
struct Running {
  Live* live = nullptr;
  uint32_t task = 0;
  double remaining_flops = 0;
  uint64_t lane_key = 0;  // the task's duration as built (its event queue lane)
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

/// A task of a live fragment and the scheduler's state of it, side by side: starting or
/// completing a task reads both (two adjacent cache lines, not two arrays apart).
struct Slot {
  Task task;
  TaskState st;
  double message_s = 0;  // a message's duration (alpha + n beta of its route), set at build time
};

/// A fragment read in place: its graph and its tasks' states.
struct InPlace {
  Fragment f;
  std::vector<TaskState> states;
};

/// A fragment being executed. Per worker (async) it is a copy of its tasks and successor lists
/// in arrays of its own, each task beside its state (the fragment's graph goes back to the
/// builder's pool at once, and 10^4 workers' live fragments take half the memory); with one
/// group (10^5 tasks a fragment, visited in waves: copying them costs more than it saves) it
/// keeps its graph and its states in an array beside it. Either way task t and its state sit
/// at fixed strides from two bases. It stays at one address while it lives (the scheduler's
/// pool does not move its elements). What every start and completion reads comes first, in one
/// cache line.
struct alignas(64) Live {
  const std::byte* tasks = nullptr;  // task t at tasks + t * the scheduler's task stride
  std::byte* states = nullptr;       // its state at states + t * its state stride
  const uint32_t* succ = nullptr;    // successor lists
  uint32_t remaining = 0;
  int group = 0;
  int iteration = 0;
  std::vector<CrossOut> cross;
  std::vector<Slot> slot_store;       // per worker
  std::vector<uint32_t> succ_store;   // per worker
  std::unique_ptr<InPlace> in_place;  // one group's fragments

  /// The duration of message `t` (per worker).
  double& message_s(uint32_t t) { return slot_store[t].message_s; }
  double message_s(uint32_t t) const { return slot_store[t].message_s; }
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

/// A host's processor (per worker): the compute tasks sharing it and when their work was last
/// updated. A colocated server's host runs its worker's chain beside the applies: two inline.
struct Host {
  double speed_flops = 1;
  double last_s = 0;
  uint32_t version = 0;
  uint64_t stamp = 0;              // seq when the host last changed (its place on ties)
  uint64_t touched_round = ~0ULL;  // round of that change
  RunningSet running;
};

/// A host's processor with one group: the compute tasks sharing it and when their work was last
/// updated, in one cache line: a wave of 10^5 completions visits every worker's host twice (at its
/// pop, then at the next task's start), so that its size is what such a wave moves. The first
/// running task is inline (a worker's chain runs one task at a time, a server's apply queue too),
/// the others in the scheduler's overflow lists; the speed is in an array of its own.
struct alignas(64) CompactHost {
  double last_s = 0;
  uint64_t stamp = 0;              // seq when the host last changed (its place on ties)
  uint64_t touched_round = ~0ULL;  // round of that change
  uint32_t version = 0;
  uint32_t running = 0;  // compute tasks running
  Running first;         // the first of them
};
static_assert(sizeof(CompactHost) == 64);

/// The scheduler. `kPerWorker`: the scheme runs each worker as a group of its own (async),
/// whose workers drift apart, so that every event visits another worker's small fragment: its
/// tasks are copied beside their states, messages get their durations when the fragment is
/// built, and the event queues have lanes that say which events come next (loaded early).
/// Otherwise (one group: waves of 10^5 equal tasks) fragments are read in place and the
/// queues have one FIFO.
template <bool kPerWorker>
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
    std::vector<Due> batch;
    for (double date_s; next_time(&date_s);) {
      // SimGrid advances its clock by the delay to the next date, ends every activity due
      // within its time precision of the new clock first (earliest date first), then runs their
      // completion callbacks one after another: the same rounds give the same order on ties.
      now_ = now_ + (date_s - now_);
      ++round_;
      batch.clear();
      for (Event e; pop_due(now_, &e);) batch.push_back({e.live, e.task, e.host});
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
    RingQueue<Ref> waiting;
  };
  using HostT = std::conditional_t<kPerWorker, Host, CompactHost>;
  using Event = EventOf<kPerWorker>;

  // Where task t of a fragment and its state are: slots (per worker) or two arrays. The
  // strides are constants, so that a write to a state cannot make the compiler reload them.
  static constexpr size_t kTaskStride = kPerWorker ? sizeof(Slot) : sizeof(Task);
  static constexpr size_t kStateStride = kPerWorker ? sizeof(Slot) : sizeof(TaskState);
  static const Task& task_of(const Live& l, uint32_t t) {
    return *reinterpret_cast<const Task*>(l.tasks + size_t{t} * kTaskStride);
  }
  static TaskState& st_of(const Live& l, uint32_t t) {
    return *reinterpret_cast<TaskState*>(l.states + size_t{t} * kStateStride);
  }

  // A host's running tasks and speed, wherever its kind keeps them.

  /// How many compute tasks run on host `where`.
  size_t running_count(size_t where) const {
    if constexpr (kPerWorker)
      return hosts_[where].running.size();
    else
      return hosts_[where].running;
  }
  /// The `i`-th compute task running on host `where` (in the order they started).
  Running& running(size_t where, size_t i) {
    if constexpr (kPerWorker)
      return hosts_[where].running[i];
    else
      return i == 0 ? hosts_[where].first : more_running_[where][i - 1];
  }
  void push_running(size_t where, const Running& r) {
    if constexpr (kPerWorker) {
      hosts_[where].running.push_back(r);
    } else {
      CompactHost& h = hosts_[where];
      if (h.running == 0) {
        h.first = r;
      } else {
        if (more_running_.size() <= where) more_running_.resize(hosts_.size());
        more_running_[where].push_back(r);
      }
      ++h.running;
    }
  }
  /// Removes running task `i` of host `where`, keeping the others' order.
  void erase_running(size_t where, size_t i) {
    if constexpr (kPerWorker) {
      hosts_[where].running.erase(i);
    } else {
      CompactHost& h = hosts_[where];
      for (size_t k = i; k + 1 < h.running; ++k) running(where, k) = running(where, k + 1);
      --h.running;
      if (h.running > 0) more_running_[where].pop_back();
    }
  }
  double speed_flops(size_t where) const {
    if constexpr (kPerWorker)
      return hosts_[where].speed_flops;
    else
      return speeds_[where];
  }

  // Fragments are keyed by fid = iteration * groups + group, as in the SimGrid runner.
  Live& live(int fid) {
    auto& d = live_[static_cast<size_t>(fid % groups_)];
    return *d[static_cast<size_t>(fid / groups_ - base_[fid % groups_])];
  }

  // Loading ahead: what starting or completing a task reads, in three steps a few events
  // apart, since each needs the previous one's data (the fragment's header, then the task and
  // its state, then its first successors').

  /// Starts loading the header of the fragment of `live`.
  static void prefetch_header(const Live* live) { __builtin_prefetch(live); }

  /// Once the header is loaded: starts loading task `t` and its state.
  static void prefetch_task(const Live* live, uint32_t t) {
    if constexpr (kPerWorker) {
      prefetch_whole<1>(&live->slot_store[t]);
    } else {
      prefetch_whole(&task_of(*live, t));  // a 48-byte task spans two lines half the time
      __builtin_prefetch(&st_of(*live, t), 1);
    }
  }

  /// Both ends of `*p` (an 80-byte slot spans two or three cache lines).
  template <int kWrite = 0, class T>
  static void prefetch_whole(const T* p) {
    __builtin_prefetch(p, kWrite);
    __builtin_prefetch(reinterpret_cast<const char*>(p) + sizeof(T) - 1, kWrite);
  }

  /// Once task `t`'s state is loaded: starts loading that of its first successor and of its
  /// first successor in a later iteration (the next forward after an update).
  static void prefetch_successors(const Live* live, uint32_t t) {
    const Live& l = *live;
    const TaskState& st = st_of(l, t);
    if (st.succ_begin < st.succ_end) {
      const uint32_t s = l.succ[st.succ_begin];
      __builtin_prefetch(&st_of(l, s), 1);
      prefetch_whole(&task_of(l, s));
    }
    if (st.cross_head != kNone) {
      const CrossOut& c = l.cross[st.cross_head];
      __builtin_prefetch(&st_of(*c.live, c.task), 1);
      prefetch_whole(&task_of(*c.live, c.task));
    }
  }

  /// The task's slot (per worker; null otherwise), for its events.
  static const Slot* slot_of_task(const Live& l, uint32_t t) {
    if constexpr (kPerWorker)
      return reinterpret_cast<const Slot*>(l.tasks + size_t{t} * kTaskStride);
    return nullptr;
  }

  /// Starts loading what completing event `a` reads first, from the event alone: its host,
  /// its fragment's header, its slot and the next one (a chain's next task).
  void prefetch_event(const Event* a) const {
    if (a->host >= 0) __builtin_prefetch(&hosts_[static_cast<size_t>(a->host)]);
    __builtin_prefetch(a->live);
    prefetch_whole<1>(a->slot);
    prefetch_whole<1>(a->slot + 1);
  }

  /// Events known to be processed in this order (a lane's), `at(k)` giving the k-th after
  /// the current one (null past the end): their slots a few events ahead, once those have
  /// arrived their successors'. `current(a)`: `a` is not stale (its fragment may be gone).
  template <class At, class Current>
  void prefetch_events_ahead(At&& at, Current&& current) const {
    if (const Event* a = at(2 * kPrefetchAhead)) prefetch_event(a);
    if (const Event* a = at(kPrefetchAhead); a != nullptr && current(a))
      prefetch_successors(a->live, a->task);
  }

  /// The three steps for the items of a sequence known to be processed in order, `at(k)`
  /// giving the k-th item after the current one (null past the end).
  template <class At>
  static void prefetch_ahead(At&& at) {
    if (const auto* a = at(3 * kPrefetchAhead)) prefetch_header(a->live);
    if (const auto* a = at(2 * kPrefetchAhead)) prefetch_task(a->live, a->task);
    if (const auto* a = at(kPrefetchAhead)) prefetch_successors(a->live, a->task);
  }

  /// A fragment to fill: a retired one, or a new one.
  Live* new_live() {
    if (free_live_.empty()) return &live_pool_.emplace_back();
    Live* l = free_live_.back();
    free_live_.pop_back();
    return l;
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
    const Live* prev = live_[group].empty() ? nullptr : live_[group].back();
    live_[group].push_back(new_live());
    Live& l = *live_[group].back();
    l.group = group;
    l.iteration = iteration;
    l.remaining = n;
    // Arrays of retired fragments are reused: no fresh pages per iteration.
    l.cross.clear();
    const std::vector<uint32_t>*offsets, *targets;
    lookups_.clear();
    if constexpr (kPerWorker) {
      f.graph.successor_lists_view(&offsets, &targets);
      l.slot_store.resize(n);
      l.succ_store.assign(targets->begin(), targets->end());
      l.tasks = reinterpret_cast<const std::byte*>(&l.slot_store.data()->task);
      l.states = reinterpret_cast<std::byte*>(&l.slot_store.data()->st);
      l.succ = l.succ_store.data();
      for (uint32_t t = 0; t < n; ++t) l.slot_store[t].task = f.graph.task(t);
    } else {
      // The fragment's tasks and lists do not move while it lives (its graph is not changed
      // any more).
      // Brace initialisation: make_unique of an aggregate needs C++20's parenthesised
      // aggregate init, which clang 14 lacks.
      l.in_place.reset(new InPlace{std::move(f), std::move(spare_states_)});
      InPlace& p = *l.in_place;
      p.f.graph.successor_lists_view(&offsets, &targets);
      p.states.resize(n);
      l.tasks = reinterpret_cast<const std::byte*>(n > 0 ? &p.f.graph.task(0) : nullptr);
      l.states = reinterpret_cast<std::byte*>(p.states.data());
      l.succ = targets->data();
    }
    const std::vector<CrossEdge>& cross = kPerWorker ? f.cross : l.in_place->f.cross;
    // With one group, the predecessors of each task are counted first in an array of their own
    // (in-fragment edges, then the cross edges whose source is still pending), so that the
    // states are written in one pass that also readies the tasks waiting for none: at 10^5
    // workers a fragment's states are larger than the caches, and a pass to count and another
    // to find the ready ones read them from memory again. Per worker (small fragments), or
    // with a cross edge of lag 0 (within the fragment: it needs its source's state), the
    // states are written first and counted in place.
    bool counted = !kPerWorker;
    for (const auto& c : cross) counted = counted && c.lag > 0;
    if (counted) {
      pending_.assign(n, 0);
      for (uint32_t target : *targets) ++pending_[target];
      for (const auto& c : cross) link_cross(l, c, true);
    }
    for (uint32_t t = 0; t < n; ++t) {  // one pass over the states
      TaskState& st = st_of(l, t);
      st = TaskState{};
      st.succ_begin = (*offsets)[t];
      st.succ_end = (*offsets)[t + 1];
      const Task& task = task_of(l, t);
      if (kPerWorker && is_message(task) && !repeat_message(l, prev, t)) {
        routes_.prefetch(task.src, task.dst);
        lookups_.push_back(t);
      }
      if (counted) {
        st.pending = pending_[t];
        if (st.pending == 0) ready_.push_back({&l, t});
      }
    }
    if (!counted)
      for (uint32_t target : *targets) ++st_of(l, target).pending;
    look_up_messages(l);  // after a pass: the route table's slots were asked for in the first
    if (!counted) {
      for (const auto& c : cross) link_cross(l, c, false);
      for (uint32_t t = 0; t < n; ++t)
        if (st_of(l, t).pending == 0) ready_.push_back({&l, t});
    }
    built_[group] = iteration + 1;
  }

  /// Makes task `c.to` of the fragment `l` being added wait for task `c.from` of its group's
  /// fragment `c.lag` iterations back, unless that one is retired or done: counted in
  /// pending_ (`counted`: before `l`'s states are written) or in the state.
  void link_cross(Live& l, const CrossEdge& c, bool counted) {
    const int src = l.iteration - c.lag;
    if (src < base_[l.group] || src < 0) return;  // retired: already done
    Live& s = live(src * groups_ + l.group);
    TaskState& from = st_of(s, c.from);
    if (from.done) return;
    if (counted)
      ++pending_[c.to];
    else
      ++st_of(l, c.to).pending;
    const auto k = static_cast<uint32_t>(s.cross.size());
    s.cross.push_back({&l, c.to, kNone});
    if (from.cross_tail == kNone)
      from.cross_head = k;
    else
      s.cross[from.cross_tail].next = k;
    from.cross_tail = k;
  }

  /// True for a point-to-point message that takes time (a push or pull between two hosts).
  static bool is_message(const Task& task) {
    return task.kind == TaskKind::comm && task.src >= 0 && task.src != task.dst && task.bytes > 0;
  }

  // Each message's duration (alpha + n beta of its route). A group's fragments repeat their
  // messages (async: every iteration a worker's pushes and pulls): one sent by the task at the
  // same index of the group's previous fragment between the same hosts with the same size
  // takes its duration from there, since the route table is larger than the caches at 10^4
  // workers. The other lookups are asked for together, so that they wait for memory at once.

  /// Copies the duration of message `t` of `l` from the group's previous fragment `prev` if
  /// that sends the same message; false if not.
  static bool repeat_message(Live& l, const Live* prev, uint32_t t) {
    if (prev == nullptr || t >= prev->slot_store.size()) return false;
    const Task &a = task_of(l, t), &b = task_of(*prev, t);
    if (!is_message(b) || a.src != b.src || a.dst != b.dst ||
        std::bit_cast<uint64_t>(a.bytes) != std::bit_cast<uint64_t>(b.bytes))
      return false;
    l.message_s(t) = prev->message_s(t);
    return true;
  }

  /// Sets the durations of the messages of `l` listed in lookups_ from the route table.
  void look_up_messages(Live& l) {
    for (uint32_t t : lookups_) {
      const Task& task = task_of(l, t);
      const AlphaBeta& ab = routes_.get(task.src, task.dst, costs_.route);
      l.message_s(t) = ab.alpha_s + task.bytes * ab.beta_s_per_byte;
    }
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
    st_of(l, r.task).start_s = now_;
    observer_.task_started(task, now_);
    ensure_built(l.group, l.iteration + 1);
    if (task.kind == TaskKind::comm && task.src >= 0) {  // point to point
      if (!is_message(task)) {
        finished_.push_back(r);
        return;
      }
      if constexpr (kPerWorker) {
        start_timed(r, l.message_s(r.task));
      } else {
        const AlphaBeta& ab = routes_.get(task.src, task.dst, costs_.route);
        start_timed(r, ab.alpha_s + task.bytes * ab.beta_s_per_byte);
      }
      return;
    }
    const bool comm = task.kind == TaskKind::comm;
    const double duration = comm ? collective_s(task) : task.duration_s;
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
    timed_.push({now_ + flops / kTimerSpeed, timed_started_++, r.live, -1, 0, r.task,
                 slot_of_task(*r.live, r.task)},
                std::bit_cast<uint64_t>(duration_s));
  }

  void start_compute(Ref r, int where, double duration_s) {
    ++activities_;
    const auto w = static_cast<size_t>(where);
    if (hosts_.size() <= w) {
      const size_t old = hosts_.size();
      hosts_.resize(w + 1);
      if constexpr (!kPerWorker) speeds_.resize(w + 1);
      for (size_t k = old; k < hosts_.size(); ++k) {
        const double speed = k < costs_.host_speed_flops.size() ? costs_.host_speed_flops[k] : 1.0;
        if constexpr (kPerWorker)
          hosts_[k].speed_flops = speed;
        else
          speeds_[k] = speed;
      }
    }
    advance(w);
    push_running(
        w, {r.live, r.task, duration_s * speed_flops(w), std::bit_cast<uint64_t>(duration_s)});
    touch_host(hosts_[w]);
    reschedule(where);
  }

  /// Charges the work done since the host's last change: each of its n tasks ran at 1/n of
  /// its speed.
  void advance(size_t where) {
    HostT& h = hosts_[where];
    const size_t n = running_count(where);
    if (n > 0 && now_ > h.last_s) {
      const double done_flops = speed_flops(where) / static_cast<double>(n) * (now_ - h.last_s);
      for (size_t i = 0; i < n; ++i) {
        Running& r = running(where, i);
        r.remaining_flops = std::max(0.0, r.remaining_flops - done_flops);
      }
    }
    h.last_s = now_;
  }

  /// Schedules the host's next completion: the task with the least work left (the first
  /// started on ties), at the shared rate.
  void reschedule(int where) {
    const auto w = static_cast<size_t>(where);
    HostT& h = hosts_[w];
    const uint32_t superseded = h.version++;
    const size_t n = running_count(w);
    if (n == 0) return;
    size_t k = 0;
    for (size_t i = 1; i < n; ++i)
      if (running(w, i).remaining_flops < running(w, k).remaining_flops) k = i;
    const Running& r = running(w, k);
    const double share_flops = speed_flops(w) / static_cast<double>(n);
    const double end_s = now_ + r.remaining_flops / share_flops;
    heap_.push({end_s, h.stamp, r.live, where, h.version, r.task, slot_of_task(*r.live, r.task)},
               r.lane_key, superseded);
  }

  void finish_compute(const Event& e) {
    const auto w = static_cast<size_t>(e.host);
    advance(w);
    for (size_t i = 0; i < running_count(w); ++i)
      if (running(w, i).live == e.live && running(w, i).task == e.task) {
        erase_running(w, i);
        break;
      }
    reschedule(e.host);
  }

  void drop_stale() {
    if constexpr (kPerWorker)
      heap_.compact([this](const Event& e) {
        return e.version != hosts_[static_cast<size_t>(e.host)].version;
      });
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
      return hosts_[static_cast<size_t>(a->host)].version == a->version;
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
    HostT& h = hosts_[w];
    if (h.touched_round == round_ || running_count(w) == 0) return;  // a change with no task
    touch_host(h);                                                   // places nothing
    advance(w);
    reschedule(where);
  }

  /// A host changed in this round: its tasks take the place of the first change.
  void touch_host(HostT& h) {
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

  double collective_s(const Task& task) {
    const std::tuple<double, CollectiveOp, int> key{task.bytes, task.op, task.subgroup};
    auto it = collective_s_.find(key);
    if (it == collective_s_.end()) {
      CollectiveGroup g = costs_.group;
      g.op = task.op;
      it = collective_s_
               .emplace(key, subgroup_formula_s(collective_, g, task.bytes, costs_.network,
                                                task.subgroup))
               .first;
    }
    return it->second;
  }

  /// Completes finished tasks and starts ready ones until neither is left.
  void drain() {
    while (!finished_.empty() || !ready_.empty()) {
      if (!ready_.empty()) {
        // A collective's end readies every worker's next task at once: load ahead.
        if (ready_.size() > kPrefetchAhead) {
          const Ref& ahead = ready_[kPrefetchAhead];
          prefetch_whole(&task_of(*ahead.live, ahead.task));
          __builtin_prefetch(&st_of(*ahead.live, ahead.task), 1);
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
    TaskState& st = st_of(l, t);
    st.done = true;
    const Task& task = task_of(l, t);
    observer_.task_done(task, st.start_s, now_);
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
    for (uint32_t i = st.succ_begin; i < st.succ_end; ++i)
      if (--st_of(l, l.succ[i]).pending == 0) ready_.push_back({&l, l.succ[i]});
    for (uint32_t k = st.cross_head; k != kNone; k = l.cross[k].next) {
      const CrossOut c = l.cross[k];
      if (--st_of(*c.live, c.task).pending == 0) ready_.push_back({c.live, c.task});
    }
    --l.remaining;
    const int g = l.group;
    auto& d = live_[static_cast<size_t>(g)];
    while (!d.empty() && d.front()->remaining == 0) {
      Live* done = d.front();
      if (done->in_place) {
        spare_states_ = std::move(done->in_place->states);
        done->in_place.reset();
      }
      free_live_.push_back(done);
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
  // Fragments live at fixed addresses in a pool; a retired one (with its arrays) is reused by
  // the next fragment built, most recently retired first (its memory is likely in a cache).
  std::deque<Live> live_pool_;
  std::vector<Live*> free_live_;
  std::vector<RingQueue<Live*>> live_;  // per group, oldest iteration first
  std::vector<int> base_, built_;       // per group: oldest live and next unbuilt iteration
  RingQueue<Ref> ready_, finished_;
  std::vector<TaskState> spare_states_;  // of the last retired fragment, for the next one
  std::vector<uint32_t> lookups_;        // messages of the fragment being added to look up
  std::vector<uint32_t> pending_;        // predecessors of each task of the fragment being added
  template <class After>
  using EventQueue =
      std::conditional_t<kPerWorker, LaneQueue<Event, After>, FifoQueue<Event, After>>;
  EventQueue<Later> heap_;                // compute, per host
  EventQueue<LaterTimed> timed_;          // collectives, messages
  uint64_t round_ = 0, timed_round_ = 0;  // rounds of completions at one instant
  uint64_t timed_changed_ = 0;            // seq_ when the timed activities last changed
  uint64_t timed_started_ = 0;
  int grave_ = -2;  // resource of the activity the SimGrid runner would still hold
  std::vector<HostT> hosts_;
  // One group: per host, its speed (flop/s) and its running tasks but the first.
  std::vector<double> speeds_;
  std::vector<std::vector<Running>> more_running_;
  std::vector<Queue> queues_;
  RouteCache routes_;
  std::map<std::tuple<double, CollectiveOp, int>, double> collective_s_;
};

}  // namespace

EngineResult run_analytic(const Scheme& scheme, int iterations, const Collective& collective,
                          const AnalyticCosts& costs, TaskObserver& observer) {
  if (scheme.groups() > 1)
    return Scheduler<true>(scheme, iterations, collective, costs, observer).run();
  return Scheduler<false>(scheme, iterations, collective, costs, observer).run();
}

}  // namespace sgdsim
