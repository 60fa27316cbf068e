// sgdsim calibrate nccl-tests: layouts from rank lines, and fits that recover known link classes.
#include "sim/trace/nccl_calibration.hpp"

#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"

using namespace sgdsim;

namespace {
const std::string kIb = SGDSIM_SOURCE_DIR "/data/calibration/nccl-tests-echo-azure-a100-ib/";
const std::string kTcp = SGDSIM_SOURCE_DIR "/data/calibration/nccl-tests-aws-p3dn-tcp/";

/// An nccl-tests log of `nodes` x `gpus` ranks whose times are `formula` at `cost`.
NcclTestsLog synthetic_log(int nodes, int gpus, const Collective& c, const NetworkCost& cost,
                           const NcclOptions& options = NcclOptions{}) {
  std::ostringstream text;
  for (int r = 0; r < nodes * gpus; ++r)
    text << "#  Rank " << r << " Pid 1 on host-" << r / gpus << " device " << r % gpus
         << " [0x00] A100\n";
  const CollectiveGroup g = nccl_group({nodes * gpus, gpus, nodes}, options);
  for (double n = 65536; n <= 1.1e9; n *= 4)
    text << static_cast<long long>(n) << " " << static_cast<long long>(n / 4) << " float sum "
         << c.formula_s(g, n, cost) * 1e6 << " 1 1 0 " << c.formula_s(g, n, cost) * 1e6
         << " 1 1 0\n";
  std::istringstream in(text.str());
  return parse_nccl_tests_log(in, "synthetic.log");
}
}  // namespace

TEST(NcclCalibration, LayoutComesFromTheRankLines) {
  auto layout = [](const std::string& f) { return nccl_layout(read_nccl_tests_log(f)); };
  NcclLayout one = layout(kIb + "nccl_8.log"), two = layout(kIb + "nccl_16.log");
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.gpus_per_node, 8);
  EXPECT_EQ(two.nodes, 2);
  EXPECT_EQ(two.gpus_per_node, 8);
  // 128 ranks whose mpirun output tags interleave inside a rank line.
  NcclLayout big = layout(kIb + "nccl_128.log");
  EXPECT_EQ(big.ranks, 128);
  EXPECT_EQ(big.nodes, 16);
  NcclLayout tcp = layout(kTcp + "4p3dn.4GPUs.log");
  EXPECT_EQ(tcp.nodes, 4);
  EXPECT_EQ(tcp.gpus_per_node, 1);
}

TEST(NcclCalibration, RecoversTheClassThatMadeTheLog) {
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta truth{7e-6, 1.0 / 20e9, 0};
  NcclFit f =
      fit_nccl_tests(synthetic_log(4, 1, ring, {truth, truth}), ring, NcclOptions{}, 65536, {});
  EXPECT_EQ(f.fitted, "inter");
  EXPECT_NEAR(f.cost.inter.alpha_s, truth.alpha_s, 1e-6 * truth.alpha_s);
  EXPECT_NEAR(f.cost.inter.beta_s_per_byte, truth.beta_s_per_byte, 1e-6 * truth.beta_s_per_byte);
  EXPECT_LT(f.median_abs_rel_error, 1e-6);
}

TEST(NcclCalibration, ComposesIntraAndInterNodeClasses) {
  const Collective& h = collective_by_name("hierarchical");
  const AlphaBeta nvlink{2e-6, 1.0 / 200e9, 0}, ib{9e-6, 1.0 / 25e9, 0};
  NcclFit one =
      fit_nccl_tests(synthetic_log(1, 4, h, {nvlink, nvlink}), h, NcclOptions{}, 65536, {});
  EXPECT_EQ(one.fitted, "intra");
  EXPECT_NEAR(one.cost.intra.beta_s_per_byte, nvlink.beta_s_per_byte,
              1e-5 * nvlink.beta_s_per_byte);
  NcclFit two =
      fit_nccl_tests(synthetic_log(2, 4, h, {ib, nvlink}), h, NcclOptions{}, 65536, one.cost.intra);
  EXPECT_NEAR(two.cost.inter.alpha_s, ib.alpha_s, 1e-4 * ib.alpha_s);
  EXPECT_NEAR(two.cost.inter.beta_s_per_byte, ib.beta_s_per_byte, 1e-5 * ib.beta_s_per_byte);
  // The calibration predicts another scale of the same cluster exactly.
  LogCheck c =
      check_nccl_tests(synthetic_log(8, 4, h, {ib, nvlink}), h, NcclOptions{}, two.cost, 65536);
  EXPECT_LT(c.max_abs_rel_error, 1e-4);
}

TEST(NcclCalibration, GpuMemoryBandwidthFromTheDatasheets) {
  EXPECT_EQ(gpu_memory_Bps("A100-SXM4-40GB"), 1555e9);
  EXPECT_EQ(gpu_memory_Bps("A100-SXM4-80GB"), 2039e9);
  EXPECT_EQ(gpu_memory_Bps("Tesla V100-SXM2-32GB"), 900e9);
  EXPECT_EQ(gpu_memory_Bps("Radeon"), 0.0);
  EXPECT_EQ(gpu_memory_Bps(read_nccl_tests_log(kIb + "nccl_2.log").device), 1555e9);
}

TEST(NcclCalibration, RefusesLogsItCannotFit) {
  std::istringstream in(
      "#  Rank 0 Pid 1 on a device 0 [0] X\n1024 256 float sum 5 1 1 0 5 1 1 0\n");
  NcclTestsLog one_rank = parse_nccl_tests_log(in, "one.log");
  EXPECT_THROW(nccl_layout(one_rank), InputError);
}

