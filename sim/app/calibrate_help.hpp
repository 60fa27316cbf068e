#pragma once
/// The help texts and option tables of `sgdsim calibrate osu` and `sgdsim calibrate nccl-tests`.
#include <vector>

#include "sim/app/cli.hpp"

namespace sgdsim {

extern const char* const kCalibrateHelpHead;        ///< usage lines and calibrate osu's text
extern const std::vector<OptionSpec> kOsuOptions;   ///< calibrate osu's options
extern const char* const kNcclHelpHead;             ///< calibrate nccl-tests' text
extern const std::vector<OptionSpec> kNcclOptions;  ///< calibrate nccl-tests' options

}  // namespace sgdsim
