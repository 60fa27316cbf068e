#pragma once
/// Validation cases: a measured source at one or more scales, a calibration source, and the
/// scenario sgdsim derives from them; comparison of simulated against measured iteration,
/// communication and per-collective times. No simulation here (sim/app runs the scenarios).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/trace/importer.hpp"
#include "sim/trace/measured.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

/// A measured file named by a case.
struct MeasuredSource {
  std::string name;       ///< label in tables ("4 nodes")
  std::string file;       ///< resolved path
  std::string format;     ///< importer format
  bool detected = false;  ///< format detected, not given (JSON is then told apart on import)
  /// The options of its format given in the case (import_params_of: "ranks", ...).
  ParamValues options{};
  std::string pointer;  ///< JSON pointer in the case file (for messages)
};

/// The formats a case can compare, by kind, for help texts: "kineto, ... (training traces), ...".
std::string case_formats_help();

/// A validation case (CASE.json).
struct ValidationCase {
  std::string file;                       ///< the case file
  std::string name;                       ///< case name (output folder, table)
  std::string description;                ///< free text
  std::string source;                     ///< citation of the measurements
  CaseKind kind = CaseKind::trace;        ///< from the targets' format
  MeasuredSource calibration;             ///< compute (and network) calibration source
  std::optional<MeasuredSource> network;  ///< separate network calibration source, if any
  std::string algorithm = "ring";         ///< collective whose formula is fitted and simulated
  double min_bytes = 0;                   ///< sizes >= this are fitted and compared
  std::vector<MeasuredSource> targets;    ///< measured runs to predict
  nlohmann::json scenario = nlohmann::json::object();  ///< merged over the derived scenario
};

/// Reads and checks a case file: {"name", "description", "source", "calibration": SOURCE,
/// "network": SOURCE (optional), "algorithm": "ring", "min_bytes": "64KiB", "targets":
/// [SOURCE...], "scenario": {...}} with SOURCE = {"name", "file", "format"} and the options of
/// its format ("ranks", ...; import_params_of); paths relative to the case file. Unknown keys,
/// another format's options, unknown formats and mixed kinds are InputErrors.
ValidationCase load_validation_case(const std::string& path);

/// What the calibration source gives.
struct CaseCalibration {
  AlphaBetaFit network;           ///< alpha and beta of `algorithm` fitted to the network source
  std::string network_file;       ///< that source
  MeasuredTrace compute;          ///< the calibration source itself (compute side)
  double update_s = 0;            ///< trace cases: time after the last allreduce (update step)
  std::string profile_text;       ///< trace cases: the per-layer or DDP bucket profile (JSON text)
  std::string profile_notes;      ///< how it was derived
  size_t buckets = 0;             ///< trace cases: DDP buckets (allreduces) per measured step
  double fusion_bytes = 0;        ///< trace cases: scheme.fusion_bytes that rebuilds them
  double first_bucket_bytes = 0;  ///< trace cases: scheme.first_bucket_bytes likewise
};

/// Imports the calibration source(s) and fits the network (relative least squares of the
/// algorithm's formula over the collectives >= min_bytes, as `sgdsim calibrate osu` does).
CaseCalibration calibrate_case(const ValidationCase& c);

/// One target made ready to simulate.
struct PreparedTarget {
  MeasuredSource source;     ///< the target
  MeasuredTrace measured;    ///< its measurements
  int ranks = 0;             ///< workers simulated
  bool in_sample = false;    ///< the target is the calibration source itself
  nlohmann::json scenario;   ///< derived scenario (model: "profile.json" beside it)
  std::string profile_text;  ///< the profile to write as profile.json
  /// Per bucket b of the simulation, the measured collectives it is compared with.
  std::vector<std::vector<const MeasuredCollective*>> bucket_measured;
  std::vector<const MeasuredStep*> steps;  ///< measured steps compared with iterations
};

/// Imports a target and derives its scenario and profile from the calibration.
PreparedTarget prepare_target(const ValidationCase& c, const CaseCalibration& cal,
                              const MeasuredSource& target);

/// One compared quantity.
struct ValidationRow {
  std::string case_name;   ///< case
  std::string target;      ///< target label
  std::string metric;      ///< "iteration", "comm" or "collective"
  std::string what;        ///< e.g. "step 5", "bucket 2 (31.5 MB)"
  bool in_sample = false;  ///< measured at the calibration source itself
  double measured_s = 0;   ///< measured time
  double simulated_s = 0;  ///< simulated time
  double error = 0;        ///< (simulated - measured) / measured
};

/// The comparison of one target.
struct TargetComparison {
  std::vector<ValidationRow> summary;             ///< iteration (mean) and comm (per iteration)
  std::vector<ValidationRow> steps;               ///< every measured step vs the simulated mean
  std::vector<ValidationRow> collectives;         ///< every measured collective vs its bucket
  double collective_median_abs_error = kUnknown;  ///< over `collectives`
};

/// Compares a target with its simulation: `summary` is the run's summary.json, `simulated`
/// its timeline imported with read_sgdsim_timeline.
TargetComparison compare_target(const ValidationCase& c, const PreparedTarget& t,
                                const nlohmann::json& summary, const MeasuredTrace& simulated);

/// Median of |error| over rows of `metric` ("" = all rows); `out_of_sample_only` drops
/// in-sample rows. NaN if none.
double median_abs_error(const std::vector<ValidationRow>& rows, const std::string& metric,
                        bool out_of_sample_only = false);

/// A row as JSON {"name","case","target","metric","what","in_sample","measured_s",
/// "simulated_s","error"}.
nlohmann::json row_to_json(const ValidationRow& r);

/// Human-readable size ("31.5 MB", "64 KiB").
std::string format_bytes(double bytes);

}  // namespace sgdsim
