#pragma once
/// Per worker (async): matching a built fragment to a Template (scheduler_state.hpp) shared by
/// every worker whose fragment is the same up to its worker index (read through `instantiate`),
/// the registry of templates, and the messages' durations and fresh states a template is made
/// with. Internal to sim/analytic.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/analytic/scheduler_state.hpp"

namespace sgdsim::sched {

/// Per worker, once `l` is renewed: makes it run the tasks of template `tp` (`own`: its own
/// template; `own_durations`: with the compute durations in l.durations), with fresh states.
inline void use_template(Live& l, const Template& tp, bool own, bool own_durations) {
  l.tmpl = &tp;
  l.runs_own = own;
  l.own_durations = own_durations;
  l.tasks = reinterpret_cast<const std::byte*>(tp.tasks.data());
  l.succ = tp.targets.data();
  l.base = tp.base;
  l.iteration_shift = l.iteration - tp.iteration;
  l.set_states(tp.states);
}

/// True if `a` and `b` are the same task, field by field (durations and sizes bit for bit;
/// `any_compute_duration`: a compute task's duration may differ).
inline bool same_task(const Task& a, const Task& b, bool any_compute_duration = false) {
  auto bits = [](double x) { return std::bit_cast<uint64_t>(x); };
  const bool duration = (any_compute_duration && a.kind != TaskKind::comm) ||
                        bits(a.duration_s) == bits(b.duration_s);
  return a.kind == b.kind && a.worker == b.worker && a.iteration == b.iteration &&
         a.index == b.index && duration && bits(a.bytes) == bits(b.bytes) && a.src == b.src &&
         a.dst == b.dst && a.queue == b.queue && a.pull == b.pull && a.op == b.op &&
         a.subgroup == b.subgroup;
}

/// True if the fragment `f` (built for group f.base) is template `tp` read for f.base, shifted
/// to f's iteration: every task, message duration (bit for bit), successor list and cross edge
/// the same (`any_compute_duration`: but the compute tasks' durations).
inline bool matches(const Template& tp, const Template& f, bool any_compute_duration = false) {
  const size_t n = f.tasks.size();
  if (tp.tasks.size() != n || tp.offsets != f.offsets || tp.targets != f.targets ||
      tp.cross.size() != f.cross.size())
    return false;
  for (size_t k = 0; k < f.cross.size(); ++k) {
    const CrossEdge &a = tp.cross[k], &b = f.cross[k];
    if (a.lag != b.lag || a.from != b.from || a.to != b.to) return false;
  }
  const int shift = f.iteration - tp.iteration;
  for (size_t t = 0; t < n; ++t) {
    if (std::bit_cast<uint64_t>(tp.message_s[t]) != std::bit_cast<uint64_t>(f.message_s[t]))
      return false;
    if (!same_task(instantiate(tp.tasks[t], tp.base, f.base, shift), f.tasks[t],
                   any_compute_duration))
      return false;
  }
  return true;
}

/// The templates made so far, at fixed addresses. A built fragment is looked for among them
/// (async: a generic worker's, and one per worker that hosts a co-located server; any
/// iteration's, shifted to its own), the most recently used first; at most kMax are kept.
/// Fragments whose compute durations are drawn (jitter, stragglers) share a template all the
/// same, keeping their durations beside their states (Live::durations).
class TemplateRegistry {
 public:
  /// The template `f` equals for its group (`any_compute_duration`: but its compute
  /// durations), or null.
  const Template* find(const Template& f, bool any_compute_duration = false) {
    if (recent_ != nullptr && matches(*recent_, f, any_compute_duration)) return recent_;
    for (auto it = templates_.rbegin(); it != templates_.rend(); ++it)
      if (&*it != recent_ && matches(*it, f, any_compute_duration)) return recent_ = &*it;
    return nullptr;
  }
  /// Keeps a copy of `f` as a template; null once kMax are kept.
  const Template* add(const Template& f) {
    if (templates_.size() >= kMax) return nullptr;
    return recent_ = &templates_.emplace_back(f);
  }

 private:
  static constexpr size_t kMax = 32;
  std::deque<Template> templates_;
  const Template* recent_ = nullptr;
};

// Each message's duration (alpha + n beta of its route). A group's fragments repeat their
// messages (every iteration a worker's pushes and pulls): one sent by the task at the same index
// of the group's previous fragment between the same hosts with the same size takes its duration
// from there, since the route table is larger than the caches at 10^4 workers. The other
// lookups are asked for together, so that they wait for memory at once.

/// Copies the duration of message `t` of `f` from the group's previous fragment `prev` if that
/// sends the same message; false if not.
inline bool repeat_message(Template& f, const Live* prev, uint32_t t) {
  if (prev == nullptr || t >= prev->tmpl->tasks.size()) return false;
  const Task& a = f.tasks[t];
  const Task b = FragmentLayout<true>::task_of(*prev, t);
  if (!is_message(b) || a.src != b.src || a.dst != b.dst ||
      std::bit_cast<uint64_t>(a.bytes) != std::bit_cast<uint64_t>(b.bytes))
    return false;
  f.message_s[t] = prev->tmpl->message_s[t];
  return true;
}

/// Sets the durations of the messages `lookups` of `f` from the route table `routes`
/// (`route(src, dst)` the first time a pair is asked for).
template <class Route>
void look_up_messages(Template& f, const std::vector<uint32_t>& lookups, RouteCache& routes,
                      const Route& route) {
  for (uint32_t t : lookups) {
    const Task& task = f.tasks[t];
    const AlphaBeta& ab = routes.get(task.src, task.dst, route);
    f.message_s[t] = ab.alpha_s + task.bytes * ab.beta_s_per_byte;
  }
}

/// Writes the fresh states of `f` from its successor lists (predecessors within the fragment
/// counted) and which tasks their one predecessor readies alone (Template::solo).
inline void make_fresh_states(Template& f) {
  f.states.assign(f.tasks.size(), WorkerState{});
  for (uint32_t target : f.targets) ++f.states[target].pending;
  f.solo.assign(f.tasks.size(), 0);
  for (size_t t = 0; t < f.tasks.size(); ++t) f.solo[t] = f.states[t].pending == 1 ? 1 : 0;
  for (const CrossEdge& c : f.cross) f.solo[c.to] = 0;
}

}  // namespace sgdsim::sched
