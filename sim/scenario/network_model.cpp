// The tables of network models, fidelities, topologies and flow symmetries: the one place
// their names are written (network_model.hpp says why). Left out: nothing beyond the names
// and their properties.
#include "sim/scenario/network_model.hpp"

#include <algorithm>
#include <utility>

namespace sgdsim {

namespace {

template <class E>
using Table = std::vector<std::pair<std::string, E>>;

const Table<NetworkModel>& network_models() {
  static const Table<NetworkModel> t = {{"links", NetworkModel::links},
                                        {"default", NetworkModel::lv08},
                                        {"ideal", NetworkModel::ideal},
                                        {"smpi", NetworkModel::smpi}};
  return t;
}

const Table<Fidelity>& fidelities() {
  static const Table<Fidelity> t = {{"flow", Fidelity::flow}, {"analytic", Fidelity::analytic}};
  return t;
}

const Table<Topology>& topologies() {
  static const Table<Topology> t = {{"star", Topology::star},
                                    {"fat_tree", Topology::fat_tree},
                                    {"torus", Topology::torus},
                                    {"dragonfly", Topology::dragonfly}};
  return t;
}

const Table<FlowSymmetry>& flow_symmetries() {
  static const Table<FlowSymmetry> t = {{"none", FlowSymmetry::none},
                                        {"rotation", FlowSymmetry::rotation}};
  return t;
}

template <class E>
std::vector<std::string> names_of(const Table<E>& t) {
  std::vector<std::string> out;
  for (const auto& [n, _] : t) out.push_back(n);
  return out;
}

template <class E>
std::optional<E> named(const Table<E>& t, const std::string& name) {
  for (const auto& [n, v] : t)
    if (n == name) return v;
  return std::nullopt;
}

template <class E>
const std::string& name_in(const Table<E>& t, E value) {
  for (const auto& [n, v] : t)
    if (v == value) return n;
  return t.front().first;  // unreachable: every enumerator is in its table
}

}  // namespace

std::vector<std::string> network_model_names() {
  return names_of(network_models());
}
std::optional<NetworkModel> network_model_named(const std::string& name) {
  return named(network_models(), name);
}
const std::string& network_model_name(NetworkModel model) {
  return name_in(network_models(), model);
}

std::vector<std::string> fidelity_names() {
  return names_of(fidelities());
}
std::optional<Fidelity> fidelity_named(const std::string& name) {
  return named(fidelities(), name);
}
const std::string& fidelity_name(Fidelity fidelity) {
  return name_in(fidelities(), fidelity);
}

std::vector<std::string> topology_names() {
  return names_of(topologies());
}
std::optional<Topology> topology_named(const std::string& name) {
  return named(topologies(), name);
}
const std::string& topology_name(Topology topology) {
  return name_in(topologies(), topology);
}

std::vector<std::string> flow_symmetry_names() {
  return names_of(flow_symmetries());
}
std::optional<FlowSymmetry> flow_symmetry_named(const std::string& name) {
  return named(flow_symmetries(), name);
}
const std::string& flow_symmetry_name(FlowSymmetry symmetry) {
  return name_in(flow_symmetries(), symmetry);
}

bool is_simgrid_cluster(Topology topology) {
  return topology == Topology::torus || topology == Topology::dragonfly;
}

bool applies_lv08_factors(NetworkModel model) {
  return model == NetworkModel::lv08 || model == NetworkModel::smpi;
}

std::string choices_from(const std::vector<std::string>& names, const std::string& first) {
  std::vector<std::string> order = names;
  auto it = std::find(order.begin(), order.end(), first);
  if (it != order.end()) std::rotate(order.begin(), it, order.end());
  std::string out;
  for (size_t i = 0; i < order.size(); ++i)
    out += (i == 0 ? "" : i + 1 == order.size() ? " or " : ", ") + order[i];
  return out;
}

}  // namespace sgdsim
