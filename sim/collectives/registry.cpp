#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {
struct Registry {
  std::map<std::string, std::unique_ptr<Collective>> by_name;
  std::map<std::string, std::string> aliases;  // alias -> registered name
};
// Built on first use: registrations run during static initialization, in any order.
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

CollectiveRegistration::CollectiveRegistration(std::unique_ptr<Collective> c) {
  Registry& r = registry();
  const std::string name = c->name();
  for (const std::string& a : c->aliases())
    if (!r.aliases.emplace(a, name).second || r.by_name.count(a))
      throw std::logic_error("collective alias registered twice: " + a);
  if (r.aliases.count(name) || !r.by_name.emplace(name, std::move(c)).second)
    throw std::logic_error("collective registered twice: " + name);
}

std::string canonical_collective_name(const std::string& name) {
  const Registry& r = registry();
  if (r.by_name.count(name)) return name;
  auto a = r.aliases.find(name);
  if (a == r.aliases.end()) throw std::out_of_range("unknown collective algorithm: " + name);
  return a->second;
}

const Collective& collective_by_name(const std::string& name) {
  return *registry().by_name.at(canonical_collective_name(name));
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : registry().by_name) names.push_back(n);
  return names;
}

std::vector<std::string> collective_names_and_aliases() {
  std::vector<std::string> names = collective_names();
  for (const auto& [a, _] : registry().aliases) names.push_back(a);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> leader_algorithm_names() {
  std::vector<std::string> names;
  for (const std::string& n : collective_names_and_aliases())
    if (collective_by_name(n).runs_among_leaders()) names.push_back(n);
  return names;
}

CollectiveParam bind_param(Param param, double CollectiveGroup::*field) {
  return {std::move(param), [field](CollectiveGroup& g, const ParamValue& v) {
            if (v.text.empty()) g.*field = v.number;  // a word ("auto") keeps the group's
          }};
}

CollectiveParam bind_param(Param param, int CollectiveGroup::*field) {
  return {std::move(param), [field](CollectiveGroup& g, const ParamValue& v) {
            g.*field = static_cast<int>(v.number);
          }};
}

CollectiveParam bind_param(Param param, std::string CollectiveGroup::*field) {
  return {std::move(param),
          [field](CollectiveGroup& g, const ParamValue& v) { g.*field = v.text; }};
}

void apply_param(CollectiveGroup& group, const CollectiveParam& param, const ParamValue& value) {
  group.params.set(param.param.key, value);
  if (param.apply) param.apply(group, value);
}

std::vector<DeclaredCollectiveParam> collective_params() {
  std::vector<DeclaredCollectiveParam> out;
  for (const auto& [name, c] : registry().by_name)
    for (CollectiveParam& p : c->params()) {
      const auto seen = std::find_if(out.begin(), out.end(), [&](const DeclaredCollectiveParam& d) {
        return d.param.param.key == p.param.key;
      });
      if (seen == out.end())
        out.push_back({{name}, std::move(p)});
      else
        seen->owners.push_back(name);
    }
  return out;
}

std::string DeclaredCollectiveParam::users() const {
  std::string names;
  for (const std::string& o : owners) names += (names.empty() ? "\"" : ", \"") + o + "\"";
  return owners.size() == 1 ? "algorithm " + names + " uses it" : "algorithms " + names + " use it";
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

std::vector<std::vector<uint32_t>> Schedule::predecessors() const {
  std::vector<std::vector<uint32_t>> preds(steps.size());
  for (uint32_t i = 0; i < steps.size(); ++i)
    for (uint32_t k = succ_offsets[i]; k < succ_offsets[i + 1]; ++k) preds[succ[k]].push_back(i);
  return preds;
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

ScheduleBuilder::ScheduleBuilder(int ranks, int block)
    : ranks_(ranks),
      block_(block),
      last_send_(static_cast<size_t>(block > 0 ? block : ranks)),
      last_recv_(last_send_.size()),
      round_send_(last_send_.size()),
      round_recv_(last_send_.size()) {}

uint32_t ScheduleBuilder::add(int src, int dst, double bytes, double reduce_bytes,
                              std::vector<uint32_t> preds) {
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  const auto id = static_cast<uint32_t>(steps_.size());
  steps_.push_back({src, dst, bytes, reduce_bytes});
  preds_.push_back(std::move(preds));
  last_send_[key(src)] = id;
  last_recv_[key(dst)] = id;
  return id;
}

uint32_t ScheduleBuilder::add_mpi(int src, int dst, double bytes, double reduce_bytes) {
  std::vector<uint32_t> preds;
  for (const auto& p : {round_send_[key(src)], round_recv_[key(src)], round_recv_[key(dst)]})
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
