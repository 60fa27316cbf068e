#pragma once
/// `sgdsim schema`: the scenario format as a JSON Schema, or the field tables of docs/fields.md.
#include <string>
#include <vector>

namespace sgdsim {

/// Runs `sgdsim schema [--markdown TABLE]` (arguments after "schema"); returns the exit code.
int cmd_schema(const std::vector<std::string>& argv);

}  // namespace sgdsim
