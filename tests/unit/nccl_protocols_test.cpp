// nccl_tuner's protocols on one node: where NCCL's tuner picks ring/LL or ring/LL128, the
// allreduce pays NCCL's latency of that protocol and its bandwidth ratio to Simple; LL128 only
// over NVLink. nccl-tests' host floor: G GPUs per thread take at least G launches.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/collectives/collective.hpp"
#include "sim/trace/nccl_calibration.hpp"

using namespace sgdsim;

namespace {

/// One node of `ranks` GPUs, NCCL's default graph for the choice (8 channels x 24 GB/s).
CollectiveGroup one_node(int ranks, bool nvlink) {
  CollectiveGroup g{ranks, ranks, 0, "ring"};
  g.launch_latency_s = 50e-6;  // a Simple latency as fitted on large messages
  g.step_latency_intra_s = 3.4e-6;
  g.intra_nvlink = nvlink;
  return g;
}

/// 1/b per byte inside the node, no alphas.
NetworkCost ideal(double b) {
  return {{0, b, 0}, {0, b, 0}};
}

}  // namespace

// 8 GPUs over NVLink: NCCL's tuner (2.8) gives ring/LL 10.18 us + n / 27.4 GB/s, ring/LL128
// 36.6 us + n / 76.3 GB/s and Simple 56 us + n / 109.7 GB/s, so LL up to about 1 MiB, LL128 at
// 2 MiB, Simple from 8 MiB. The LL time is NCCL's latency (3.6 us + 14 steps x 0.47 us) plus the
// ring's data term times 192 / 48 (Simple's bus bandwidth over LL's).
TEST(NcclProtocols, SmallMessagesTakeLlWithNcclsLatency) {
  const Collective& t = collective_by_name("nccl_tuner");
  const CollectiveGroup g = one_node(8, true);
  const double b = 1 / 200e9, kib = 1024;
  EXPECT_EQ(t.chosen(g, kib), "nccl_tuner(ring/LL)");
  EXPECT_EQ(t.chosen(g, 2048 * kib), "nccl_tuner(ring/LL128)");
  EXPECT_EQ(t.chosen(g, 8192 * kib), "nccl_tuner(ring latency)");
  const double data = 2.0 * 7 / 8 * kib * b;
  EXPECT_NEAR(t.formula_s(g, kib, ideal(b)), (3.6 + 14 * 0.47) * 1e-6 + 4 * data, 1e-12);
  const double ll128 = 2.0 * 7 / 8 * 2048 * kib * b * 192 / (16.7 * 8);
  EXPECT_NEAR(t.formula_s(g, 2048 * kib, ideal(b)), (10 + 14 * 1.9) * 1e-6 + ll128, 1e-12);
  // Simple at every size when asked, with the fitted launch latency.
  CollectiveGroup simple = g;
  simple.protocols = "simple";
  EXPECT_NEAR(t.formula_s(simple, kib, ideal(b)), 50e-6 + 14 * 3.4e-6 + data, 1e-12);
  // Across nodes nothing changes: the Simple model (tree/LL only where calibrated).
  CollectiveGroup two = g;
  two.ranks = 16;
  EXPECT_NE(t.chosen(two, kib), "nccl_tuner(ring/LL)");
}

// Over PCIe NCCL enables no LL128: 2 MiB stays on LL or goes to Simple, and LL's steps take
// NCCL's PCI latency (1 us each instead of 0.47).
TEST(NcclProtocols, PcieHasNoLl128AndItsOwnStepLatency) {
  const Collective& t = collective_by_name("nccl_tuner");
  const CollectiveGroup g = one_node(4, false);
  EXPECT_NE(t.chosen(g, 2 << 20), "nccl_tuner(ring/LL128)");
  EXPECT_EQ(t.chosen(g, 1024), "nccl_tuner(ring/LL)");
  EXPECT_NEAR(t.formula_s(g, 0, ideal(1e-12)), (3.6 + 6 * 1.0) * 1e-6, 1e-12);
}

