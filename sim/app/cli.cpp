#include "sim/app/cli.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/errors.hpp"
#include "sim/core/numbers.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {

namespace {

[[noreturn]] void bad_value(const std::string& opt, const std::string& expected,
                            const std::string& text) {
  throw InputError("usage: " + opt + ": expected " + expected + ", got \"" + text + "\"");
}

}  // namespace

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = options.find(name);
  return it == options.end() ? std::vector<std::string>{} : it->second;
}

Args parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& valued,
                const std::vector<std::string>& flags) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 && !(arg.size() == 2 && arg[0] == '-' && arg[1] != '-')) {
      a.positional.push_back(arg);
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    if (std::find(flags.begin(), flags.end(), arg) != flags.end()) {
      if (inline_value) throw InputError("usage: option " + arg + " takes no value");
      a.options[arg].push_back("");
    } else if (std::find(valued.begin(), valued.end(), arg) != valued.end()) {
      if (!inline_value) {
        if (i + 1 >= argv.size()) throw InputError("usage: option " + arg + " needs a value");
        value = argv[++i];
      }
      a.options[arg].push_back(value);
    } else {
      throw InputError("usage: unknown option " + arg + " (see --help)");
    }
  }
  return a;
}

Args parse_args(const std::vector<std::string>& argv, const std::vector<OptionSpec>& options) {
  std::vector<std::string> valued, flags;
  for (const OptionSpec& o : options) (o.value.empty() ? flags : valued).push_back(o.flag);
  return parse_args(argv, valued, flags);
}

std::string options_help(const std::vector<OptionSpec>& options, size_t column) {
  std::string out;
  const std::string indent(column, ' ');
  for (const OptionSpec& o : options) {
    if (o.help.empty()) continue;
    const std::string name = "  " + o.flag + (o.value.empty() ? "" : " " + o.value);
    out +=
        name.size() < column ? name + std::string(column - name.size(), ' ') : name + "\n" + indent;
    size_t start = 0;
    for (size_t nl; (nl = o.help.find('\n', start)) != std::string::npos; start = nl + 1)
      out += o.help.substr(start, nl - start) + "\n" + indent;
    out += o.help.substr(start) + "\n";
  }
  return out;
}

bool wants_help(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

int64_t parse_int_option(const std::string& opt, const std::string& text, int64_t min, int64_t max,
                         const std::string& expected) {
  const std::optional<int64_t> x = parse_integer(text);
  if (!x || *x < min || *x > max)
    bad_value(opt, expected.empty() ? fmt::format("an integer >= {}", min) : expected, text);
  return *x;
}

int64_t int_option(const Args& a, const std::string& opt, int64_t def, int64_t min, int64_t max,
                   const std::string& expected) {
  const std::optional<std::string> v = a.get(opt);
  return v ? parse_int_option(opt, *v, min, max, expected) : def;
}

double parse_size_option(const std::string& opt, const std::string& text,
                         const std::string& example) {
  std::optional<double> x = units::parse_size_bytes(text);
  if (!x) x = parse_plain_number(text);
  if (!x || !(*x >= 0)) bad_value(opt, "a size such as \"" + example + "\" or a byte count", text);
  return *x;
}

double parse_quantity_option(const std::string& opt, const std::string& text,
                             std::optional<double> (*parse)(std::string_view),
                             const std::string& expected) {
  const std::optional<double> x = parse(text);
  if (!x || !(*x >= 0)) bad_value(opt, expected, text);
  return *x;
}

double parse_time_option(const std::string& opt, const std::string& text,
                         const std::string& plain_example, const std::string& unit_example) {
  std::optional<double> x = parse_plain_number(text);
  if (!x) x = units::parse_time_s(text);
  if (!x || !(*x > 0) || *x > 1e9)
    bad_value(opt,
              "a time > 0 in seconds (\"" + plain_example + "\") or with a unit (\"" +
                  unit_example + "\")",
              text);
  return *x;
}

void check_cfg_options(const std::vector<std::string>& cfg) {
  for (const auto& c : cfg) {
    auto colon = c.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == c.size())
      throw InputError("--cfg", "",
                       "expected NAME:VALUE (e.g. network/TCP-gamma:0), got \"" + c + "\"");
  }
}

std::string fmt_time(double s) {
  if (s >= 1.0) return fmt::format("{:.4f} s", s);
  if (s >= 1e-3) return fmt::format("{:.4f} ms", s * 1e3);
  return fmt::format("{:.4f} us", s * 1e6);
}

}  // namespace sgdsim
