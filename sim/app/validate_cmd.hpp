#pragma once
/// `sgdsim validate`: simulate validation cases (measured source + calibration + derived
/// scenario) and compare the simulated iteration, communication and collective times with the
/// measured ones.
#include <string>
#include <vector>

namespace sgdsim {

/// Runs `sgdsim validate CASE.json... [options]` (arguments after "validate"); returns the exit
/// code. Bad input throws InputError.
int cmd_validate(const std::vector<std::string>& argv);

}  // namespace sgdsim