// The floor: G >= 2 GPUs per thread take G launches per operation, one GPU per thread none;
// the launch time per GPU comes from a log's sizes <= 4 KiB over its GPUs per thread.
TEST(NcclTestsFloor, GpusPerThreadBoundAnOperationBelow) {
  EXPECT_DOUBLE_EQ(nccl_tests_floor_s(1, 4e-6), 0);
  EXPECT_DOUBLE_EQ(nccl_tests_floor_s(8, 4e-6), 32e-6);
  std::istringstream in(
      "# nThread 1 nGpus 4 minBytes 8 maxBytes 8192 step: 2(factor) warmup iters: 5\n"
      "#  Rank  0 Pid 1 on host device  0 [0x00] A100-SXM4-40GB\n"
      "#  Rank  1 Pid 1 on host device  1 [0x00] A100-SXM4-40GB\n"
      "#  Rank  2 Pid 1 on host device  2 [0x00] A100-SXM4-40GB\n"
      "#  Rank  3 Pid 1 on host device  3 [0x00] A100-SXM4-40GB\n"
      "1024 256 float sum 16.00 0.06 0.10 0 16.0 0.06 0.10 0\n"
      "2048 512 float sum 16.40 0.12 0.19 0 16.4 0.12 0.19 0\n"
      "4096 1024 float sum 17.00 0.24 0.36 0 17.0 0.24 0.36 0\n"
      "8192 2048 float sum 40.00 0.20 0.31 0 40.0 0.20 0.31 0\n");
  const NcclTestsLog log = parse_nccl_tests_log(in, "g4.log");
  EXPECT_EQ(log.gpus_per_thread, 4);
  ASSERT_TRUE(nccl_tests_launch_per_gpu_s(log).has_value());
  EXPECT_NEAR(*nccl_tests_launch_per_gpu_s(log), 16.4e-6 / 4, 1e-15);
  // A check of the log says what timed each size: the floor of 4 launches for 1 KiB.
  const LogCheck c =
      check_nccl_tests(log, collective_by_name("nccl_tuner"), NcclOptions{}, ideal(1 / 200e9), 0);
  EXPECT_EQ(c.points.front().chosen, "launch floor");
  EXPECT_NEAR(c.points.front().predicted_s, 4 * 4.36e-6, 1e-15);
  std::istringstream one("# nThread 1 nGpus 1 minBytes 8\n1024 256 float sum 16 0 0 0 16 0 0 0\n");
  EXPECT_FALSE(nccl_tests_launch_per_gpu_s(parse_nccl_tests_log(one, "g1.log", 2)).has_value());
}

// Across nodes, uncalibrated: where NCCL's tuner picks tree/LL (2 nodes of 8, 1 KiB) the latency
// is NCCL's, 4.4 us + 2 (7 intra steps x 0.52 us x 1.8 + 1 network step x 5 us); where the
// tree/LL model is calibrated, that model; LL128 across nodes stays with the Simple model.
TEST(NcclProtocols, AcrossNodesLlTakesNcclsLatencyUnlessCalibrated) {
  const Collective& t = collective_by_name("nccl_tuner");
  CollectiveGroup g = one_node(16, true);
  g.ranks_per_node = 8;
  const NetworkCost c = ideal(0);
  EXPECT_EQ(t.chosen(g, 1024), "nccl_tuner(tree/LL)");
  EXPECT_NEAR(t.formula_s(g, 1024, c), (4.4 + 2 * (7 * 0.52 * 1.8 + 5.0)) * 1e-6, 1e-12);
  CollectiveGroup fitted = g;
  fitted.tree_ll_level_Bps = 2e9;
  fitted.tree_ll_latency_s = 30e-6;
  EXPECT_NEAR(t.formula_s(fitted, 1024, c), 30e-6 + 1024 / 2e9, 1e-12);
  for (double n = 1024; n <= 1 << 30; n *= 2)
    EXPECT_EQ(t.chosen(g, n).find("LL128"), std::string::npos) << n;
}

