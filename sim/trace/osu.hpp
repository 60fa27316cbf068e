#pragma once
/// OSU allreduce latency logs: parsing, alpha-beta calibration of a collective's cost formula,
/// and checking a calibrated formula against another log.
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// One measured message size of an OSU latency log.
struct OsuPoint {
  double size_bytes = 0;  ///< message size
  double latency_s = 0;   ///< average latency (the log's microseconds, in seconds)
};

/// A parsed OSU allreduce latency log (osu_allreduce: "# Size  Avg Latency(us)").
struct OsuLog {
  std::string file;              ///< where it was read from (for messages)
  int ranks = 0;                 ///< ranks of the run; 0 = unknown (no nodes column, none given)
  bool ranks_from_log = false;   ///< true if `ranks` comes from the log's "nodes," column
  std::vector<OsuPoint> points;  ///< measurements in file order
};

/// Parses an OSU allreduce log from `in`; `file` names it in errors. Data lines are
/// "bytes latency_us" or "nodes,bytes latency_us" (further numeric columns, as printed by
/// `osu_allreduce -f`, are ignored); '#' comments and blank lines are skipped. `ranks` (> 0)
/// is used when the log has no nodes column and must agree with it otherwise. Throws
/// InputError("file", "line N", ...) on a malformed line.
OsuLog parse_osu_log(std::istream& in, const std::string& file, int ranks = 0);

/// Reads and parses the OSU allreduce log at `path` (see parse_osu_log).
OsuLog read_osu_log(const std::string& path, int ranks = 0);

/// Result of fitting alpha and beta of one collective algorithm to a log.
struct AlphaBetaFit {
  std::string algorithm;       ///< registered algorithm name whose formula was fitted
  int ranks = 0;               ///< ranks of the fitted log
  double min_bytes = 0;        ///< only sizes >= this were fitted
  double alpha_s = 0;          ///< per-message latency (>= 0)
  double beta_s_per_byte = 0;  ///< inverse bandwidth (> 0)
  size_t points = 0;           ///< measurements used
  bool alpha_clamped = false;  ///< the unconstrained optimum had alpha < 0; refitted with alpha 0
  double rms_rel_error = 0;    ///< root mean square of (model - measured) / measured, fitted sizes
  double median_abs_rel_error = 0;  ///< median of |model - measured| / measured, fitted sizes
  /// The fitted parameters as the collectives' AlphaBeta (gamma 0).
  AlphaBeta alpha_beta() const { return AlphaBeta{alpha_s, beta_s_per_byte, 0.0}; }
};

/// Fits alpha and beta of `algorithm`'s closed-form cost (Collective::formula_s) to the sizes
/// >= `min_bytes` of `log`, minimizing sum(((model - measured) / measured)^2). The formulas are
/// linear in alpha and beta, so this is a two-feature weighted linear least squares
/// (formula with (alpha, beta) = (1, 0) and (0, 1)). alpha is clamped to >= 0 (refit of beta
/// alone); beta must come out > 0, else InputError. Throws InputError for an unknown algorithm,
/// unknown or < 2 ranks, or fewer than two distinct sizes to fit.
AlphaBetaFit fit_alpha_beta(const OsuLog& log, const std::string& algorithm, double min_bytes);
/// The same fit for a collective object (e.g. one not in the registry). A formula that is only
/// piecewise linear in (alpha, beta) is fitted by Gauss-Newton steps on its local coefficients.
AlphaBetaFit fit_alpha_beta(const OsuLog& log, const Collective& collective, double min_bytes);

/// One size of a log compared with a formula's prediction.
struct PointCheck {
  double size_bytes = 0;   ///< message size
  double measured_s = 0;   ///< latency in the log
  double predicted_s = 0;  ///< formula_s(ranks, size, alpha-beta)
  double rel_error = 0;    ///< (predicted - measured) / measured
  /// What timed the prediction where a collective chooses ("nccl_tuner(ring/LL)", "launch floor"
  /// for nccl-tests' floor); empty where nothing chooses.
  std::string chosen;
};

/// A log compared with an algorithm's formula at given alpha and beta.
struct LogCheck {
  std::string file;                 ///< the checked log
  std::string algorithm;            ///< the algorithm whose formula predicted
  int ranks = 0;                    ///< ranks of the checked log
  double min_bytes = 0;             ///< summary statistics use sizes >= this
  std::vector<PointCheck> points;   ///< every size of the log, in file order
  size_t used = 0;                  ///< sizes >= min_bytes
  double median_abs_rel_error = 0;  ///< median |rel_error| over sizes >= min_bytes
  double max_abs_rel_error = 0;     ///< largest |rel_error| over sizes >= min_bytes
};

/// Predicts every size of `log` with `algorithm`'s formula at `ab` and summarizes the relative
/// error over sizes >= `min_bytes`. Throws InputError for an unknown algorithm, unknown or < 2
/// ranks, or no size >= min_bytes.
LogCheck check_alpha_beta(const OsuLog& log, const std::string& algorithm, const AlphaBeta& ab,
                          double min_bytes);
/// The same check for a collective object.
LogCheck check_alpha_beta(const OsuLog& log, const Collective& collective, const AlphaBeta& ab,
                          double min_bytes);

/// A check of `points` (every size of a log): the summary over sizes >= `min_bytes`; throws
/// InputError naming `file` when no size is that large.
LogCheck summarize_check(std::string file, std::string algorithm, int ranks, double min_bytes,
                         std::vector<PointCheck> points);

/// Median of `values` (mean of the two middle ones for an even count); NaN if empty.
double median(std::vector<double> values);

}  // namespace sgdsim
