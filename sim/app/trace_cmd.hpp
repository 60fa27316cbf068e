#pragma once
/// `sgdsim trace`: summarize a measured trace or log, and derive a model profile from it.
#include <string>
#include <vector>

namespace sgdsim {

/// Runs `sgdsim trace FILE [options]` (arguments after "trace"); returns the exit code. Bad
/// input throws InputError.
int cmd_trace(const std::vector<std::string>& argv);

}  // namespace sgdsim
