#pragma once
/// Command-line parsing helpers shared by the sgdsim subcommands.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sgdsim {

/// Parsed arguments of one subcommand: positionals, single-valued and repeated options, flags.
struct Args {
  std::vector<std::string> positional;                      ///< non-option arguments
  std::map<std::string, std::vector<std::string>> options;  ///< --name VALUE (repeatable)
  /// True if the option was given.
  bool has(const std::string& name) const { return options.count(name) != 0; }
  /// The last value of an option, if given.
  std::optional<std::string> get(const std::string& name) const;
  /// All values of a repeatable option.
  std::vector<std::string> all(const std::string& name) const;
};

/// Whether `args` asks for help (--help or -h anywhere).
bool wants_help(const std::vector<std::string>& args);

/// Parses `argv`; `valued` lists options that take a value, `flags` those that do not.
/// Unknown options throw InputError("usage", ...).
Args parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& valued,
                const std::vector<std::string>& flags);

}  // namespace sgdsim
