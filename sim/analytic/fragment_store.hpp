#pragma once
/// The analytic scheduler's fragments (sim/analytic/scheduler.cpp): building each group's
/// iterations just in time (or repeating a retired fragment of the same tasks,
/// Scheme::repeats_from), counting their tasks' predecessors, linking cross-iteration edges,
/// readying the tasks that wait for nothing and retiring fragments once done. Internal to
/// sim/analytic.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/analytic/event_queues.hpp"
#include "sim/analytic/fragment_template.hpp"
#include "sim/analytic/scheduler_state.hpp"

namespace sgdsim::sched {

/// A group's live fragments, oldest first, with its oldest live and next unbuilt iterations, in
/// one cache line: per worker (async) every fragment built or retired reads and writes them,
/// 10^4 groups' apart, and a ring of its own plus two arrays cost three lines (two of them one
/// after the other). Up to kInline fragments inline; beyond, all of them in a ring.
struct alignas(64) GroupFragments {
  static constexpr uint32_t kInline = 4;
  std::array<Live*, kInline> slots{};      // the inline ring
  std::unique_ptr<RingQueue<Live*>> more;  // once more than kInline were live
  uint32_t head = 0, count = 0;            // the inline ring's
  int base = 0;                            // oldest live iteration
  int built = 0;                           // next unbuilt iteration

  /// No fragment is live.
  bool empty() const { return more ? more->empty() : count == 0; }
  /// The `i`-th oldest.
  Live* operator[](size_t i) const { return more ? (*more)[i] : slots[(head + i) % kInline]; }
  Live* front() const { return (*this)[0]; }
  Live* back() const { return more ? more->back() : (*this)[count - 1]; }
  void push_back(Live* l) {
    if (!more && count == kInline) {
      auto ring = std::make_unique<RingQueue<Live*>>();
      for (uint32_t i = 0; i < count; ++i) ring->push_back((*this)[i]);
      more = std::move(ring);
    }
    if (more) {
      more->push_back(l);
      return;
    }
    slots[(head + count) % kInline] = l;
    ++count;
  }
  void pop_front() {
    if (more) {
      more->pop_front();
      return;
    }
    head = (head + 1) % kInline;
    --count;
  }
};
static_assert(sizeof(GroupFragments) == 64);

/// The live fragments of every group (`kPerWorker`: a group per worker, async), at fixed
/// addresses in a pool; tasks they ready go to the scheduler's ready queue.
template <bool kPerWorker>
class FragmentStore : private FragmentLayout<kPerWorker> {
  using Layout = FragmentLayout<kPerWorker>;
  using Layout::st_of;
  using Layout::task_of;

 public:
  /// Fragments of `scheme`'s groups up to `iterations`; readied tasks go to `ready`, messages'
  /// durations (per worker) come from `routes` on `costs`.
  FragmentStore(const Scheme& scheme, int iterations, TaskObserver& observer, RingQueue<Ref>& ready,
                RouteCache& routes, const AnalyticCosts& costs)
      : scheme_(scheme),
        iterations_(iterations),
        observer_(observer),
        ready_(ready),
        routes_(routes),
        costs_(costs),
        groups_(scheme.groups()),
        repeats_from_(scheme.repeats_from()) {
    live_.resize(static_cast<size_t>(groups_));
  }

  /// Throws if a fragment is still live (the run ended with tasks that never became ready).
  void check_all_retired() const {
    for (int g = 0; g < groups_; ++g)
      if (!live_[g].empty())
        throw std::logic_error(fmt::format("simulation stalled in iteration {}", live_[g].base));
  }
  /// Iterations built in every group.
  int iterations_built() const {
    int done = iterations_;
    for (int g = 0; g < groups_; ++g) done = std::min(done, live_[g].built);
    return done;
  }

  /// Builds group `g` up to `iteration` (unless the observer stops the run).
  void ensure_built(int g, int iteration) {
    const int& built = live_[g].built;
    if (built > iteration || built >= iterations_) return;  // nothing to build
    if (observer_.should_stop()) return;
    while (built <= iteration && built < iterations_) {
      const Live* prev = live_[g].empty() ? nullptr : live_[g].back();
      const int next = built;
      if constexpr (kPerWorker) {
        if (repeats_from_ >= 0 && next >= repeats_from_ && prev && prev->iteration == next - 1) {
          add_repeat(*prev);
          continue;
        }
      } else if (held_ && next >= repeats_from_) {
        add_held(g, next);
        continue;
      }
      add_fragment(scheme_.build_group(next, g), g);
    }
  }

