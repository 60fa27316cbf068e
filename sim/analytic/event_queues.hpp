#pragma once
/// The analytic scheduler's event queues (sim/analytic/scheduler.cpp): a ring-buffer FIFO, and
/// two priority queues with first-in-first-out fast paths, one with lanes per task length (a
/// group per worker) and one with a single FIFO (one group). Each orders events by a strict
/// weak order `After` (true when its first argument comes after its second), as a
/// std::priority_queue does. SimGrid-free, generic in the event type.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

namespace sgdsim {

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
    if (size_ == capacity_) grow();
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
  [[gnu::noinline]] void grow() {
    std::vector<T> bigger(std::max<size_t>(16, 2 * slots_.size()));
    for (size_t k = 0; k < size_; ++k) bigger[k] = (*this)[k];
    slots_ = std::move(bigger);
    head_ = 0;
    capacity_ = slots_.size();
    mask_ = capacity_ - 1;
  }
  std::vector<T> slots_;
  size_t head_ = 0, size_ = 0, mask_ = 0;
  size_t capacity_ = 0;  // slots_.size(), kept: a vector of 48-byte events divides to give it
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
    const int keyed = lane_of(lane_key);
    if (replaces && keyed >= 0 && replace_back(keyed, e, *replaces)) return;
    ++size_;
    size_t pos = 0;
    const int c = lane_for(keyed, lane_key, e, &pos);
    if (c == kHeap) {
      heap_.push(e);
      ++heap_size_;
    } else {
      if (pos == lanes_[c].size())
        lanes_[c].push_back(e);
      else
        lanes_[c].insert(pos, e);
      if (pos == 0) set_head(c, e);
    }
    // An event earlier than the first one heads its own container and becomes the first.
    if (best_ != kDirty && (best_ == kNone || After()(head(best_), e))) best_ = c;
  }
  const Event& top() const { return head(best()); }
  void pop() {
    last_ = best();
    if (last_ == kHeap) {
      heap_.pop();
      --heap_size_;
    } else {
      auto& lane = lanes_[last_];
      lane.pop_front();
      if (lane.empty())
        nonempty_ &= ~(1U << last_);
      else
        heads_[last_] = lane.front();
    }
    --size_;
    best_ = kDirty;
  }
  /// Drops the stale events (`stale(e)`) of the heap once it has doubled since it last did.
  /// Lazy deletion leaves a superseded completion in the heap until it comes to the top: a
  /// server's host, rescheduled at every apply, leaves 10^4 of them there, each popped in
  /// O(log n). The live events keep their order: (time, seq) orders them totally.
  template <class Stale>
  void compact(Stale&& stale) {
    if (heap_size_ >= compact_at_) compact_now(stale);
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

  /// The lane whose key is `key` (the first, as keys of lanes that held events are distinct),
  /// or kHeap.
  int lane_of(uint64_t key) const {
    for (int c = 0; c < kLanes; ++c)
      if (keys_[c] == key) return c;
    return kHeap;
  }
  /// The lane for an event of key `key` (whose lane is `keyed`, or kHeap) and the place `*pos`
  /// of `e` in it: its key's if `e` comes after all but the last kMaxPass events there, else
  /// the first empty lane (now of `key`), else the heap.
  int lane_for(int keyed, uint64_t key, const Event& e, size_t* pos) {
    *pos = 0;
    if (keyed >= 0) {
      const auto& lane = lanes_[keyed];
      size_t j = lane.size();
      while (j > 0 && After()(lane[j - 1], e)) {
        if (lane.size() - j == kMaxPass) return kHeap;
        --j;
      }
      *pos = j;
      return keyed;
    }
    const uint32_t empty = ~nonempty_ & ((1U << kLanes) - 1);
    if (empty == 0) return kHeap;
    const int c = std::countr_zero(empty);
    keys_[c] = key;
    return c;
  }
  /// Puts `e` in place of the last event of lane `c` if that is the one it supersedes (version
  /// `replaces`) and the lane stays in order.
  bool replace_back(int c, const Event& e, uint32_t replaces) {
    auto& lane = lanes_[c];
    if (lane.empty()) return false;
    Event& b = lane.back();
    if (b.host != e.host || b.version != replaces || b.live != e.live || b.task != e.task)
      return false;
    if (lane.size() > 1 && After()(lane[lane.size() - 2], e)) return false;
    b = e;
    if (lane.size() == 1) heads_[c] = e;
    best_ = kDirty;
    return true;
  }
  const Event& head(int c) const { return c == kHeap ? heap_.top() : heads_[c]; }
  /// Lane `c`'s first event is now `e`.
  void set_head(int c, const Event& e) {
    heads_[c] = e;
    nonempty_ |= 1U << c;
  }
  /// The container holding the first event: the heap's top against the copies of the lanes'
  /// heads (one array in the caches, not a ring each: this runs after every pop).
  int best() const {
    if (best_ != kDirty) return best_;
    // In locals: a store to best_ (an int) could alias an event's int fields, and the compiler
    // would reload the heads after each.
    int b = kNone;
    const Event* first = nullptr;
    if (!heap_.empty()) {
      b = kHeap;
      first = &heap_.top();
    }
    for (uint32_t m = nonempty_; m != 0; m &= m - 1) {
      const int c = std::countr_zero(m);
      if (first == nullptr || After()(*first, heads_[c])) {
        b = c;
        first = &heads_[c];
      }
    }
    best_ = b;
    return b;
  }

  /// Drops the heap's stale events (`stale(e)`), out of line: the check is on every drop.
  template <class Stale>
  [[gnu::noinline]] void compact_now(Stale& stale) {
    size_ -= heap_.remove_if(stale);
    heap_size_ = heap_.size();
    compact_at_ = std::max(kMinCompact, 2 * heap_size_);
    best_ = kDirty;
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
  std::array<Event, kLanes> heads_{};  // each non-empty lane's first event, copied
  uint32_t nonempty_ = 0;              // bit c: lane c holds events
  std::array<uint64_t, kLanes> keys_{};
  Heap heap_;
  size_t compact_at_ = kMinCompact;
  size_t heap_size_ = 0;  // heap_.size(), kept: a vector of 48-byte events divides to give it
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

}  // namespace sgdsim
