#include "sim/scenario/scheme_types.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace sgdsim {

namespace {
// Built on first use: schemes register during static initialization, in any order.
std::map<std::string, SchemeType>& types() {
  static std::map<std::string, SchemeType> t;
  return t;
}
/// Appends a type's late options once (static initialization is over by the first look-up).
SchemeType& complete(SchemeType& type) {
  if (type.late_params) {
    for (SchemeParam& p : type.late_params()) type.params.push_back(std::move(p));
    type.late_params = nullptr;
  }
  return type;
}
}  // namespace

void register_scheme_type(SchemeType type) {
  const std::string name = type.name;
  if (!types().emplace(name, std::move(type)).second)
    throw std::logic_error("scheme type registered twice: " + name);
}

const SchemeType& scheme_type(const std::string& name) {
  auto it = types().find(name);
  if (it == types().end()) throw std::out_of_range("unknown scheme type: " + name);
  return complete(it->second);
}

std::vector<std::string> scheme_type_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : types()) names.push_back(n);
  return names;
}

std::vector<std::string> compressible_scheme_names() {
  std::vector<std::string> names;
  for (const auto& [n, t] : types())
    if (t.compressible) names.push_back(n);
  return names;
}

bool SchemeType::has_option(const std::string& key) const {
  return std::any_of(params.begin(), params.end(),
                     [&](const SchemeParam& p) { return p.param.key == key; });
}

std::vector<std::string> scheme_types_with_option(const std::string& key) {
  std::vector<std::string> names;
  for (auto& [name, t] : types())
    if (complete(t).has_option(key)) names.push_back(name);
  return names;
}

}  // namespace sgdsim