  /// Builds the iteration after `l`'s in its group; true once done or none is due (later calls
  /// would do nothing: starts then skip the group's build count, a miss at 10^4 groups).
  bool build_after(const Live& l) {
    ensure_built(l.group, l.iteration + 1);
    const int built = live_[l.group].built;
    return built > l.iteration + 1 || built >= iterations_;
  }

  /// Retires group `g`'s oldest fragments while they are done.
  void retire_done(int g) {
    auto& d = live_[static_cast<size_t>(g)];
    while (!d.empty() && d.front()->remaining == 0) {
      Live* done = d.front();
      // Per worker no fragment is read in place (its flag is a cache line away).
      if constexpr (!kPerWorker)
        if (done->in_place) retire_in_place(std::move(done->in_place));
      free_live_.push_back(done);
      d.pop_front();
      ++d.base;
    }
  }

 private:
  // Fragments are keyed by fid = iteration * groups + group, as in the SimGrid runner.
  Live& live(int fid) {
    const auto& d = live_[static_cast<size_t>(fid % groups_)];
    return *d[static_cast<size_t>(fid / groups_ - d.base)];
  }

  /// A fragment to fill: a retired one, or a new one.
  Live* new_live() {
    if (free_live_.empty()) return &live_pool_.emplace_back();
    Live* l = free_live_.back();
    free_live_.pop_back();
    return l;
  }

  /// Per worker: adds the group's next fragment as a repeat of its previous one `prev`
  /// (Scheme::repeats_from) instead of building it: the same template, fresh states.
  void add_repeat(const Live& prev) {
    const int g = prev.group;
    live_[g].push_back(new_live());
    Live& l = *live_[g].back();
    l.renew(g, prev.iteration + 1, 0);
    const Template* tp = prev.tmpl;
    const bool own = prev.runs_own || !tp->uniform_iteration;
    if (own) {
      // A template of its own (prev's goes with prev), every task of its iteration: a repeat
      // runs all of them in the next.
      if (!l.own) l.own = std::make_unique<Template>();
      *l.own = *tp;
      for (Task& task : l.own->tasks) task.iteration = l.own->iteration;
      l.own->uniform_iteration = true;
      tp = l.own.get();
    }
    if (prev.own_durations) l.durations = prev.durations;
    start_fragment(l, *tp, own, prev.own_durations);
  }

  /// Per worker: makes `l` (renewed) run template `tp` (`own`: its own; `own_durations`: with
  /// l.durations): fresh states, its cross edges linked, the tasks waiting for nothing readied,
  /// its iteration built.
  void start_fragment(Live& l, const Template& tp, bool own, bool own_durations) {
    l.remaining = static_cast<uint32_t>(tp.tasks.size());
    use_template(l, tp, own, own_durations);
    for (const auto& c : tp.cross) link_cross(l, c, false);
    for (uint32_t t = 0; t < l.remaining; ++t)
      if (st_of(l, t).pending == 0) ready_.push_back({&l, t});
    live_[l.group].built = l.iteration + 1;
  }

