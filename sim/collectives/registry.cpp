#include "sim/collectives/registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {
const std::map<std::string, std::unique_ptr<Collective>>& registry() {
  static const auto r = [] {
    std::map<std::string, std::unique_ptr<Collective>> m;
    auto add = [&m](std::unique_ptr<Collective> c) { m.emplace(c->name(), std::move(c)); };
    add(make_ring());
    add(make_recursive_halving_doubling());
    add(make_recursive_doubling());
    add(make_tree());
    add(make_hierarchical());
    add(make_ps());
    add(make_byteps());
    add(make_auto());
    add(make_double_binary_tree());
    add(make_nccl());
    add(make_nccl_tuner());
    return m;
  }();
  return r;
}
}  // namespace

const Collective& collective_by_name(const std::string& name) {
  auto it = registry().find(name == "rhd" ? "recursive_halving_doubling" : name);
  if (it == registry().end()) throw std::out_of_range("unknown collective algorithm: " + name);
  return *it->second;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : registry()) names.push_back(n);
  return names;
}

void Schedule::set_dependencies(const std::vector<std::vector<uint32_t>>& preds) {
  const size_t n = preds.size();
  pred_count.assign(n, 0);
  succ_offsets.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    pred_count[i] = static_cast<uint32_t>(preds[i].size());
    for (uint32_t p : preds[i]) ++succ_offsets[p + 1];
  }
  for (size_t i = 0; i < n; ++i) succ_offsets[i + 1] += succ_offsets[i];
  succ.assign(succ_offsets[n], 0);
  std::vector<uint32_t> fill(succ_offsets.begin(), succ_offsets.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t p : preds[i]) succ[fill[p]++] = static_cast<uint32_t>(i);
}

double schedule_time_s(const Schedule& s, const std::function<double(const CommStep&)>& cost) {
  // Steps are stored in a topological order (every predecessor has a lower index).
  std::vector<double> start(s.steps.size(), s.start_delay_s);
  double end = s.steps.empty() ? 0.0 : s.start_delay_s;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    double finish = start[i] + cost(s.steps[i]);
    end = std::max(end, finish);
    for (uint32_t k = s.succ_offsets[i]; k < s.succ_offsets[i + 1]; ++k)
      start[s.succ[k]] = std::max(start[s.succ[k]], finish);
  }
  return end;
}

ScheduleBuilder::ScheduleBuilder(int ranks)
    : ranks_(ranks),
      last_send_(static_cast<size_t>(ranks)),
      last_recv_(static_cast<size_t>(ranks)),
      round_send_(static_cast<size_t>(ranks)),
      round_recv_(static_cast<size_t>(ranks)) {}

uint32_t ScheduleBuilder::add(int src, int dst, double bytes, double reduce_bytes,
                              std::vector<uint32_t> preds) {
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  const auto id = static_cast<uint32_t>(steps_.size());
  steps_.push_back({src, dst, bytes, reduce_bytes});
  preds_.push_back(std::move(preds));
  last_send_[src] = id;
  last_recv_[dst] = id;
  return id;
}

uint32_t ScheduleBuilder::add_mpi(int src, int dst, double bytes, double reduce_bytes) {
  std::vector<uint32_t> preds;
  for (const auto& p : {round_send_[src], round_recv_[src], round_recv_[dst]})
    if (p) preds.push_back(*p);
  return add(src, dst, bytes, reduce_bytes, std::move(preds));
}

Schedule ScheduleBuilder::build() {
  Schedule s;
  s.ranks = ranks_;
  s.steps = std::move(steps_);
  s.set_dependencies(preds_);
  return s;
}

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

int floor_pow2(int p) {
  int v = 1;
  while (v * 2 <= p) v *= 2;
  return v;
}

}  // namespace sgdsim