TEST(NcclCalibration, FitMaxBytesLeavesLargerSizesOut) {
  const Collective& ring = collective_by_name("ring");
  const AlphaBeta truth{7e-6, 1.0 / 20e9, 0};
  NcclTestsLog log = synthetic_log(4, 1, ring, {truth, truth});
  NcclTestsPoint outlier = log.points.back();
  outlier.size_bytes *= 4;
  outlier.time_s *= 40;  // a size the model cannot describe
  log.points.push_back(outlier);
  NcclOptions capped;
  capped.fit_max_bytes = outlier.size_bytes / 2;
  NcclFit f = fit_nccl_tests(log, ring, capped, 65536, {});
  EXPECT_NEAR(f.cost.inter.beta_s_per_byte, truth.beta_s_per_byte, 1e-6 * truth.beta_s_per_byte);
  NcclFit all = fit_nccl_tests(log, ring, NcclOptions{}, 65536, {});
  EXPECT_GT(std::abs(all.cost.inter.beta_s_per_byte - truth.beta_s_per_byte),
            0.01 * truth.beta_s_per_byte);
}

TEST(NcclCalibration, NcclTunerFitsTheLaunchLatencyAndBandwidths) {
  // nccl_tuner's per-step latencies are NCCL's table; the fit finds the launch latency and
  // the bandwidths, with link alphas 0, and predicts another scale exactly (the Simple protocol
  // at every size, so that the one-node log's launch latency is seen at every size).
  const Collective& t = collective_by_name("nccl_tuner");
  NcclOptions simple;
  simple.protocols = "simple";
  NcclOptions truth = simple;
  truth.launch_latency_s = 23e-6;
  const AlphaBeta nvlink{0, 1.0 / 200e9, 0}, ib{0, 1.0 / 25e9, 0};
  NcclFit one =
      fit_nccl_tests(synthetic_log(1, 8, t, {nvlink, nvlink}, truth), t, simple, 65536, {});
  EXPECT_EQ(one.cost.intra.alpha_s, 0.0);
  EXPECT_NEAR(one.options.launch_latency_s, 23e-6, 1e-5 * 23e-6);
  EXPECT_NEAR(one.cost.intra.beta_s_per_byte, nvlink.beta_s_per_byte,
              1e-5 * nvlink.beta_s_per_byte);
  NcclFit two =
      fit_nccl_tests(synthetic_log(2, 8, t, {ib, nvlink}, truth), t, simple, 65536, one.cost.intra);
  EXPECT_NEAR(two.options.launch_latency_s, 23e-6, 1e-5 * 23e-6);
  EXPECT_NEAR(two.cost.inter.beta_s_per_byte, ib.beta_s_per_byte, 1e-5 * ib.beta_s_per_byte);
  LogCheck c = check_nccl_tests(synthetic_log(16, 8, t, {ib, nvlink}, truth), t, two.options,
                                two.cost, 65536);
  EXPECT_LT(c.max_abs_rel_error, 1e-4);
  // With the default launch latency instead of the fitted one, small sizes miss.
  LogCheck d =
      check_nccl_tests(synthetic_log(16, 8, t, {ib, nvlink}, truth), t, simple, two.cost, 65536);
  EXPECT_GT(d.max_abs_rel_error, 1e-2);
}

// The tree/LL fit recovers the latency and per-level bandwidth that made a synthetic 8-node log,
// from the sizes where NCCL's tuner picks tree/LL only (whatever --min-bytes), and is off when
// asked or on one node.
TEST(NcclCalibration, TreeLLFitRecoversTheModelThatMadeTheLog) {
  const Collective& t = collective_by_name("nccl_tuner");
  NcclOptions truth;
  truth.launch_latency_s = 10e-6;
  truth.tree_ll_latency_s = 30e-6;
  truth.tree_ll_level_Bps = 2e9;
  const AlphaBeta ab{0, 1.0 / 100e9, 0};
  const CollectiveGroup g = nccl_group({64, 8, 8}, truth);
  std::ostringstream text;
  for (int r = 0; r < 64; ++r)
    text << "#  Rank " << r << " Pid 1 on host-" << r / 8 << " device " << r % 8
         << " [0x00] A100\n";
  int ll = 0;
  for (double n = 1024; n <= 1.1e9; n *= 2) {
    ll += nccl_tuner_picks_tree_ll(g, n);
    const double us = t.formula_s(g, n, {ab, ab}) * 1e6;
    text << static_cast<long long>(n) << " " << static_cast<long long>(n / 4) << " float sum "
         << std::setprecision(17) << us << " 1 1 0 " << us << " 1 1 0\n";
  }
  std::istringstream in(text.str());
  const NcclTestsLog log = parse_nccl_tests_log(in, "synthetic.log");
  NcclOptions start;
  const NcclFit f = fit_nccl_tests(log, t, start, 1e6, AlphaBeta{ab});
  EXPECT_GE(ll, 4);
  EXPECT_EQ(f.tree_ll_points, static_cast<size_t>(ll));
  EXPECT_NEAR(f.options.tree_ll_latency_s, 30e-6, 1e-6 * 30e-6);
  EXPECT_NEAR(f.options.tree_ll_level_Bps, 2e9, 1e-6 * 2e9);
  start.fit_tree_ll = false;
  EXPECT_EQ(fit_nccl_tests(log, t, start, 1e6, AlphaBeta{ab}).options.tree_ll_level_Bps, 0.0);
}
