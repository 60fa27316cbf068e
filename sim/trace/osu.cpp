// OSU allreduce logs -> alpha-beta calibration. The fit is a weighted linear least squares on
// the two features of a collective's closed-form cost (its coefficients of alpha and beta),
// weighted by 1 / measured so that every size counts by its relative error.
#include "sim/trace/osu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"

namespace sgdsim {

namespace {

std::string line_ref(size_t line) {
  return fmt::format("line {}", line);
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(out);
  return true;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

const Collective& resolve_algorithm(const std::string& name) {
  try {
    return collective_by_name(name);
  } catch (const std::out_of_range&) {
    std::string names;
    for (const auto& c : collective_names()) names += (names.empty() ? "" : ", ") + c;
    throw InputError(
        fmt::format("unknown collective algorithm \"{}\" (expected one of: {})", name, names));
  }
}

void check_ranks(const OsuLog& log) {
  if (log.ranks == 0)
    throw InputError(log.file, "",
                     "the log has no \"nodes,\" column and no number of ranks was given");
  if (log.ranks < 2)
    throw InputError(log.file, "",
                     fmt::format("an allreduce needs at least 2 ranks, got {}", log.ranks));
}

/// Coefficients of alpha and beta of the formula at one size, linearized at `at`: exact for
/// formulas linear in (alpha, beta) (every textbook one); for one that is only piecewise linear
/// (e.g. a cost-based choice among algorithms) it is the local gradient.
struct Features {
  double a = 0;
  double b = 0;
};

Features features(const Collective& c, int p, double n, const AlphaBeta* at) {
  if (at == nullptr)
    return {c.formula_s(p, n, AlphaBeta{1.0, 0.0, 0.0}),
            c.formula_s(p, n, AlphaBeta{0.0, 1.0, 0.0})};
  const double da = std::max(at->alpha_s, 1e-12) * 1e-7;
  const double db = std::max(at->beta_s_per_byte, 1e-18) * 1e-7;
  const double f0 = c.formula_s(p, n, *at);
  AlphaBeta pa = *at, pb = *at;
  pa.alpha_s += da;
  pb.beta_s_per_byte += db;
  return {(c.formula_s(p, n, pa) - f0) / da, (c.formula_s(p, n, pb) - f0) / db};
}

struct Solved {
  double alpha = 0;
  double beta = 0;
  bool alpha_clamped = false;
  bool beta_nonpositive = false;
  bool degenerate = false;
};

/// Minimizes sum((alpha a_i + beta b_i) / y_i - 1)^2 with alpha >= 0 (QR of the scaled
/// two-column design matrix, so that alpha ~ 1e-5 and beta ~ 1e-9 are solved equally well).
Solved solve_weighted(const std::vector<Features>& f, const std::vector<double>& y) {
  const size_t m = y.size();
  std::vector<double> A(m), B(m);
  for (size_t i = 0; i < m; ++i) {
    A[i] = f[i].a / y[i];
    B[i] = f[i].b / y[i];
  }
  auto dot = [m](const std::vector<double>& u, const std::vector<double>& v) {
    double s = 0;
    for (size_t i = 0; i < m; ++i) s += u[i] * v[i];
    return s;
  };
  auto sum = [m](const std::vector<double>& u) {
    double s = 0;
    for (size_t i = 0; i < m; ++i) s += u[i];
    return s;
  };
  Solved out;
  const double na = std::sqrt(dot(A, A)), nb = std::sqrt(dot(B, B));
  if (!(nb > 0)) return out.degenerate = true, out;
  if (na > 0) {
    // Modified Gram-Schmidt on [A/|A|, B/|B|]; right-hand side is the all-ones vector.
    std::vector<double> q1(m), q2(m);
    for (size_t i = 0; i < m; ++i) q1[i] = A[i] / na;
    std::vector<double> Bs(m);
    for (size_t i = 0; i < m; ++i) Bs[i] = B[i] / nb;
    const double r12 = dot(q1, Bs);
    for (size_t i = 0; i < m; ++i) q2[i] = Bs[i] - r12 * q1[i];
    const double r22 = std::sqrt(dot(q2, q2));
    if (r22 < 1e-10) return out.degenerate = true, out;
    for (size_t i = 0; i < m; ++i) q2[i] /= r22;
    const double c1 = sum(q1), c2 = sum(q2);
    const double xb = c2 / r22;       // scaled beta
    const double xa = c1 - r12 * xb;  // scaled alpha
    out.alpha = xa / na;
    out.beta = xb / nb;
  } else {
    out.alpha = 0;  // the formula has no latency term
    out.beta = sum(B) / dot(B, B);
  }
  if (!(out.beta > 0)) {
    out.beta_nonpositive = true;
    return out;
  }
  if (out.alpha < 0) {
    out.alpha = 0;
    out.alpha_clamped = true;
    out.beta = sum(B) / dot(B, B);
  }
  return out;
}

}  // namespace

OsuLog parse_osu_log(std::istream& in, const std::string& file, int ranks) {
  OsuLog log;
  log.file = file;
  int nodes_seen = 0;  // 0: no data line yet; -1: lines without nodes column
  std::string raw;
  size_t lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&]() {
      return InputError(file, line_ref(lineno),
                        fmt::format("expected \"bytes latency_us\" or \"nodes,bytes "
                                    "latency_us\", got \"{}\"",
                                    line.size() > 80 ? std::string(line.substr(0, 77)) + "..."
                                                     : std::string(line)));
    };
    auto tokens = split_ws(line);
    if (tokens.size() < 2) throw bad();
    std::string_view size_tok = tokens[0];
    int nodes = -1;
    if (auto comma = size_tok.find(','); comma != std::string_view::npos) {
      if (!parse_number(size_tok.substr(0, comma), nodes) || nodes < 1) throw bad();
      size_tok = size_tok.substr(comma + 1);
    }
    long long bytes = 0;
    double latency_us = 0;
    if (!parse_number(size_tok, bytes) || bytes < 0) throw bad();
    if (!parse_number(tokens[1], latency_us) || latency_us <= 0) throw bad();
    for (size_t k = 2; k < tokens.size(); ++k) {
      double extra = 0;
      if (!parse_number(tokens[k], extra)) throw bad();
    }
    if (nodes_seen == 0) {
      nodes_seen = nodes;
    } else if ((nodes_seen == -1) != (nodes == -1)) {
      throw InputError(file, line_ref(lineno), "mixes lines with and without a \"nodes,\" column");
    } else if (nodes != nodes_seen) {
      throw InputError(file, line_ref(lineno),
                       fmt::format("the nodes column changes from {} to {} (one run per log)",
                                   nodes_seen, nodes));
    }
    if (nodes > 0 && ranks > 0 && nodes != ranks)
      throw InputError(
          file, line_ref(lineno),
          fmt::format("the nodes column says {} ranks but {} were given", nodes, ranks));
    log.points.push_back({static_cast<double>(bytes), latency_us * 1e-6});
  }
  if (log.points.empty())
    throw InputError(file, "",
                     "no measurements (expected lines \"bytes latency_us\" or \"nodes,bytes "
                     "latency_us\")");
  if (nodes_seen > 0) {
    log.ranks = nodes_seen;
    log.ranks_from_log = true;
  } else {
    log.ranks = std::max(ranks, 0);
  }
  return log;
}

