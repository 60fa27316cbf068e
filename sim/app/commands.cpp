// sgdsim's command line: `sgdsim --help` and the dispatch of a subcommand to its registration
// (each subcommand registers itself in its own file, sim/app/*_cmd.cpp). Shared by the sgdsim
// executable and the Python module, which calls dispatch() in a forked child of the interpreter.
#include "sim/app/commands.hpp"

#include <iostream>

#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"

namespace sgdsim {
namespace {

constexpr const char* kMainHelpHead =
    R"(sgdsim — discrete-event simulator of distributed SGD training (SimGrid 3.32)

usage: sgdsim <command> [options]     (sgdsim <command> --help for details)

commands:
)";

constexpr const char* kMainHelpTail = R"(
exit codes: 0 ok, 2 bad input, 1 internal error, 3 --time-limit reached
)";

int cmd_version(const std::vector<std::string>&) {
  std::cout << "sgdsim " << SGDSIM_VERSION << "\n";
  return 0;
}

const RegisterSubcommand kVersion({"version", "version", "print the version", 120, cmd_version},
                                  {"--version"});

}  // namespace

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kMainHelpHead << subcommand_list() << kMainHelpTail;
    return args.empty() ? 2 : 0;
  }
  const Subcommand* cmd = subcommand_registry().find(args[0]);
  if (!cmd) throw InputError("usage: unknown command \"" + args[0] + "\" (see sgdsim --help)");
  return cmd->run(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace sgdsim
