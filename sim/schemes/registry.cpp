#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>

#include "sim/core/det_math.hpp"
#include "sim/core/rng.hpp"
#include "sim/schemes/common.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

namespace {
struct Entry {
  SchemeFactory make;
  UpdateRuleOf update_rule;
  SchemeTraits traits;
};
// Built on first use: schemes register during static initialization, in any order.
std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> r;
  return r;
}
const Entry& entry(const std::string& type) {
  auto it = registry().find(type);
  if (it == registry().end()) throw std::out_of_range("unknown scheme: " + type);
  return it->second;
}
}  // namespace

SchemeRegistration::SchemeRegistration(SchemeType type, SchemeFactory make,
                                       UpdateRuleOf update_rule, SchemeTraits traits) {
  if (!make || !update_rule)
    throw std::logic_error("scheme " + type.name + " needs a graph builder and an update rule");
  const std::string name = type.name;
  if (registry().count(name)) throw std::logic_error("scheme registered twice: " + name);
  register_scheme_type(std::move(type));
  registry().emplace(name, Entry{std::move(make), std::move(update_rule), std::move(traits)});
}

SchemeParam bind_scheme_param(Param param, int SchemeSpec::*field) {
  return {std::move(param), [field](Scenario& s, const ParamValue& v) {
            s.scheme.*field = static_cast<int>(v.number);
          }};
}

SchemeParam bind_scheme_param(Param param, std::string SchemeSpec::*field) {
  return {std::move(param),
          [field](Scenario& s, const ParamValue& v) { s.scheme.*field = v.text; }};
}

std::unique_ptr<Scheme> make_scheme(const SchemeContext& context) {
  check_compression(*context.scenario, *context.workload);
  return entry(context.scenario->scheme.type).make(context);
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : registry()) names.push_back(n);
  return names;
}

UpdateRule scheme_update_rule(const Scenario& scenario) {
  return entry(scenario.scheme.type).update_rule(scenario);
}

const SchemeTraits& scheme_traits(const Scenario& scenario) {
  return entry(scenario.scheme.type).traits;
}

MemoryBreakdown scheme_memory(const Scenario& scenario, const Workload& workload) {
  const auto& states = scheme_traits(scenario).memory;
  return memory_per_gpu(scenario, workload, states ? states(scenario) : ShardedStates{});
}

std::vector<PsKey> scheme_ps_keys(const Scenario& scenario, const Workload& workload) {
  const SchemeTraits& t = scheme_traits(scenario);
  return t.ps_keys ? t.ps_keys(scenario, workload) : std::vector<PsKey>{};
}

int scheme_dedicated_hosts(const Scenario& scenario) {
  const SchemeTraits& t = scheme_traits(scenario);
  return t.dedicated_hosts ? t.dedicated_hosts(scenario) : 0;
}

Fragment combine_groups(const Scheme& scheme, int iteration) {
  Fragment all;
  all.iteration = iteration;
  for (int g = 0; g < scheme.groups(); ++g) {
    // Groups have the same size every iteration, so one offset serves the cross edges too.
    Fragment part = scheme.build_group(iteration, g);
    const uint32_t offset = all.graph.num_tasks();
    for (uint32_t t = 0; t < part.graph.num_tasks(); ++t) all.graph.add_task(part.graph.task(t));
    for (auto [a, b] : part.graph.edges()) all.graph.add_edge(offset + a, offset + b);
    for (const auto& c : part.cross) all.cross.push_back({c.lag, offset + c.from, offset + c.to});
  }
  return all;
}

std::vector<Fragment> build_fragments(const Scheme& scheme, int iterations) {
  std::vector<Fragment> out;
  out.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) out.push_back(scheme.build(i));
  return out;
}

ComputeVariability::ComputeVariability(const VariabilitySpec& spec, uint64_t seed, int workers)
    : spec_(spec), seed_(seed), workers_(workers), straggler_(pick_stragglers(-1)) {
  // pick_stragglers picks none (in any iteration) when it would pick 0 or slow them by 1.
  const bool no_stragglers =
      std::lround(spec_.straggler_fraction * workers_) == 0 || spec_.straggler_slowdown == 1.0;
  uniform_ = spec_.compute_jitter_cv <= 0 && no_stragglers;
}

std::vector<bool> ComputeVariability::pick_stragglers(int iteration) const {
  // A seeded shuffle picks round(fraction * workers) stragglers (anew per iteration on redraw).
  const int workers = workers_;
  std::vector<bool> slow(static_cast<size_t>(workers), false);
  const int count = static_cast<int>(std::lround(spec_.straggler_fraction * workers));
  if (count == 0 || spec_.straggler_slowdown == 1.0) return slow;
  std::vector<int> order(static_cast<size_t>(workers));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed_, 0x5354524147ULL + static_cast<uint64_t>(iteration + 1));
  for (int i = workers - 1; i > 0; --i)
    std::swap(order[i], order[rng.next_u64() % static_cast<uint64_t>(i + 1)]);
  for (int i = 0; i < count; ++i) slow[order[i]] = true;
  return slow;
}

bool ComputeVariability::is_straggler(int worker, int iteration) const {
  if (!spec_.straggler_redraw) return straggler_[worker];
  if (redraw_iteration_ != iteration) {
    redrawn_ = pick_stragglers(iteration);
    redraw_iteration_ = iteration;
  }
  return redrawn_[worker];
}

double ComputeVariability::drawn_factor(int worker, int iteration, int slot) const {
  double f = is_straggler(worker, iteration) ? spec_.straggler_slowdown : 1.0;
  const double cv = spec_.compute_jitter_cv;
  if (cv > 0) {
    // Mean-one factors with the requested coefficient of variation; a stateless stream per
    // (worker, iteration, slot) keeps results independent of build order.
    Rng rng(seed_ ^ (static_cast<uint64_t>(worker) << 40) ^ (static_cast<uint64_t>(iteration) << 8),
            static_cast<uint64_t>(slot) + 1);
    if (spec_.jitter_distribution == "normal") {
      f *= std::max(0.05, 1.0 + cv * rng.normal());  // truncated: a task never takes < 5 %
    } else if (spec_.jitter_distribution == "uniform") {
      f *= 1.0 + cv * std::sqrt(3.0) * (2.0 * rng.uniform() - 1.0);
    } else {
      const double sigma2 = detmath::log1p(cv * cv);
      f *= detmath::exp(std::sqrt(sigma2) * rng.normal() - sigma2 / 2);
    }
  }
  return f;
}

}  // namespace sgdsim
