#pragma once
/// The subcommands of the sgdsim command line (run, sweep, predict, dag, collective, ...).
#include <string>
#include <vector>

namespace sgdsim {

/// Runs the subcommand `args[0]` with its arguments, printing to stdout/stderr as the CLI
/// does; returns its exit code. Bad input throws InputError (main maps it to exit code 2).
/// `run` and `collective` create a SimGrid engine: at most one of them per process.
int dispatch(const std::vector<std::string>& args);

}  // namespace sgdsim