  /// Per worker: the template of fragment `f` of group `group` (added as `l`, after `prev`, its
  /// group's previous fragment, or null): a shared one it equals, else a new one (shared while
  /// the registry has room, else `l`'s own). It is made in a scratch template, not in `l`:
  /// 10^5 fragments' templates of their own would spread their states over the heap.
  /// `*own_template`: the template is `l`'s own; `*own_durations`: it is shared but for its
  /// compute durations, which are in l.durations.
  const Template& template_of(Live& l, const Fragment& f, int group, const Live* prev,
                              bool* own_template, bool* own_durations) {
    Template& own = building_;
    const uint32_t n = f.graph.num_tasks();
    own.base = group;
    own.iteration = f.iteration;
    own.uniform_iteration = true;
    own.tasks.resize(n);
    for (uint32_t t = 0; t < n; ++t) {
      own.tasks[t] = f.graph.task(t);
      own.uniform_iteration = own.uniform_iteration && own.tasks[t].iteration == f.iteration;
    }
    const std::vector<uint32_t>*offsets, *targets;
    f.graph.successor_lists_view(&offsets, &targets);
    own.offsets.assign(offsets->begin(), offsets->end());
    own.targets.assign(targets->begin(), targets->end());
    own.cross.assign(f.cross.begin(), f.cross.end());
    own.message_s.assign(n, 0.0);
    lookups_.clear();
    for (uint32_t t = 0; t < n; ++t) {
      const Task& task = own.tasks[t];
      if (is_message(task) && !repeat_message(own, prev, t)) {
        routes_.prefetch(task.src, task.dst);
        lookups_.push_back(t);
      }
    }
    // After a pass: the route table's slots were asked for in the first.
    sched::look_up_messages(own, lookups_, routes_, costs_.route);
    make_fresh_states(own);
    *own_template = false;
    *own_durations = false;
    if (const Template* tp = templates_.find(own)) return *tp;
    if (n <= Live::kInlineStates) {
      if (const Template* tp = templates_.find(own, true)) {
        for (uint32_t t = 0; t < n; ++t) l.durations[t] = own.tasks[t].duration_s;
        *own_durations = true;
        return *tp;
      }
    }
    if (const Template* tp = templates_.add(own)) return *tp;
    *own_template = true;
    // Its own: the scratch's arrays move to `l`, and `l`'s old ones (its retired use's) become
    // the scratch (jitter builds every fragment: no copy, no fresh arrays).
    if (!l.own) l.own = std::make_unique<Template>();
    std::swap(*l.own, own);
    return *l.own;
  }

  /// Counts the predecessors of `l`'s tasks in their states (the edges to `targets`, then the
  /// cross edges `cross`) and readies those waiting for none.
  void count_in_states(Live& l, const std::vector<uint32_t>& targets,
                       const std::vector<CrossEdge>& cross) {
    for (uint32_t target : targets) ++st_of(l, target).pending;
    for (const auto& c : cross) link_cross(l, c, false);
    for (uint32_t t = 0; t < l.remaining; ++t)
      if (st_of(l, t).pending == 0) ready_.push_back({&l, t});
  }

  void add_fragment(Fragment f, int group) {
    const uint32_t n = f.graph.num_tasks();
    const int iteration = f.iteration;
    const Live* prev = live_[group].empty() ? nullptr : live_[group].back();
    live_[group].push_back(new_live());
    Live& l = *live_[group].back();
    l.renew(group, iteration, n);
    if constexpr (kPerWorker) {
      bool own = false, own_durations = false;
      const Template& tp = template_of(l, f, group, prev, &own, &own_durations);
      start_fragment(l, tp, own, own_durations);
    } else {
      const std::vector<uint32_t>*offsets, *targets;
      // Brace initialisation: make_unique of an aggregate needs C++20's parenthesised
      // aggregate init, which clang 14 lacks.
      l.in_place.reset(new InPlace{std::move(f), std::move(spare_states_)});
      point_at_in_place(l, &offsets, &targets);
      init_states(l, *offsets, *targets, l.in_place->f.cross);
    }
  }

  /// One group: adds the group's fragment of `iteration` as the held one (a retired fragment
  /// of the same tasks, Scheme::repeats_from), its tasks as they are and its states anew. At
  /// 10^5 workers building the fragment again cost 15 % of a sync run.
  void add_held(int group, int iteration) {
    live_[group].push_back(new_live());
    Live& l = *live_[group].back();
    l.in_place = std::move(held_);
    const Fragment& f = l.in_place->f;
    l.renew(group, iteration, f.graph.num_tasks());
    l.iteration_shift = iteration - f.iteration;
    const std::vector<uint32_t>*offsets, *targets;
    point_at_in_place(l, &offsets, &targets);
    init_states(l, *offsets, *targets, f.cross);
  }

  /// One group: points `l`'s arrays at its fragment read in place (its tasks and lists do not
  /// move while it lives: its graph is not changed any more) and its states, one per task.
  void point_at_in_place(Live& l, const std::vector<uint32_t>** offsets,
                         const std::vector<uint32_t>** targets) {
    InPlace& p = *l.in_place;
    const uint32_t n = p.f.graph.num_tasks();
    p.f.graph.successor_lists_view(offsets, targets);
    p.states.resize(n);
    l.tasks = reinterpret_cast<const std::byte*>(n > 0 ? &p.f.graph.task(0) : nullptr);
    l.states = reinterpret_cast<std::byte*>(p.states.data());
    l.succ = (*targets)->data();
  }

