#pragma once
/// The registry of sgdsim's subcommands: each file of sim/app/*_cmd.cpp registers its command
/// (name, synopsis, summary, run) with one line, and `sgdsim --help` lists what is registered.
#include <string>
#include <vector>

#include "sim/core/registry.hpp"

namespace sgdsim {

/// One subcommand of the sgdsim command line.
struct Subcommand {
  std::string command;   ///< the word after "sgdsim" ("run")
  std::string synopsis;  ///< its line in `sgdsim --help` ("run SCENARIO.json")
  std::string summary;   ///< what it does, one line
  int help_position;     ///< rank in `sgdsim --help` (the workflow's order, not the names')
  int (*run)(const std::vector<std::string>& argv);  ///< runs it with the arguments after its name
  /// The registry key.
  std::string name() const { return command; }
};

/// Every registered subcommand.
Registry<Subcommand>& subcommand_registry();

/// Registers a subcommand during static initialization (one line next to its definition).
struct RegisterSubcommand {
  /// Adds `s` (and its `aliases`) to subcommand_registry().
  explicit RegisterSubcommand(const Subcommand& s, const std::vector<std::string>& aliases = {});
};

/// The "commands:" list of `sgdsim --help`: one line per subcommand, in help_position order.
std::string subcommand_list();

}  // namespace sgdsim
