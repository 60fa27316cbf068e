#pragma once
/// `sgdsim calibrate`: fit a platform's alpha and beta from measured collective latencies.
#include <string>
#include <vector>

namespace sgdsim {

/// Runs `sgdsim calibrate osu LOG [options]` (arguments after "calibrate"); returns the exit
/// code. Bad input throws InputError.
int cmd_calibrate(const std::vector<std::string>& argv);

}  // namespace sgdsim