  /// One group: writes the states of the tasks of `l` (just added) from its successor lists
  /// `offsets` / `targets` and its cross edges `cross`, readies those waiting for nothing and
  /// marks its iteration built.
  void init_states(Live& l, const std::vector<uint32_t>& offsets,
                   const std::vector<uint32_t>& targets, const std::vector<CrossEdge>& cross) {
    const uint32_t n = l.remaining;
    // The predecessors of each task are counted first in an array of their own (in-fragment
    // edges, then the cross edges whose source is still pending), so that the states are
    // written in one pass that also readies the tasks waiting for none: at 10^5 workers a
    // fragment's states are larger than the caches, and a pass to count and another to find
    // the ready ones read them from memory again. With a cross edge of lag 0 (within the
    // fragment: it needs its source's state), the states are written first and counted in
    // place.
    bool counted = true;
    for (const auto& c : cross) counted = counted && c.lag > 0;
    if (counted) {
      pending_.assign(n, 0);
      for (uint32_t target : targets) ++pending_[target];
      for (const auto& c : cross) link_cross(l, c, true);
    }
    for (uint32_t t = 0; t < n; ++t) {  // one pass over the states
      TaskState& st = st_of(l, t);
      st = TaskState{};
      st.set_successors(targets.data(), offsets[t], offsets[t + 1]);
      if (counted) {
        st.pending = pending_[t];
        if (st.pending == 0) ready_.push_back({&l, t});
      }
    }
    if (!counted) count_in_states(l, targets, cross);
    live_[l.group].built = l.iteration + 1;
  }

  /// Makes task `c.to` of the fragment `l` being added wait for task `c.from` of its group's
  /// fragment `c.lag` iterations back, unless that one is retired or done: counted in
  /// pending_ (`counted`: before `l`'s states are written) or in the state.
  void link_cross(Live& l, const CrossEdge& c, bool counted) {
    const int src = l.iteration - c.lag;
    if (src < live_[l.group].base || src < 0) return;  // retired: already done
    Live& s = live(src * groups_ + l.group);
    auto& from = st_of(s, c.from);
    if (from.done) return;
    if (counted)
      ++pending_[c.to];
    else
      ++st_of(l, c.to).pending;
    Layout::append_cross(s, from, s.add_cross({&l, c.to, kNone}));
  }

  /// One group: keeps a retired fragment `p` for a later iteration if the group's fragments
  /// repeat from its iteration on (its states' array goes spare either way).
  void retire_in_place(std::unique_ptr<InPlace> p) {
    const bool repeats = repeats_from_ >= 0 && p->f.iteration >= repeats_from_ - 1;
    if (!repeats) {
      spare_states_ = std::move(p->states);
      return;
    }
    if (held_) spare_states_ = std::move(held_->states);
    held_ = std::move(p);
  }

  const Scheme& scheme_;
  int iterations_;
  TaskObserver& observer_;
  RingQueue<Ref>& ready_;
  RouteCache& routes_;
  const AnalyticCosts& costs_;
  int groups_ = 1;
  int repeats_from_ = -1;  // Scheme::repeats_from
  // Fragments live at fixed addresses in a pool; a retired one (with its arrays) is reused by
  // the next fragment built, most recently retired first (its memory is likely in a cache).
  std::deque<Live> live_pool_;
  std::vector<Live*> free_live_;
  std::vector<GroupFragments> live_;     // per group, oldest iteration first
  std::vector<TaskState> spare_states_;  // of the last retired fragment, for the next one
  std::unique_ptr<InPlace> held_;        // one group: a retired fragment that repeats
  TemplateRegistry templates_;           // per worker: the fragments' shared tasks
  Template building_;                    // per worker: the template of the fragment being added
  std::vector<uint32_t> lookups_;        // messages of the fragment being added to look up
  std::vector<uint32_t> pending_;        // predecessors of each task of the fragment being added
};

}  // namespace sgdsim::sched
