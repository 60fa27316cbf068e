#pragma once
/// `sgdsim schema`: the scenario format as a JSON Schema, or the README's field tables.
#include <string>
#include <vector>

namespace sgdsim {

/// Runs `sgdsim schema [--markdown TABLE]` (arguments after "schema"); returns the exit code.
int cmd_schema(const std::vector<std::string>& argv);

}  // namespace sgdsim