OsuLog read_osu_log(const std::string& path, int ranks) {
  std::istringstream in(read_file(path));
  return parse_osu_log(in, path, ranks);
}

AlphaBetaFit fit_alpha_beta(const OsuLog& log, const std::string& algorithm, double min_bytes) {
  return fit_alpha_beta(log, resolve_algorithm(algorithm), min_bytes);
}

namespace {

/// The points of `log` at sizes >= min_bytes; at least two distinct sizes.
std::vector<OsuPoint> fit_points(const OsuLog& log, double min_bytes) {
  std::vector<OsuPoint> pts;
  for (const auto& pt : log.points)
    if (pt.size_bytes >= min_bytes) pts.push_back(pt);
  std::vector<double> sizes;
  for (const auto& pt : pts) sizes.push_back(pt.size_bytes);
  std::sort(sizes.begin(), sizes.end());
  const auto distinct =
      static_cast<size_t>(std::unique(sizes.begin(), sizes.end()) - sizes.begin());
  if (distinct < 2)
    throw InputError(log.file, "",
                     fmt::format("need at least 2 distinct message sizes >= {} bytes to fit "
                                 "alpha and beta, found {}",
                                 min_bytes, distinct));
  return pts;
}

/// Relative-error least squares of the collective's formula on the points.
class OsuFitter {
 public:
  OsuFitter(const Collective& coll, int p, std::vector<OsuPoint> pts)
      : coll_(coll), p_(p), pts_(std::move(pts)) {
    for (const auto& pt : pts_) y_.push_back(pt.latency_s);
  }

  std::vector<Features> features_at(const AlphaBeta* at) const {
    std::vector<Features> f;
    f.reserve(pts_.size());
    for (const auto& pt : pts_) f.push_back(features(coll_, p_, pt.size_bytes, at));
    return f;
  }

  double residual_ss(double a, double b) const {
    double s = 0;
    for (const auto& pt : pts_) {
      const double r = coll_.formula_s(p_, pt.size_bytes, AlphaBeta{a, b, 0}) / pt.latency_s - 1.0;
      s += r * r;
    }
    return s;
  }

  /// Whether the formula is not linear in (alpha, beta) at `x` (a choice among algorithms
  /// that depends on alpha and beta).
  bool nonlinear(const Solved& x) const {
    for (const auto& pt : pts_) {
      Features f = features(coll_, p_, pt.size_bytes, nullptr);
      const double lin = x.alpha * f.a + x.beta * f.b;
      const double val = coll_.formula_s(p_, pt.size_bytes, AlphaBeta{x.alpha, x.beta, 0});
      if (std::abs(lin - val) > 1e-9 * std::abs(val)) return true;
    }
    return false;
  }

