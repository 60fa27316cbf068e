// Collectives over subgroups of the ranks, run at once (HSDP's shard groups of s consecutive
// ranks and its replica groups of the ranks equal modulo s): the one-group schedule copied onto
// every group's ranks. The formula takes the node link as shared by the ranks of a node that
// sit in different replica groups (as hierarchical's two-dimensional ring does); it leaves out
// any other contention between the groups.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {
int block_of(const CollectiveGroup& g, int subgroup) {
  const int s = subgroup < 0 ? -subgroup : subgroup;
  if (s < 1 || g.ranks % s != 0)
    throw std::invalid_argument(fmt::format("subgroups of {} do not divide {} ranks", s, g.ranks));
  return s;
}
}  // namespace

CollectiveGroup subgroup_of(const CollectiveGroup& group, int subgroup) {
  if (subgroup == 0) return group;
  const int s = block_of(group, subgroup), d = std::max(1, group.ranks_per_node);
  CollectiveGroup g = group;
  if (subgroup > 0) {
    g.ranks = s;
    g.ranks_per_node = std::min(d, s);
  } else {
    g.ranks = group.ranks / s;
    g.ranks_per_node = s >= d || d % s != 0 ? 1 : d / s;
  }
  return g;
}

Schedule subgroup_schedule(const Collective& collective, const CollectiveGroup& group, double bytes,
                           int subgroup) {
  if (subgroup == 0) return collective.schedule(group, bytes);
  const int s = block_of(group, subgroup);
  const CollectiveGroup one = subgroup_of(group, subgroup);
  const Schedule inner = collective.schedule(one, bytes);
  const int copies = group.ranks / one.ranks;
  auto real = [&](int copy, int rank) { return subgroup > 0 ? copy * s + rank : copy + rank * s; };
  const auto preds = inner.predecessors();
  std::vector<std::vector<uint32_t>> all_preds;
  Schedule out;
  out.ranks = group.ranks;
  out.start_delay_s = inner.start_delay_s;
  // Step k of copy c at k * copies + c: the copies' steps interleave, so the order stays
  // topological and every copy starts at once.
  out.steps.resize(inner.steps.size() * copies);
  all_preds.resize(out.steps.size());
  for (size_t k = 0; k < inner.steps.size(); ++k)
    for (int c = 0; c < copies; ++c) {
      CommStep st = inner.steps[k];
      st.src = real(c, st.src);
      st.dst = real(c, st.dst);
      const size_t id = k * copies + c;
      out.steps[id] = st;
      for (uint32_t q : preds[k]) all_preds[id].push_back(static_cast<uint32_t>(q * copies + c));
    }
  out.set_dependencies(all_preds);
  return out;
}

double subgroup_formula_s(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const NetworkCost& cost, int subgroup) {
  if (subgroup >= 0) return collective.formula_s(subgroup_of(group, subgroup), bytes, cost);
  const int s = block_of(group, subgroup), d = std::max(1, group.ranks_per_node);
  NetworkCost shared = cost;
  shared.inter.beta_s_per_byte *= std::min(s, d);
  return collective.formula_s(subgroup_of(group, subgroup), bytes, shared);
}

double subgroup_message_count(const Collective& collective, const CollectiveGroup& group,
                              double bytes, int subgroup) {
  if (subgroup == 0) return collective.message_count(group, bytes);
  const CollectiveGroup one = subgroup_of(group, subgroup);
  return collective.message_count(one, bytes) * (group.ranks / one.ranks);
}

}  // namespace sgdsim
