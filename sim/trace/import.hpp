#pragma once
/// One entry point for every measured format: detection from the file's first bytes, import
/// into a MeasuredTrace, and the latency curve of benchmark-like sources for calibration.
#include <string>
#include <vector>

#include "sim/trace/importer.hpp"
#include "sim/trace/measured.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

/// The formats import_measured reads: the registered importers' names, sorted.
std::vector<std::string> measured_formats();

/// The importer whose detector first recognizes a file (plain or gzip) from its name or first
/// bytes. JSON is detected as "kineto" (an sgdsim timeline is told apart on import). Throws
/// InputError naming the file if it is empty or unrecognized.
const Importer& detect_importer(const std::string& path);

/// The name of detect_importer(path).
std::string detect_format(const std::string& path);

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