  /// Gauss-Newton on the local features until the parameters settle; the best iterate.
  Solved gauss_newton(Solved s) const {
    Solved best = s;
    double best_ss = residual_ss(s.alpha, s.beta);
    for (int it = 0; it < 50; ++it) {
      AlphaBeta at{s.alpha, s.beta, 0};
      Solved next = solve_weighted(features_at(&at), y_);
      if (next.degenerate || next.beta_nonpositive) break;
      const double ss = residual_ss(next.alpha, next.beta);
      if (ss < best_ss) best = next, best_ss = ss;
      const bool settled = std::abs(next.alpha - s.alpha) <= 1e-12 * std::max(next.alpha, 1e-12) &&
                           std::abs(next.beta - s.beta) <= 1e-12 * next.beta;
      s = next;
      if (settled) break;
    }
    return best;
  }

  /// The fit's record: parameters and its relative errors on the points.
  AlphaBetaFit result(const Solved& s, double min_bytes) const {
    AlphaBetaFit fit;
    fit.algorithm = coll_.name();
    fit.ranks = p_;
    fit.min_bytes = min_bytes;
    fit.alpha_s = s.alpha;
    fit.beta_s_per_byte = s.beta;
    fit.points = pts_.size();
    fit.alpha_clamped = s.alpha_clamped;
    std::vector<double> abs_err;
    double ss = 0;
    for (const auto& pt : pts_) {
      const double r = coll_.formula_s(p_, pt.size_bytes, fit.alpha_beta()) / pt.latency_s - 1.0;
      ss += r * r;
      abs_err.push_back(std::abs(r));
    }
    fit.rms_rel_error = std::sqrt(ss / static_cast<double>(pts_.size()));
    fit.median_abs_rel_error = median(abs_err);
    return fit;
  }

  const std::vector<double>& y() const { return y_; }

 private:
  const Collective& coll_;
  int p_;
  std::vector<OsuPoint> pts_;
  std::vector<double> y_;
};

}  // namespace

AlphaBetaFit fit_alpha_beta(const OsuLog& log, const Collective& coll, double min_bytes) {
  check_ranks(log);
  if (coll.latency_in_start_delay())
    throw InputError(log.file, "",
                     fmt::format("{} pays its latency once, not as per-message alphas: fit it "
                                 "with sgdsim calibrate nccl-tests",
                                 coll.name()));
  // An OSU log has one rank per node; a collective that cannot run so has no formula to fit.
  if (const auto problem = coll.check(CollectiveGroup{log.ranks}))
    throw InputError(log.file, "",
                     fmt::format("{} cannot run on the log's {} ranks, one per node: {}",
                                 coll.name(), log.ranks, problem->message));
  const std::vector<OsuPoint> pts = fit_points(log, min_bytes);
  const OsuFitter fitter(coll, log.ranks, pts);
  Solved s = solve_weighted(fitter.features_at(nullptr), fitter.y());
  if (s.degenerate)
    throw InputError(
        log.file, "",
        fmt::format("the {} formula cannot separate alpha from beta on these sizes", coll.name()));
  if (s.beta_nonpositive)
    throw InputError(log.file, "",
                     fmt::format("the {} measurements >= {} bytes do not grow with message "
                                 "size: no positive beta (inverse bandwidth) fits the {} formula",
                                 pts.size(), min_bytes, coll.name()));
  if (fitter.nonlinear(s)) s = fitter.gauss_newton(s);
  return fitter.result(s, min_bytes);
}

LogCheck check_alpha_beta(const OsuLog& log, const std::string& algorithm, const AlphaBeta& ab,
                          double min_bytes) {
  return check_alpha_beta(log, resolve_algorithm(algorithm), ab, min_bytes);
}

LogCheck check_alpha_beta(const OsuLog& log, const Collective& coll, const AlphaBeta& ab,
                          double min_bytes) {
  check_ranks(log);
  std::vector<PointCheck> points;
  for (const auto& pt : log.points) {
    const double predicted = coll.formula_s(log.ranks, pt.size_bytes, ab);
    points.push_back(
        {pt.size_bytes, pt.latency_s, predicted, (predicted - pt.latency_s) / pt.latency_s, ""});
  }
  return summarize_check(log.file, coll.name(), log.ranks, min_bytes, std::move(points));
}

LogCheck summarize_check(std::string file, std::string algorithm, int ranks, double min_bytes,
                         std::vector<PointCheck> points) {
  LogCheck c;
  c.file = std::move(file);
  c.algorithm = std::move(algorithm);
  c.ranks = ranks;
  c.min_bytes = min_bytes;
  c.points = std::move(points);
  std::vector<double> abs_err;
  for (const auto& pc : c.points)
    if (pc.size_bytes >= min_bytes) abs_err.push_back(std::abs(pc.rel_error));
  if (abs_err.empty())
    throw InputError(c.file, "", fmt::format("no message size >= {} bytes to check", min_bytes));
  c.used = abs_err.size();
  c.median_abs_rel_error = median(abs_err);
  c.max_abs_rel_error = *std::max_element(abs_err.begin(), abs_err.end());
  return c;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}

}  // namespace sgdsim
