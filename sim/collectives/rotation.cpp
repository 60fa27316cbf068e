// Rotation symmetry of a schedule: a ring's messages fall into classes of P images, one per
// rank, that rotating the ranks by one maps onto each other. On a platform with the same
// symmetry (sim/engine checks it: identical routes r -> r+1 on links of their own) the images
// of a message start and end at the same instants, so simulating rank 0's messages alone gives
// every message's times, with the flows that share rank 0's links exactly those that share
// them in the full run (every message from rank 0 and to rank 1 is one of rank 0's). Classes
// are found in one pass in topological order: a message's class is the tuple of its size, its
// reduction, its copies and its predecessors' classes with their senders' offsets, so two
// messages share a class exactly when their ancestries are rotations of each other.
// With a period of m ranks (a node or a leaf of a generated platform, whose routes a rotation by
// m ranks maps onto each other by construction) a class is the orbit of a message under
// rotations by m: its key adds the sender's position in its block of m ranks and the offset to
// its receiver, any receiver is allowed, and the representatives are the messages of ranks 0 to
// m - 1 (sim/engine routes the ones leaving that block onto the block's own links).
// Leaves out: schedules whose messages skip ranks at period 1 (trees, recursive doubling,
// hierarchies, parameter servers), whose link sharing would differ between rank 0's links and
// the others'; at period m, schedules whose classes are not sent alike by every block.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {

/// Appends the bytes of `v` to `key`.
template <typename T>
void append(std::string& key, const T& v) {
  char raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  key.append(raw, sizeof(T));
}

/// Why message `m` cannot be a rotation image (empty when it can): at period 1 it must go to
/// the next rank, at any period stay inside the group and reduce on no server.
std::string out_of_shape(const CommStep& m, int p, int period) {
  const bool in_group = m.src >= 0 && m.src < p && m.dst >= 0 && m.dst < p;
  if (!in_group || (period == 1 && (m.dst - m.src + p) % p != 1))
    return "a message goes from rank " + std::to_string(m.src) + " to rank " +
           std::to_string(m.dst) + ", not to the next rank";
  if (m.server_reduce) return "a message reduces on a parameter server";
  return "";
}

/// The rotation class of every step (orbits under rotations by `period` ranks), or an empty
/// vector with `why` set.
std::vector<uint32_t> rotation_classes(const Schedule& s,
                                       const std::vector<std::vector<uint32_t>>& preds, int period,
                                       std::string& why) {
  const int p = s.ranks;
  std::vector<uint32_t> cls(s.steps.size());
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::pair<uint32_t, int>> parts;
  for (uint32_t k = 0; k < s.steps.size(); ++k) {
    const CommStep& m = s.steps[k];
    if (why = out_of_shape(m, p, period); !why.empty()) return {};
    parts.clear();
    for (uint32_t q : preds[k]) parts.emplace_back(cls[q], (s.steps[q].src - m.src + p) % p);
    std::sort(parts.begin(), parts.end());
    std::string key;
    append(key, m.bytes);
    append(key, m.reduce_bytes);
    append(key, m.lockstep);
    if (period > 1) append(key, m.src % period), append(key, (m.dst - m.src + p) % p);
    for (const auto& [c, offset] : parts) append(key, c), append(key, offset);
    cls[k] = ids.try_emplace(std::move(key), static_cast<uint32_t>(ids.size())).first->second;
  }
  // A rotation maps each class onto itself only if every block sends as many of its messages
  // (NCCL channels are copies: then several per rank, which end together).
  const int blocks = p / period;
  std::vector<std::vector<uint32_t>> per_block(ids.size(), std::vector<uint32_t>(blocks, 0));
  for (uint32_t k = 0; k < s.steps.size(); ++k) ++per_block[cls[k]][s.steps[k].src / period];
  for (const auto& counts : per_block)
    if (std::count(counts.begin(), counts.end(), counts[0]) != blocks) {
      why = period == 1 ? "a class of messages is not sent as often by every rank"
                        : "a class of messages is not sent as often by every block of " +
                              std::to_string(period) + " ranks";
      return {};
    }
  return cls;
}

}  // namespace

std::optional<Schedule> rotation_reduced(const Schedule& s, int period, std::string* why) {
  std::string reason;
  if (s.ranks < 2 || s.steps.empty()) reason = "fewer than 2 ranks or no message";
  if (reason.empty() && (period < 1 || s.ranks % period != 0))
    reason = "the ranks are not whole blocks of " + std::to_string(period);
  const auto preds = s.predecessors();
  const std::vector<uint32_t> cls =
      reason.empty() ? rotation_classes(s, preds, period, reason) : std::vector<uint32_t>{};
  if (cls.empty()) {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  }
  // Class ids grow along every edge (a class is named after its predecessors'), so listing
  // the representatives by class keeps a topological order. A representative waits for every
  // representative of its predecessors' classes (they end together).
  std::vector<uint32_t> reps;
  for (uint32_t k = 0; k < s.steps.size(); ++k)
    if (s.steps[k].src < period) reps.push_back(k);
  std::stable_sort(reps.begin(), reps.end(),
                   [&](uint32_t a, uint32_t b) { return cls[a] < cls[b]; });
  const uint32_t classes = *std::max_element(cls.begin(), cls.end()) + 1;
  std::vector<std::vector<uint32_t>> reps_of(classes);
  Schedule r;
  r.ranks = s.ranks;
  r.start_delay_s = s.start_delay_s;
  std::vector<std::vector<uint32_t>> rpreds(reps.size());
  for (uint32_t i = 0; i < reps.size(); ++i) {
    r.steps.push_back(s.steps[reps[i]]);
    for (uint32_t q : preds[reps[i]])
      for (uint32_t j : reps_of[cls[q]]) rpreds[i].push_back(j);
    std::sort(rpreds[i].begin(), rpreds[i].end());
    rpreds[i].erase(std::unique(rpreds[i].begin(), rpreds[i].end()), rpreds[i].end());
    reps_of[cls[reps[i]]].push_back(i);
  }
  r.set_dependencies(rpreds);
  return r;
}

std::optional<Schedule> rotation_reduced(const Schedule& s, std::string* why) {
  return rotation_reduced(s, 1, why);
}

}  // namespace sgdsim
