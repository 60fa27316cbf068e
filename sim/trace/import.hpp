#pragma once
/// One entry point for every measured format: detection from the file's first bytes, import
/// into a MeasuredTrace, and the latency curve of benchmark-like sources for calibration.
#include <string>
#include <vector>

#include "sim/trace/measured.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

/// The formats import_measured reads: kineto, chrome, sgdsim, nccl-tests, osu, bcaffe,
/// pipedream.
const std::vector<std::string>& measured_formats();

/// Guesses the format of a file (plain or gzip) from its first bytes: JSON -> "kineto",
/// "chrome" or "sgdsim" (decided on import; "json" is returned here), "osu", "nccl-tests",
/// "bcaffe", "pipedream". Throws InputError naming the file if it is empty or unrecognized.
std::string detect_format(const std::string& path);

/// How to import a file.
struct ImportOptions {
  std::string format;  ///< one of measured_formats(), or "" to detect
  int ranks = 0;       ///< ranks when the file does not say (osu, bcaffe, nccl-tests)
  int warmup = -1;     ///< leading steps left out of the statistics (-1: the source's default)
  int batch_size = 0;  ///< pipedream: batch size when the graph does not imply one
};

/// Imports a measured file. Throws InputError naming the file for unknown formats and for
/// anything malformed.
MeasuredTrace import_measured(const std::string& path, const ImportOptions& options = {});

/// An OSU log as a MeasuredTrace: one allreduce per message size.
MeasuredTrace osu_trace(const OsuLog& log);

/// The (size, time) points of a trace's collectives named `collective` with known sizes, as
/// an OsuLog with `ranks` ranks (for fit_alpha_beta / check_alpha_beta). Throws InputError if
/// there are none.
OsuLog latency_log(const MeasuredTrace& trace, int ranks,
                   const std::string& collective = "allreduce");

}  // namespace sgdsim
