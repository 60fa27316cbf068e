#include "sim/app/subcommand.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace sgdsim {

Registry<Subcommand>& subcommand_registry() {
  static Registry<Subcommand> r;
  return r;
}

RegisterSubcommand::RegisterSubcommand(const Subcommand& s,
                                       const std::vector<std::string>& aliases) {
  subcommand_registry().add(std::make_unique<Subcommand>(s), aliases);
}

std::string subcommand_list() {
  std::vector<const Subcommand*> all = subcommand_registry().all();
  std::stable_sort(all.begin(), all.end(), [](const Subcommand* a, const Subcommand* b) {
    return a->help_position < b->help_position;
  });
  std::string out;
  for (const Subcommand* s : all) out += fmt::format("  {:<25}{}\n", s->synopsis, s->summary);
  return out;
}

}  // namespace sgdsim
