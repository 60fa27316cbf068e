// NCCL's NVLS allreduce on one node (sim/collectives/nvls.cpp): each GPU's NVLink carries
// n (1 + 1/p) each way at 0.85 of its rate, after NCCL's latency and a pipeline fill of two
// loops of NCCL's chunk rule; flow equals that formula; nccl_tuner runs it on one node of a
// preset whose NVSwitch has NVLink SHARP, and nowhere else.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;

namespace {

constexpr double kMiB = 1 << 20;
constexpr double kH100NvlinkBps = 18 * 20.6e9;  // NCCL's NVLink 4 figure x 18 links

json nvls_run(const std::string& algorithm, int ranks, int per_node, double bytes,
              const std::string& preset, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"collective",
                                   "--algorithm",
                                   algorithm,
                                   "--ranks",
                                   std::to_string(ranks),
                                   "--devices-per-node",
                                   std::to_string(per_node),
                                   "--bytes",
                                   std::to_string(static_cast<long long>(bytes)),
                                   "--node",
                                   preset,
                                   "--network-model",
                                   "ideal",
                                   "--latency",
                                   "0us",
                                   "--intra-latency",
                                   "0us",
                                   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

/// The model by hand: 23 us, then (n + 2 loops) x (1 + 1/p) at 0.85 x the NVLink rate; a loop is
/// 16 channels x p GPUs x the chunk NCCL picks for n.
double nvls_s(double n, int p, double loop_bytes) {
  const double rate = 0.85 * kH100NvlinkBps;
  return 23e-6 + (n + 2 * std::min(n, loop_bytes)) * (1 + 1.0 / p) / rate;
}

}  // namespace

// NCCL's chunk shrinks from 128 KiB to 64, 32 and 16 KiB below 64, 8 and 2 loops of the larger
// chunk: on 8 GPUs a loop is 16 MiB at 128 KiB, so 1 GiB keeps 128 KiB, 512 MiB takes 64 KiB
// (8 MiB loops), 32 MiB takes 32 KiB and 4 MiB 16 KiB; 1 MiB is less than one loop.
TEST(Nvls, FlowEqualsNcclsChunkedPipelineOnEightH100) {
  const std::vector<std::pair<double, double>> cases = {
      {1024 * kMiB, 16 * kMiB}, {512 * kMiB, 8 * kMiB}, {64 * kMiB, 8 * kMiB},
      {32 * kMiB, 4 * kMiB},    {4 * kMiB, 2 * kMiB},   {1 * kMiB, 2 * kMiB}};
  for (const auto& [n, loop] : cases) {
    const json j = nvls_run("nvls", 8, 8, n, "dgx-h100");
    const double want = nvls_s(n, 8, loop);
    EXPECT_NEAR(j["formula_s"].get<double>(), want, 1e-9 * want) << n;
    EXPECT_NEAR(j["time_s"].get<double>(), want, 1e-6 * want) << n;
    // Every GPU sends every other GPU once, after the start delay's timer.
    EXPECT_EQ(j["activities"].get<int>(), 8 * 7 + 1);
  }
}

// On 2 and 4 GPUs the per-link volume is n (1 + 1/p): 1.5 n and 1.25 n, and flow equals it.
TEST(Nvls, PerLinkVolumeFollowsTheGpuCount) {
  for (const int p : {2, 4}) {
    const double n = 1024 * kMiB;
    const json j = nvls_run("nvls", p, p, n, "dgx-h100");
    const double want = nvls_s(n, p, 16.0 * p * 128 * 1024);
    EXPECT_NEAR(j["time_s"].get<double>(), want, 1e-6 * want) << p;
  }
}

// nccl_tuner runs NVLS where NCCL 2.17+ would: one node of a preset with NVLink SHARP, above the
// sizes its LL protocol wins; the same time as nvls itself.
TEST(Nvls, NcclTunerRunsItOnOneH100Node) {
  const double n = 256 * kMiB;
  const json tuner = nvls_run("nccl_tuner", 8, 8, n, "dgx-h100");
  EXPECT_EQ(tuner["chosen"], "nccl_tuner(nvls)");
  const json nvls = nvls_run("nvls", 8, 8, n, "dgx-h100");
  EXPECT_DOUBLE_EQ(tuner["time_s"].get<double>(), nvls["time_s"].get<double>());
  EXPECT_NE(nvls_run("nccl_tuner", 8, 8, 4096, "dgx-h100")["chosen"], "nccl_tuner(nvls)")
      << "4 KiB: NCCL's LL";
}

// Not on A100 (second-generation NVSwitch), not across nodes, not with NCCL_ALGO=ring.
TEST(Nvls, NcclTunerKeepsTheRingElsewhere) {
  const double n = 256 * kMiB;
  EXPECT_NE(nvls_run("nccl_tuner", 8, 8, n, "dgx-a100")["chosen"], "nccl_tuner(nvls)");
  EXPECT_NE(nvls_run("nccl_tuner", 16, 8, n, "dgx-h100", {"--bandwidth", "400Gbps"})["chosen"],
            "nccl_tuner(nvls)");
  EXPECT_NE(nvls_run("nccl_tuner", 8, 8, n, "dgx-h100", {"--nccl-algo", "ring"})["chosen"],
            "nccl_tuner(nvls)");
}

// NVLS across nodes is not modelled: exit 2 and one line naming the option.
TEST(Nvls, RefusesSeveralNodes) {
  CliResult r = run_sgdsim({"collective", "--algorithm", "nvls", "--ranks", "16",
                            "--devices-per-node", "8", "--bytes", "1GB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--devices-per-node: nvls runs on one node"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}
