#pragma once
/// The command line's one option parser, shared by every sgdsim subcommand: arguments split into
/// positionals and options, and the typed readers of option values (integers, sizes, quantities
/// with units, times), each failing with one "usage: OPTION: expected ..., got ..." line.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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

/// One option a subcommand declares: what parse_args accepts and what its --help lists.
struct OptionSpec {
  std::string flag;   ///< "--out" (or "-j")
  std::string value;  ///< the value's name in --help ("DIR"); empty: the option takes no value
  std::string help;   ///< its --help text, '\n' between lines; empty: not listed on its own
};

/// Whether `args` asks for help (--help or -h anywhere).
bool wants_help(const std::vector<std::string>& args);

/// Parses `argv`; `valued` lists options that take a value, `flags` those that do not.
/// Unknown options throw InputError("usage", ...).
Args parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& valued,
                const std::vector<std::string>& flags);

/// Parses `argv` against the declared `options` (repeated flags allowed: one option may be
/// listed twice in --help).
Args parse_args(const std::vector<std::string>& argv, const std::vector<OptionSpec>& options);

/// The options part of a --help text made from the declarations: "  FLAG VALUE", the help from
/// `column` on (on the next line when the name reaches it), its further lines at `column`.
std::string options_help(const std::vector<OptionSpec>& options, size_t column);

/// The one integer parser: `text` whole a decimal integer in [min, max], else InputError
/// "usage: OPT: expected EXPECTED, got "TEXT"" (EXPECTED by default "an integer >= MIN").
int64_t parse_int_option(const std::string& opt, const std::string& text, int64_t min,
                         int64_t max = INT64_MAX, const std::string& expected = "");

/// Option `opt` of `a` read by parse_int_option, or `def` when it is not given.
int64_t int_option(const Args& a, const std::string& opt, int64_t def, int64_t min,
                   int64_t max = INT64_MAX, const std::string& expected = "");

/// The one size parser: a size with a unit ("100MB", "1GiB") or a plain byte count ("4096",
/// "1e6"), finite and >= 0, else InputError "usage: OPT: expected a size such as "EXAMPLE" or a
/// byte count, got "TEXT"".
double parse_size_option(const std::string& opt, const std::string& text,
                         const std::string& example);

/// A quantity with a unit read by `parse` (units::parse_bandwidth_Bps, parse_time_s, ...),
/// >= 0, else InputError "usage: OPT: expected EXPECTED, got "TEXT"".
double parse_quantity_option(const std::string& opt, const std::string& text,
                             std::optional<double> (*parse)(std::string_view),
                             const std::string& expected);

/// A wall-clock time: seconds ("600", "2.5") or a time with a unit ("10min"), > 0 and at most
/// 1e9 s, else InputError "usage: OPT: expected a time > 0 in seconds ("PLAIN") or with a unit
/// ("WITH_UNIT"), got "TEXT"".
double parse_time_option(const std::string& opt, const std::string& text,
                         const std::string& plain_example = "600",
                         const std::string& unit_example = "10min");

/// Checks the values of --cfg (SimGrid options NAME:VALUE); throws InputError("--cfg", ...).
void check_cfg_options(const std::vector<std::string>& cfg);

/// A time as the subcommands' tables show it: "1.2345 s", "12.3456 ms" or "4.5600 us".
std::string fmt_time(double s);

}  // namespace sgdsim
