#include "sim/trace/osu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"

using namespace sgdsim;

namespace {

const std::string kLogs = SGDSIM_SOURCE_DIR "/data/validation/bcaffe-googlenet/";

OsuLog parse(const std::string& text, int ranks = 0) {
  std::istringstream in(text);
  return parse_osu_log(in, "test.log", ranks);
}

std::string error_of(const std::string& text, int ranks = 0) {
  try {
    parse(text, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A log whose latencies are exactly `algorithm`'s formula at (alpha, beta).
OsuLog synthetic(const std::string& algorithm, int ranks, double alpha, double beta) {
  OsuLog log;
  log.file = "synthetic";
  log.ranks = ranks;
  const Collective& c = collective_by_name(algorithm);
  for (double n = 4; n <= 8192; n *= 2)
    log.points.push_back({n, c.formula_s(ranks, n, AlphaBeta{alpha, beta, 0})});
  for (double n = 12288; n <= 1048576; n += 4096)
    log.points.push_back({n, c.formula_s(ranks, n, AlphaBeta{alpha, beta, 0})});
  return log;
}

}  // namespace

TEST(OsuLog, ParsesNodesColumnCommentsAndBlankLines) {
  OsuLog log = parse(
      "\n# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n"
      "2,4                      31.92\n\n  2,65536    201.40\r\n2,1048576 1839.14\n");
  EXPECT_EQ(log.ranks, 2);
  EXPECT_TRUE(log.ranks_from_log);
  ASSERT_EQ(log.points.size(), 3u);
  EXPECT_DOUBLE_EQ(log.points[0].size_bytes, 4);
  EXPECT_DOUBLE_EQ(log.points[0].latency_s, 31.92e-6);
  EXPECT_DOUBLE_EQ(log.points[1].size_bytes, 65536);
  EXPECT_DOUBLE_EQ(log.points[1].latency_s, 201.40e-6);
  EXPECT_DOUBLE_EQ(log.points[2].latency_s, 1839.14e-6);
}

TEST(OsuLog, PlainLinesTakeRanksFromTheCaller) {
  const std::string text = "# Size Avg Latency(us)\n4   54.50\n8\t50.36\n";
  OsuLog given = parse(text, 4);
  EXPECT_EQ(given.ranks, 4);
  EXPECT_FALSE(given.ranks_from_log);
  ASSERT_EQ(given.points.size(), 2u);
  EXPECT_DOUBLE_EQ(given.points[1].size_bytes, 8);
  EXPECT_DOUBLE_EQ(given.points[1].latency_s, 50.36e-6);
  EXPECT_EQ(parse(text).ranks, 0);  // unknown: fitting it is an error
  EXPECT_THROW(fit_alpha_beta(parse(text), "ring", 0), InputError);
}

TEST(OsuLog, FullStatisticsColumnsAreIgnored) {
  // osu_allreduce -f: Size, Avg, Min, Max latency, Iterations.
  OsuLog log = parse("1024  41.80  40.10  43.00  1000\n", 2);
  ASSERT_EQ(log.points.size(), 1u);
  EXPECT_DOUBLE_EQ(log.points[0].latency_s, 41.80e-6);
}

TEST(OsuLog, MalformedLinesNameFileAndLine) {
  EXPECT_EQ(error_of("# OSU\n# Size Avg\n2,4 31.92\n2,8 32.20\n2,16 32.38\n2,32 32.29\n2,64 abc\n"),
            "test.log: line 7: expected \"bytes latency_us\" or \"nodes,bytes latency_us\", got "
            "\"2,64 abc\"");
  EXPECT_EQ(error_of("4096\n", 2),
            "test.log: line 1: expected \"bytes latency_us\" or \"nodes,bytes latency_us\", got "
            "\"4096\"");
  EXPECT_EQ(error_of("2,4 31.92\n4,8 32.20\n"),
            "test.log: line 2: the nodes column changes from 2 to 4 (one run per log)");
  EXPECT_EQ(error_of("2,4 31.92\n8 32.20\n"),
            "test.log: line 2: mixes lines with and without a \"nodes,\" column");
  EXPECT_EQ(error_of("2,4 31.92\n", 8),
            "test.log: line 1: the nodes column says 2 ranks but 8 were given");
  EXPECT_EQ(error_of("4 -1.0\n", 2).rfind("test.log: line 1: expected", 0), 0u);
  EXPECT_EQ(error_of("# only comments\n\n"),
            "test.log: no measurements (expected lines \"bytes latency_us\" or \"nodes,bytes "
            "latency_us\")");
}

TEST(OsuFit, RecoversAlphaBetaOfEveryAlgorithm) {
  const double alpha = 23.5e-6, beta = 1.0 / 1.1e9;
  for (const auto& name : collective_names()) {
    if (collective_by_name(name).latency_in_start_delay()) {
      // nccl_tuner has no per-message alpha to fit: refused with a pointer to nccl-tests.
      EXPECT_THROW(fit_alpha_beta(synthetic(name, 4, alpha, beta), name, 65536), InputError);
      continue;
    }
    if (collective_by_name(name).check(CollectiveGroup{4})) {
      // nvls runs on one node only; an OSU log has a rank per node: refused, not fitted.
      EXPECT_THROW(fit_alpha_beta(synthetic("ring", 4, alpha, beta), name, 65536), InputError)
          << name;
      continue;
    }
    for (int p : {2, 4, 8, 6}) {
      OsuLog log = synthetic(name, p, alpha, beta);
      AlphaBetaFit fit = fit_alpha_beta(log, name, 65536);
      EXPECT_NEAR(fit.alpha_s, alpha, 1e-9 * alpha) << name << " p=" << p;
      EXPECT_NEAR(fit.beta_s_per_byte, beta, 1e-9 * beta) << name << " p=" << p;
      EXPECT_FALSE(fit.alpha_clamped);
      EXPECT_EQ(fit.points, 241u);
      // nccl chooses by alpha and beta (piecewise linear): Gauss-Newton on finite differences.
      EXPECT_LT(fit.rms_rel_error, name == "nccl" ? 1e-9 : 1e-12) << name << " p=" << p;
      // The threshold does not matter for exact data, including the small sizes.
      AlphaBetaFit all = fit_alpha_beta(log, name, 0);
      EXPECT_NEAR(all.alpha_s, alpha, 1e-9 * alpha) << name << " p=" << p;
      EXPECT_NEAR(all.beta_s_per_byte, beta, 1e-9 * beta) << name << " p=" << p;
    }
  }
}

namespace {
/// A cost-based choice (the cheaper of recursive doubling and ring at the given alpha-beta):
/// its formula is only piecewise linear in (alpha, beta).
class CheaperOf final : public Collective {
 public:
  std::string name() const override { return "cheaper_of"; }
  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    return collective_by_name("ring").schedule(g, bytes);
  }
  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    return std::min(collective_by_name("ring").formula_s(g, n, c),
                    collective_by_name("recursive_doubling").formula_s(g, n, c));
  }
  double message_count(const CollectiveGroup& g, double bytes) const override {
    return collective_by_name("ring").message_count(g, bytes);
  }
};
}  // namespace

TEST(OsuFit, PiecewiseLinearFormulaByGaussNewton) {
  CheaperOf cheaper;
  const Collective& coll = cheaper;
  const double alpha = 30e-6, beta = 1e-9;
  OsuLog log;
  log.file = "cheaper";
  log.ranks = 8;
  for (double n = 1024; n <= 1048576; n *= 1.25)
    log.points.push_back({n, coll.formula_s(8, n, AlphaBeta{alpha, beta, 0})});
  // Both branches are present in the data.
  const Collective& rd = collective_by_name("recursive_doubling");
  EXPECT_EQ(rd.formula_s(8, 1024, AlphaBeta{alpha, beta, 0}), log.points.front().latency_s);
  EXPECT_LT(log.points.back().latency_s, rd.formula_s(8, 1048576, AlphaBeta{alpha, beta, 0}));
  AlphaBetaFit fit = fit_alpha_beta(log, coll, 0);
  EXPECT_NEAR(fit.alpha_s, alpha, 1e-9 * alpha);
  EXPECT_NEAR(fit.beta_s_per_byte, beta, 1e-9 * beta);
  EXPECT_EQ(fit.algorithm, "cheaper_of");
}

TEST(OsuFit, ClampsNegativeAlpha) {
  // Latency = n * beta - 10 us: the unconstrained alpha is negative.
  OsuLog log;
  log.file = "neg";
  log.ranks = 2;
  const double beta = 1e-9;
  for (double n = 65536; n <= 1048576; n += 65536) log.points.push_back({n, n * beta - 10e-6});
  AlphaBetaFit fit = fit_alpha_beta(log, "ring", 65536);
  EXPECT_TRUE(fit.alpha_clamped);
  EXPECT_EQ(fit.alpha_s, 0.0);
  EXPECT_GT(fit.beta_s_per_byte, 0.0);
  EXPECT_LT(fit.beta_s_per_byte, beta);
}

TEST(OsuFit, RejectsUnusableData) {
  OsuLog flat;
  flat.file = "flat.log";
  flat.ranks = 2;
  for (double n = 65536; n <= 1048576; n += 65536)
    flat.points.push_back({n, 1e-3 - n * 1e-10});  // shrinks with size
  EXPECT_THROW(fit_alpha_beta(flat, "ring", 65536), InputError);
  OsuLog one = synthetic("ring", 2, 1e-5, 1e-9);
  EXPECT_THROW(fit_alpha_beta(one, "ring", 1048576), InputError);  // a single size
  EXPECT_THROW(fit_alpha_beta(one, "no_such_algorithm", 0), InputError);
  one.ranks = 1;
  EXPECT_THROW(fit_alpha_beta(one, "ring", 0), InputError);
}

TEST(OsuCheck, RelativeErrorsAndMedian) {
  OsuLog log = synthetic("ring", 4, 2e-5, 1e-9);
  for (auto& pt : log.points) pt.latency_s *= 0.8;  // the formula over-predicts by 25 %
  LogCheck c = check_alpha_beta(log, "ring", AlphaBeta{2e-5, 1e-9, 0}, 65536);
  EXPECT_EQ(c.points.size(), log.points.size());
  EXPECT_EQ(c.used, 241u);
  EXPECT_NEAR(c.median_abs_rel_error, 0.25, 1e-12);
  EXPECT_NEAR(c.max_abs_rel_error, 0.25, 1e-12);
  EXPECT_NEAR(c.points[0].rel_error, 0.25, 1e-12);
  EXPECT_THROW(check_alpha_beta(log, "ring", AlphaBeta{2e-5, 1e-9, 0}, 2e6), InputError);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(OsuRealLogs, TwoNodeFitIsSane) {
  OsuLog log = read_osu_log(kLogs + "allreduce2.log");
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.points.size(), 266u);
  AlphaBetaFit fit = fit_alpha_beta(log, "ring", 65536);
  EXPECT_GT(fit.alpha_s, 0);
  EXPECT_LT(fit.alpha_s, 200e-6);
  const double bandwidth_Bps = 1.0 / fit.beta_s_per_byte;
  EXPECT_GT(bandwidth_Bps, 0.1e9);  // a 10 GbE link: at most 1.25 GB/s
  EXPECT_LT(bandwidth_Bps, 2e9);
  EXPECT_LT(fit.median_abs_rel_error, 0.05);
}

TEST(OsuRealLogs, RingCalibratedOnTwoNodesPredictsFourAndEightWithin25Percent) {
  // Issue 3 item 6: calibrated on the 2-node log alone, the median error of the 4- and
  // 8-node predictions for sizes >= 64 KiB stays within 25 % (measured: 21.5 % and 13.3 %).
  AlphaBetaFit fit = fit_alpha_beta(read_osu_log(kLogs + "allreduce2.log"), "ring", 65536);
  LogCheck four =
      check_alpha_beta(read_osu_log(kLogs + "allreduce4.log", 4), "ring", fit.alpha_beta(), 65536);
  LogCheck eight =
      check_alpha_beta(read_osu_log(kLogs + "allreduce8.log"), "ring", fit.alpha_beta(), 65536);
  EXPECT_EQ(eight.ranks, 8);
  EXPECT_EQ(four.used, 241u);
  EXPECT_LT(four.median_abs_rel_error, 0.25);
  EXPECT_LT(eight.median_abs_rel_error, 0.25);
}
