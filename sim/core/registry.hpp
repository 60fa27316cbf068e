#pragma once
/// One registry of named components (collectives, importers, ...): each component registers
/// itself once during static initialization, next to its definition, and every other layer
/// asks the registry by name instead of comparing strings.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sgdsim {

/// Named components of type T (T has `std::string name() const`), each with optional aliases.
/// Names are listed in sorted order so every listing is the same on every machine, whatever
/// the order of static initialization.
template <class T>
class Registry {
 public:
  /// Adds a component; a name or alias registered twice is a programming error.
  void add(std::unique_ptr<T> component, const std::vector<std::string>& aliases = {}) {
    const std::string name = component->name();
    for (const std::string& a : aliases)
      if (by_name_.count(a) || !aliases_.emplace(a, name).second)
        throw std::logic_error("registered twice: " + a);
    if (aliases_.count(name) || !by_name_.emplace(name, std::move(component)).second)
      throw std::logic_error("registered twice: " + name);
  }
  /// The component called `name` (or one of its aliases), nullptr if there is none.
  const T* find(const std::string& name) const {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second.get();
    auto a = aliases_.find(name);
    return a == aliases_.end() ? nullptr : by_name_.at(a->second).get();
  }
  /// The registered names (not aliases), sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, _] : by_name_) out.push_back(n);
    return out;
  }
  /// Every component, in name order.
  std::vector<const T*> all() const {
    std::vector<const T*> out;
    for (const auto& [_, c] : by_name_) out.push_back(c.get());
    return out;
  }
  /// The alias -> name map.
  const std::map<std::string, std::string>& aliases() const { return aliases_; }

 private:
  std::map<std::string, std::unique_ptr<T>> by_name_;
  std::map<std::string, std::string> aliases_;
};

}  // namespace sgdsim
