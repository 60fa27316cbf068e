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
}  // namespace

void register_scheme_type(SchemeType type) {
  const std::string name = type.name;
  if (!types().emplace(name, std::move(type)).second)
    throw std::logic_error("scheme type registered twice: " + name);
}

const SchemeType& scheme_type(const std::string& name) {
  auto it = types().find(name);
  if (it == types().end()) throw std::out_of_range("unknown scheme type: " + name);
  return it->second;
}

std::vector<std::string> scheme_type_names() {
  std::vector<std::string> names;
  for (const auto& [n, _] : types()) names.push_back(n);
  return names;
}

const SchemeType* scheme_type_with_option(const std::string& key) {
  for (const auto& [_, t] : types())
    if (std::find(t.option_keys.begin(), t.option_keys.end(), key) != t.option_keys.end())
      return &t;
  return nullptr;
}

}  // namespace sgdsim