// An allgather or reduce-scatter runs on NCCL's ring alone: p - 1 steps of latency, LL inside a
// node at a third of Simple's bandwidth (192 / 64 GB/s on 8 channels x 24 GB/s), LL128 capped
// per channel (18.3 GB/s allgather, 15.2 reduce-scatter), then the ring's messages for that
// operation; across nodes never the tree, and LL's steps are NCCL's network ones.
TEST(NcclProtocols, AllGatherAndReduceScatterRunNcclsRingWithTheirOwnSteps) {
  const Collective& t = collective_by_name("nccl_tuner");
  const double b = 1 / 200e9, kib = 1024;
  CollectiveGroup ag = one_node(8, true), rs = ag;
  ag.op = CollectiveOp::allgather;
  rs.op = CollectiveOp::reduce_scatter;
  ASSERT_FALSE(t.unsupported(CollectiveOp::allgather, ag).has_value());
  EXPECT_EQ(t.chosen(ag, kib), "nccl_tuner(ring/LL)");
  EXPECT_NEAR(t.formula_s(ag, kib, ideal(b)), (3.6 + 7 * 0.47) * 1e-6 + 3 * 7.0 / 8 * kib * b,
              1e-12);
  const double n4 = 4096 * kib, n3 = 3072 * kib;
  EXPECT_EQ(t.chosen(ag, n4), "nccl_tuner(ring/LL128)");
  EXPECT_NEAR(t.formula_s(ag, n4, ideal(b)),
              (10 + 7 * 1.9) * 1e-6 + 7.0 / 8 * n4 * b * 192 / (18.3 * 8), 1e-12);
  EXPECT_EQ(t.chosen(rs, n3), "nccl_tuner(ring/LL128)");
  EXPECT_NEAR(t.formula_s(rs, n3, ideal(b)),
              (10 + 7 * 1.9) * 1e-6 + 7.0 / 8 * n3 * b * 192 / (15.2 * 8), 1e-12);
  EXPECT_EQ(t.chosen(rs, n4), "nccl_tuner(ring latency)");
  EXPECT_NEAR(t.formula_s(rs, n4, ideal(b)), 50e-6 + 7 * 3.4e-6 + 7.0 / 8 * n4 * b, 1e-12);
  // The memory term: the 1/p share and the whole buffer (an allreduce: twice the buffer).
  CollectiveGroup mem = rs;
  mem.memory_Bps = 1e12;
  EXPECT_NEAR(t.formula_s(mem, n4, ideal(b)) - t.formula_s(rs, n4, ideal(b)), n4 * 9 / 8 / 1e12,
              1e-15);
  // Two nodes of 8: the ring, LL with NCCL's 15 steps, one of them between the nodes.
  CollectiveGroup two = ag;
  two.ranks = 16;
  two.ranks_per_node = 8;
  EXPECT_EQ(t.chosen(two, kib), "nccl_tuner(ring/LL)");
  EXPECT_NEAR(t.formula_s(two, 0, ideal(0)), (3.6 + 14 * 0.47 * 1.8 + 2.7) * 1e-6, 1e-12);
  for (double n = 1024; n <= 1 << 30; n *= 2)
    EXPECT_EQ(t.chosen(two, n).find("tree"), std::string::npos) << n;
}

// Channels per size (channel_launch): NCCL gives an 8-GPU ring/LL allreduce one channel per
// 8 x 8 x 512 = 32 KiB (getAlgoInfo), out of 2 x 8 = 16; each costs channel_launch on top of
// NCCL's latency. Simple's fitted launch latency holds all 16: a Simple allreduce of 64 KiB
// (2 channels at 64 x 512 bytes each) pays 14 fewer. Across nodes nothing changes.
TEST(NcclProtocols, ChannelLaunchFollowsNcclsChannelsPerSize) {
  const Collective& t = collective_by_name("nccl_tuner");
  const CollectiveGroup off = one_node(8, true);
  CollectiveGroup on = off;
  on.channel_launch_s = 2e-6;
  const double b = 1 / 200e9, kib = 1024;
  for (const auto& [bytes, channels] : {std::pair{16 * kib, 1}, {128 * kib, 4}, {1024 * kib, 16}})
    EXPECT_NEAR(t.formula_s(on, bytes, ideal(b)) - t.formula_s(off, bytes, ideal(b)),
                channels * 2e-6, 1e-12)
        << bytes;
  CollectiveGroup simple_off = off, simple_on = on;
  simple_off.protocols = simple_on.protocols = "simple";
  EXPECT_NEAR(
      t.formula_s(simple_on, 64 * kib, ideal(b)) - t.formula_s(simple_off, 64 * kib, ideal(b)),
      -14 * 2e-6, 1e-12);
  EXPECT_NEAR(t.formula_s(simple_on, 64 << 20, ideal(b)),
              t.formula_s(simple_off, 64 << 20, ideal(b)), 1e-15);
  CollectiveGroup two_off = off, two_on = on;
  two_off.ranks = two_on.ranks = 16;
  EXPECT_DOUBLE_EQ(t.formula_s(two_on, 128 * kib, ideal(b)),
                   t.formula_s(two_off, 128 * kib, ideal(b)));
}
