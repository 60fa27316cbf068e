#include "sim/app/cli.hpp"

#include <algorithm>

#include "sim/core/errors.hpp"

namespace sgdsim {

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

bool wants_help(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

}  // namespace sgdsim
