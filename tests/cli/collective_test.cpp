// sgdsim collective on an ideal contention-free star equals the ring alpha-beta formula.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
json collective(int ranks, const std::string& bytes, const std::string& model,
                const std::string& bw = "10Gbps", const std::string& lat = "1us") {
  CliResult r =
      run_sgdsim({"collective", "--algorithm", "ring", "--ranks", std::to_string(ranks), "--bytes",
                  bytes, "--bandwidth", bw, "--latency", lat, "--network-model", model, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}
}  // namespace

class RingFormula : public ::testing::TestWithParam<int> {};

TEST_P(RingFormula, IdealEqualsAlphaBetaFormula) {
  const int p = GetParam();
  const double L = 1e-6, B = 10e9 / 8;
  for (const char* n : {"1KB", "64KiB", "1MB", "100MB", "1GB"}) {
    json j = collective(p, n, "ideal");
    const double bytes = j["bytes"];
    const double expected = 2.0 * (p - 1) * L + 2.0 * (p - 1) / p * bytes / B;
    EXPECT_NEAR(j["time_s"].get<double>(), expected, 1e-6 * expected) << "P=" << p << " N=" << n;
    EXPECT_NEAR(j["formula_s"].get<double>(), expected, 1e-12 * expected);
    EXPECT_EQ(j["activities"], 2 * (p - 1) * p);
  }
}

// Named by rank count (not index), so the slow filter of tests/CMakeLists.txt can name them.
INSTANTIATE_TEST_SUITE_P(Ranks, RingFormula, ::testing::Values(2, 3, 37, 64, 256),
                         ::testing::PrintToStringParamName());

TEST(Collective, DefaultNetworkModelIsSlowerThanIdeal) {
  // LV08 multiplies latency by ~13 and bandwidth by ~0.97.
  json ideal = collective(8, "1KB", "ideal"), lv08 = collective(8, "1KB", "default");
  EXPECT_GT(lv08["time_s"].get<double>(), 5 * ideal["time_s"].get<double>());
}

TEST(Collective, OneRankTakesNoTime) {
  json j = collective(1, "1MB", "ideal");
  EXPECT_EQ(j["time_s"].get<double>(), 0.0);
}

TEST(Collective, RunsOnThePlatformFileHosts) {
  CliResult r =
      run_sgdsim({"collective", "--ranks", "8", "--bytes", "1MB", "--platform",
                  "platforms/examples/4x2-56Gbps.xml", "--network-model", "ideal", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_GT(j["time_s"].get<double>(), 0);
  EXPECT_TRUE(j["formula_s"].is_null());
  CliResult too_many = run_sgdsim({"collective", "--ranks", "9", "--bytes", "1MB", "--platform",
                                   "platforms/examples/4x2-56Gbps.xml"});
  EXPECT_EQ(too_many.exit_code, 2);
}

TEST(Collective, BadArgumentsExit2) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"collective", "--ranks", "0", "--bytes", "1MB"},
           {"collective", "--ranks", "4", "--bytes", "lots"},
           {"collective", "--ranks", "4"},
           {"collective", "--algorithm", "butterfly", "--ranks", "4", "--bytes", "1MB"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--bandwidth", "fast"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--frobnicate"}}) {
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

// Every algorithm equals its formula on an ideal contention-free star at flow level.
class AlgorithmFormula : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(AlgorithmFormula, FlowEqualsFormula) {
  auto [algo, p] = GetParam();
  for (const char* n : {"8B", "1MB", "1GB"}) {
    std::vector<std::string> args = {"collective",      "--algorithm", algo,  "--ranks",
                                     std::to_string(p), "--bytes",     n,     "--bandwidth",
                                     "25Gbps",          "--latency",   "2us", "--network-model",
                                     "ideal",           "--json"};
    if (algo == "ps") args.insert(args.end(), {"--servers", std::to_string(std::min(p, 4))});
    if (algo == "hierarchical")
      args.insert(args.end(),
                  {"--devices-per-node", "4", "--intra-latency", "1us", "--latency", "3us"});
    CliResult r = run_sgdsim(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    const double f = j["formula_s"].get<double>();
    EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f) << algo << " P=" << p << " N=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AlgorithmFormula,
                         ::testing::Combine(::testing::Values("ring", "recursive_halving_doubling",
                                                              "recursive_doubling", "tree",
                                                              "hierarchical", "ps", "auto",
                                                              "double_binary_tree", "nccl"),
                                            ::testing::Values(2, 3, 5, 8, 37, 64, 128, 256)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });
// At 1,000 ranks all but "nccl" and "auto": "nccl" sends the ring's messages and "auto" picks
// among the others, so their 1,000-rank runs repeated the ring's flow-level work (minutes of CI
// each) without a new code path; both are tested up to 256 ranks above.
INSTANTIATE_TEST_SUITE_P(
    Algorithms1000, AlgorithmFormula,
    ::testing::Combine(::testing::Values("ring", "recursive_halving_doubling", "recursive_doubling",
                                         "tree", "hierarchical", "ps", "double_binary_tree"),
                       ::testing::Values(1000)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
    });
// nccl_tuner's messages are the ring's (tested to 1,000 ranks above): its start delay is what
// is new, so fewer ranks suffice.
INSTANTIATE_TEST_SUITE_P(NcclTuner, AlgorithmFormula,
                         ::testing::Combine(::testing::Values("nccl_tuner"),
                                            ::testing::Values(2, 3, 5, 8, 37, 64, 128)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// NCCL-style pipelining (chunks, channels, chain hierarchy, reduction cost) equals its formula
// too: each variant's options, then the ranks.
class PipelinedFormula
    : public ::testing::TestWithParam<std::tuple<std::vector<std::string>, int>> {};

TEST_P(PipelinedFormula, FlowEqualsFormula) {
  const auto& [options, p] = GetParam();
  for (const char* n : {"8B", "1MB", "1GB"}) {
    std::vector<std::string> args = {
        "collective",  "--ranks", std::to_string(p), "--bytes", n,
        "--bandwidth", "25Gbps",  "--latency",       "3us",     "--network-model",
        "ideal",       "--json",  "--intra-latency", "1us",     "--intra-bandwidth",
        "100GBps"};
    args.insert(args.end(), options.begin(), options.end());
    CliResult r = run_sgdsim(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    const double f = j["formula_s"].get<double>();
    EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f) << options[1] << " P=" << p << " N=" << n;
  }
}

using Options = std::vector<std::string>;
INSTANTIATE_TEST_SUITE_P(
    Nccl, PipelinedFormula,
    ::testing::Combine(
        ::testing::Values(
            Options{"--algorithm", "ring", "--chunk-bytes", "1MiB", "--channels", "2"},
            Options{"--algorithm", "ring", "--chunk-bytes", "1MiB", "--devices-per-node", "4"},
            Options{"--algorithm", "double_binary_tree", "--chunk-bytes", "1MiB", "--channels", "2",
                    "--reduction-speed", "40GBps"},
            Options{"--algorithm", "hierarchical", "--intra-algorithm", "chain",
                    "--inter-algorithm", "double_binary_tree", "--chunk-bytes", "1MiB",
                    "--devices-per-node", "4"},
            Options{"--algorithm", "hierarchical", "--intra-algorithm", "chain",
                    "--inter-algorithm", "ring", "--chunk-bytes", "16MiB", "--channels", "2",
                    "--devices-per-node", "4", "--reduction-speed", "40GBps"},
            Options{"--algorithm", "nccl", "--chunk-bytes", "1MiB", "--devices-per-node", "4"},
            Options{"--algorithm", "nccl_tuner", "--chunk-bytes", "1MiB", "--devices-per-node", "4",
                    "--channels", "2"}),
        ::testing::Values(2, 3, 5, 8, 37, 64, 128)),
    [](const auto& info) {
      const Options& o = std::get<0>(info.param);
      std::string name = o[1] + "_" + std::to_string(info.index / 7);
      return name + "_" + std::to_string(std::get<1>(info.param));
    });

// The two-dimensional ring (intra-node rings around the leaders' algorithm) on full nodes.
class IntraRingFormula : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(IntraRingFormula, FlowEqualsFormula) {
  const auto& [inter, p] = GetParam();
  for (const char* n : {"8B", "1MB", "1GB"}) {
    CliResult r = run_sgdsim({"collective",
                              "--algorithm",
                              "hierarchical",
                              "--intra-algorithm",
                              "ring",
                              "--inter-algorithm",
                              inter,
                              "--ranks",
                              std::to_string(p),
                              "--bytes",
                              n,
                              "--devices-per-node",
                              "4",
                              "--bandwidth",
                              "25Gbps",
                              "--latency",
                              "3us",
                              "--intra-bandwidth",
                              "100GBps",
                              "--intra-latency",
                              "1us",
                              "--chunk-bytes",
                              "1MiB",
                              "--reduction-speed",
                              "40GBps",
                              "--network-model",
                              "ideal",
                              "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    const double f = j["formula_s"].get<double>();
    EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f) << inter << " P=" << p << " N=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Nccl, IntraRingFormula,
                         ::testing::Combine(::testing::Values("ring", "double_binary_tree",
                                                              "recursive_halving_doubling"),
                                            ::testing::Values(4, 8, 12, 36, 64, 128)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(Collective, PipelinedAnalyticEqualsFlow) {
  for (const Options& o :
       {Options{"--algorithm", "ring", "--chunk-bytes", "256KiB", "--channels", "2"},
        Options{"--algorithm", "double_binary_tree", "--chunk-bytes", "256KiB", "--channels", "2"},
        Options{"--algorithm", "hierarchical", "--intra-algorithm", "chain", "--inter-algorithm",
                "double_binary_tree", "--chunk-bytes", "256KiB", "--devices-per-node", "4"},
        Options{"--algorithm", "nccl", "--chunk-bytes", "256KiB", "--devices-per-node", "4"},
        Options{"--algorithm", "hierarchical", "--intra-algorithm", "ring", "--inter-algorithm",
                "double_binary_tree", "--chunk-bytes", "256KiB", "--devices-per-node", "4"}}) {
    auto time = [&](const char* fidelity) {
      std::vector<std::string> args = {"collective", "--ranks",         "16",    "--bytes",
                                       "4MB",        "--network-model", "ideal", "--fidelity",
                                       fidelity,     "--json"};
      args.insert(args.end(), o.begin(), o.end());
      CliResult r = run_sgdsim(args);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      return json::parse(r.out)["time_s"].get<double>();
    };
    const double flow = time("flow");
    EXPECT_NEAR(time("analytic"), flow, 1e-6 * flow) << o[1];
  }
}

TEST(Collective, NcclReportsItsChoice) {
  auto chosen = [](const char* bytes) {
    CliResult r = run_sgdsim({"collective", "--algorithm", "nccl", "--ranks", "64",
                              "--devices-per-node", "8", "--bytes", bytes, "--chunk-bytes",
                              "512KiB", "--network-model", "ideal", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["chosen"].get<std::string>();
  };
  // Latency-bound: NCCL's tree (chain in the node, double binary tree across); large: the ring.
  EXPECT_EQ(chosen("8B"), "hierarchical(chain, double_binary_tree)");
  EXPECT_EQ(chosen("100MB"), "ring");
}

TEST(Collective, PipeliningOptionsAreChecked) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"collective", "--ranks", "4", "--bytes", "1MB", "--chunk-bytes", "100B"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--channels", "0"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--intra-algorithm", "butterfly"},
           {"collective", "--algorithm", "hierarchical", "--ranks", "6", "--devices-per-node", "4",
            "--bytes", "1MB", "--intra-algorithm", "ring"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--inter-algorithm", "nccl"},
           {"collective", "--algorithm", "nccl", "--ranks", "4", "--bytes", "1MB", "--platform",
            "platforms/examples/4x2-56Gbps.xml"}}) {
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

TEST(Collective, AnalyticEqualsFlowWithoutContention) {
  for (const char* algo : {"ring", "recursive_halving_doubling", "recursive_doubling", "tree",
                           "auto", "double_binary_tree", "nccl"}) {
    for (const char* model : {"ideal", "default"}) {
      auto time = [&](const char* fidelity) {
        CliResult r =
            run_sgdsim({"collective", "--algorithm", algo, "--ranks", "16", "--bytes", "4MB",
                        "--network-model", model, "--fidelity", fidelity, "--json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return json::parse(r.out);
      };
      json flow = time("flow"), analytic = time("analytic");
      EXPECT_EQ(analytic["activities"], 1);
      if (std::string(model) == "ideal")
        EXPECT_NEAR(analytic["time_s"].get<double>(), flow["time_s"].get<double>(),
                    1e-6 * flow["time_s"].get<double>())
            << algo;
      else  // LV08's factors apply to both; flow adds its cross-traffic on top
        EXPECT_LE(analytic["time_s"].get<double>(), flow["time_s"].get<double>() * 1.0001) << algo;
    }
  }
}

// With several devices per node the node link's latency is what --latency leaves above
// --intra-latency: a technology with a per-message overhead needs it above 0, and the error says
// which flag to raise.
TEST(Collective, NodeLinkLatencyLeftByIntraLatencyIsNamed) {
  const std::vector<std::string> base = {
      "collective", "--algorithm", "ring", "--ranks",         "16",    "--devices-per-node",
      "8",          "--bytes",     "1MB",  "--network-model", "links", "--technology",
      "rdma"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--latency", "1us"});
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("so give --latency above --intra-latency"), std::string::npos) << r.err;
  args = base;
  args.insert(args.end(), {"--latency", "3us"});
  EXPECT_EQ(run_sgdsim(args).exit_code, 0);
}

TEST(Collective, ReductionSpeedAddsTheGammaTerm) {
  CliResult r = run_sgdsim({"collective", "--algorithm", "ring", "--ranks", "8", "--bytes", "64MB",
                            "--reduction-speed", "20GBps", "--network-model", "ideal", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  const double no_gamma = 2.0 * 7 * 1e-6 + 2.0 * 7 / 8 * 64e6 / 1.25e9;
  EXPECT_NEAR(j["formula_s"].get<double>(), no_gamma + 7.0 / 8 * 64e6 / 20e9, 1e-12);
  EXPECT_NEAR(j["time_s"].get<double>(), j["formula_s"].get<double>(),
              1e-6 * j["formula_s"].get<double>());
}

TEST(Collective, PlatformFileHostsFollowDeclarationOrder) {
  // 4 nodes x 2 devices: the file's first 8 hosts are node-0-dev-0, node-0-dev-1, node-1-dev-0...
  // so the ring crosses each node link once, exactly like the generated equivalent.
  CliResult file =
      run_sgdsim({"collective", "--ranks", "8", "--bytes", "8MB", "--platform",
                  "platforms/examples/4x2-56Gbps.xml", "--network-model", "ideal", "--json"});
  CliResult gen =
      run_sgdsim({"collective", "--ranks", "8", "--bytes", "8MB", "--devices-per-node", "2",
                  "--bandwidth", "56Gbps", "--latency", "4us", "--intra-bandwidth", "16GBps",
                  "--intra-latency", "2us", "--network-model", "ideal", "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NEAR(json::parse(file.out)["time_s"].get<double>(),
              json::parse(gen.out)["formula_s"].get<double>(), 1e-9);
}

TEST(Collective, OversubscribedFatTreeShowsContention) {
  auto time = [](const std::string& algo, const std::string& oversub, const std::string& per_leaf) {
    fs::path xml = temp_path("ft.xml");
    CliResult p = run_sgdsim({"platform", "--topology", "fat_tree", "--nodes", "16",
                              "--nodes-per-leaf", per_leaf, "--oversubscription", oversub,
                              "--node-bandwidth", "10Gbps", "--output", xml.string()});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    CliResult r = run_sgdsim({"collective", "--algorithm", algo, "--ranks", "16", "--bytes", "64MB",
                              "--platform", xml.string(), "--network-model", "ideal", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    fs::remove(xml);
    return json::parse(r.out)["time_s"].get<double>();
  };
  // Recursive doubling's last two rounds send every rank's whole buffer across the leaves at
  // once: at 2:1 those rounds take twice as long (1.5x in all).
  EXPECT_NEAR(time("recursive_doubling", "2", "4"), 1.5 * time("recursive_doubling", "1", "4"),
              0.01 * time("recursive_doubling", "2", "4"));
  // A block-placed ring crosses each leaf boundary with one flow, so it is only slowed once a
  // leaf uplink is narrower than a node link (2 nodes per leaf at 4:1).
  EXPECT_NEAR(time("ring", "2", "4"), time("ring", "1", "4"), 1e-9);
  EXPECT_GT(time("ring", "4", "2"), 1.5 * time("ring", "1", "2"));
}

// calibrate nccl-tests with nccl_tuner: the memory term comes from the log's GPU, is what makes
// the 2-GPU NVLink calibration predict 8 GPUs, and the new options reject bad values.
TEST(CalibrateNcclTests, NcclTunerUsesTheDatasheetMemoryBandwidthAndChecksItsOptions) {
  const std::string ib = "data/calibration/nccl-tests-echo-azure-a100-ib/";
  auto calibrate = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"calibrate", "nccl-tests",      ib + "nccl_2.log",
                                     "--check",   ib + "nccl_8.log", "--min-bytes",
                                     "1MB",       "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sgdsim(args);
  };
  CliResult r = calibrate({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["algorithm"], "nccl_tuner");
  EXPECT_EQ(j["memory_bandwidth_Bps"].get<double>(), 1555e9);
  ASSERT_EQ(j["checks"].size(), 1u);  // one per --check
  EXPECT_LT(j["checks"][0]["median_abs_rel_error"].get<double>(), 0.10);
  CliResult off = calibrate({"--memory-bandwidth", "0"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_GT(json::parse(off.out)["checks"][0]["median_abs_rel_error"].get<double>(), 0.10);
  // The channel cost, fitted on the 2-GPU log, puts 8 GPUs' 128 KiB - 4 MiB within 25 %; with
  // it off they are up to 40 % too fast.
  auto worst_mid = [](const json& check) {
    double worst = 0;
    for (const json& p : check["points"])
      if (p["bytes"].get<double>() >= 131072 && p["bytes"].get<double>() <= 4194304)
        worst = std::max(worst, std::abs(p["rel_error"].get<double>()));
    return worst;
  };
  EXPECT_GT(j["channel_launch_s"].get<double>(), 1e-6);
  EXPECT_LT(j["channel_launch_s"].get<double>(), 4e-6);
  EXPECT_LT(worst_mid(j["checks"][0]), 0.25);
  CliResult no_channels = calibrate({"--channel-launch", "0"});
  ASSERT_EQ(no_channels.exit_code, 0) << no_channels.err;
  EXPECT_GT(worst_mid(json::parse(no_channels.out)["checks"][0]), 0.35);
  for (const auto& [opt, value, message] :
       {std::tuple<std::string, std::string, std::string>{
            "--technology", "ib", "--technology: expected tcp, rdma, nvlink, pcie or custom"},
        {"--memory-bandwidth", "fast", "--memory-bandwidth: expected a bandwidth"},
        {"--channel-launch", "2", "--channel-launch: expected a time"}}) {
    CliResult bad = calibrate({opt, value});
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
  }
}

// nccl_tuner's allgather and reduce-scatter on one and two DGX A100 nodes: flow equals the closed
// form at every protocol NCCL's tuner picks for them, and never on its tree.
TEST(CollectiveCommand, NcclTunerAllGatherAndReduceScatterFlowMatchesItsFormula) {
  for (const char* op : {"allgather", "reduce_scatter"})
    for (const char* ranks : {"8", "16"})
      for (const char* bytes : {"1KiB", "4MiB", "256MiB"}) {
        CliResult r =
            run_sgdsim({"collective", "--algorithm", "nccl_tuner", "--operation", op, "--ranks",
                        ranks, "--devices-per-node", "8", "--node", "dgx-a100", "--bandwidth",
                        "1600Gbps", "--bytes", bytes, "--network-model", "ideal", "--json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json j = json::parse(r.out);
        const std::string where = std::string(op) + " " + ranks + " " + bytes;
        EXPECT_NEAR(j["time_s"].get<double>(), j["formula_s"].get<double>(),
                    1e-9 * j["formula_s"].get<double>())
            << where;
        EXPECT_EQ(j["operation"], op) << where;
        EXPECT_EQ(j["chosen"].get<std::string>().find("tree"), std::string::npos) << where;
      }
}

// nccl_tuner on one NVLink node (preset dgx-a100): LL for small sizes, LL128 at 2 MiB, Simple
// for large, each at flow fidelity equal to its closed form on the ideal network; nccl-tests'
// floor with 8 GPUs per thread is 8 launches, with one GPU per thread none.
TEST(CollectiveCommand, NcclTunerOneNodeProtocolsFlowMatchesItsFormula) {
  auto run = [](const std::string& bytes, const std::string& per_thread) {
    CliResult r =
        run_sgdsim({"collective", "--algorithm", "nccl_tuner", "--ranks", "8", "--devices-per-node",
                    "8", "--node", "dgx-a100", "--bytes", bytes, "--network-model", "ideal",
                    "--gpus-per-thread", per_thread, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  for (const auto& [bytes, chosen] : {std::pair{"256KiB", "nccl_tuner(ring/LL)"},
                                      {"2MiB", "nccl_tuner(ring/LL128)"},
                                      {"64MiB", "nccl_tuner(ring latency)"}}) {
    const json j = run(bytes, "1");
    EXPECT_EQ(j["chosen"], chosen) << bytes;
    EXPECT_NEAR(j["time_s"].get<double>(), j["formula_s"].get<double>(),
                1e-9 * j["formula_s"].get<double>())
        << bytes;
  }
  const json one = run("1KiB", "1"), eight = run("1KiB", "8");
  EXPECT_LT(one["time_s"].get<double>(), 8 * 4.36e-6);
  EXPECT_NEAR(eight["time_s"].get<double>(), 8 * 4.36e-6, 1e-12);
  EXPECT_EQ(eight["chosen"], "launch floor");
  EXPECT_EQ(one["chosen"], "nccl_tuner(ring/LL)");
  EXPECT_NEAR(eight["formula_s"].get<double>(), 8 * 4.36e-6, 1e-12);
  // A thread cannot launch more GPUs than there are ranks.
  CliResult r =
      run_sgdsim({"collective", "--ranks", "2", "--bytes", "1KiB", "--gpus-per-thread", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus-per-thread: expected an integer from 1 to --ranks (2), got \"4\""),
            std::string::npos)
      << r.err;
  CliResult t = run_sgdsim({"collective", "--ranks", "2", "--bytes", "1KiB", "--gpus-per-thread",
                            "2", "--launch-per-gpu", "-1us"});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("--launch-per-gpu: expected a time such as \"4us\", got \"-1us\""),
            std::string::npos)
      << t.err;
  CliResult p = run_sgdsim({"calibrate", "nccl-tests",
                            std::string(SGDSIM_SOURCE_DIR) +
                                "/data/calibration/nccl-tests-echo-azure-a100-ib/nccl_2.log",
                            "--protocols", "ll"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--protocols: expected auto or simple, got \"ll\""), std::string::npos)
      << p.err;
}

// nccl_tuner's staged ring at flow fidelity: the ring's messages plus a start delay of what its
// slices add beyond them, so on the ideal network the simulated time is the closed form's.
TEST(CollectiveCommand, NcclTunerStagedRingFlowMatchesItsFormula) {
  for (const std::string bytes : {"4MB", "16MB", "100MB"}) {
    CliResult r = run_sgdsim({"collective", "--algorithm",
                              "nccl_tuner", "--ranks",
                              "4",          "--bytes",
                              bytes,        "--bandwidth",
                              "40Gbps",     "--latency",
                              "0us",        "--network-model",
                              "ideal",      "--tuner-channels",
                              "2",          "--tuner-channel-bandwidth",
                              "12GBps",     "--staged-host-bandwidth",
                              "12GBps",     "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["chosen"], "nccl_tuner(ring, staged)") << bytes;
    EXPECT_NEAR(j["time_s"].get<double>(), j["formula_s"].get<double>(),
                1e-9 * j["formula_s"].get<double>())
        << bytes;
  }
}

// A scenario with the staged ring (4 nodes of one GPU over sockets) takes the same time at flow
// fidelity as at analytic: the runner gives the schedule the route costs for its start delay.
TEST(CollectiveCommand, NcclTunerStagedRingScenarioFlowMatchesAnalytic) {
  const std::vector<std::string> staged = {"platform.generate.devices_per_node=1",
                                           "workers.per_node=1",
                                           "workers.count=4",
                                           "platform.generate.node_link.bandwidth=\"45.78Gbps\"",
                                           "collective.launch_latency=\"241us\"",
                                           "collective.tuner_channels=2",
                                           "collective.tuner_channel_bandwidth=\"12GBps\"",
                                           "collective.staged_host_bandwidth=\"12GBps\""};
  auto comm_s = [&](const std::string& fidelity) {
    std::vector<std::string> sets = staged;
    sets.push_back("fidelity=\"" + fidelity + "\"");
    return run_scenario_summary("experiments/examples/18-nccl-tuner-a100-ib.json", sets)
        .at("comm_s_per_iter")
        .get<double>();
  };
  const double flow = comm_s("flow"), analytic = comm_s("analytic");
  EXPECT_NEAR(flow, analytic, 1e-9 * analytic);
}

// Issue 17's InfiniBand bounds: calibrated on the 2-node (16-GPU) log alone (and the one-node
// log for the intra-node class), 32, 64 and 128 GPUs are within 10 % at the median over sizes
// >= 1 MB and within 25 % at every size >= 64 KiB. The 128 KiB point on 8 and 16 nodes needs the
// tree/LL model: NCCL's tuner still picks tree/LL there, and without it the error is about 50 %.
TEST(CalibrateNcclTests, InfiniBandFromTwoNodesPredictsEveryScale) {
  const std::string ib = "data/calibration/nccl-tests-echo-azure-a100-ib/";
  auto calibrate = [&](const std::string& min_bytes, const std::string& tree_ll) {
    CliResult r =
        run_sgdsim({"calibrate", "nccl-tests", ib + "nccl_16.log", "--intra", ib + "nccl_8.log",
                    "--check", ib + "nccl_32.log", "--check", ib + "nccl_64.log", "--check",
                    ib + "nccl_128.log", "--min-bytes", min_bytes, "--tree-ll", tree_ll, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json big = calibrate("1MB", "on"), small = calibrate("64KiB", "on");
  EXPECT_EQ(big["tree_ll_points"], 7);  // 1 KiB to 64 KiB on two nodes
  EXPECT_GT(big["tree_ll_level_bandwidth_Bps"].get<double>(), 0);
  ASSERT_EQ(big["checks"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_LT(big["checks"][i]["median_abs_rel_error"].get<double>(), 0.10) << i;
    EXPECT_LT(small["checks"][i]["max_abs_rel_error"].get<double>(), 0.25) << i;
  }
  const json off = calibrate("64KiB", "off");
  EXPECT_EQ(off["tree_ll_level_bandwidth_Bps"].get<double>(), 0);
  EXPECT_GT(off["checks"][2]["max_abs_rel_error"].get<double>(), 0.40);
  for (const auto& [opt, value, message] :
       {std::tuple<std::string, std::string, std::string>{"--tree-ll", "maybe",
                                                          "--tree-ll: expected on or off"},
        {"--tuner-channels", "0", "--tuner-channels: expected an integer from 1 to 64"},
        {"--tuner-channel-bandwidth", "fast", "--tuner-channel-bandwidth: expected a bandwidth"}}) {
    CliResult bad = run_sgdsim({"calibrate", "nccl-tests", ib + "nccl_16.log", opt, value});
    EXPECT_EQ(bad.exit_code, 2) << opt;
    EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
  }
}

// All-gather and reduce-scatter on the ideal star: flow level and analytic equal the formula,
// and the ring's is (p-1)(a + n/p b).
class OperationFormula
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, int>> {};

TEST_P(OperationFormula, FlowAndAnalyticEqualFormula) {
  auto [algo, op, p] = GetParam();
  const double L = 2e-6, B = 25e9 / 8;
  for (const char* n : {"8B", "1MB", "1GB"})
    for (const char* fidelity : {"flow", "analytic"}) {
      std::vector<std::string> args = {"collective",
                                       "--algorithm",
                                       algo,
                                       "--ranks",
                                       std::to_string(p),
                                       "--bytes",
                                       n,
                                       "--bandwidth",
                                       "25Gbps",
                                       "--latency",
                                       "2us",
                                       "--operation",
                                       op,
                                       "--network-model",
                                       "ideal",
                                       "--fidelity",
                                       fidelity,
                                       "--json"};
      if (algo == "hierarchical")
        args.insert(args.end(),
                    {"--devices-per-node", "4", "--intra-latency", "1us", "--latency", "3us"});
      CliResult r = run_sgdsim(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      json j = json::parse(r.out);
      EXPECT_EQ(j["operation"], op);
      const double f = j["formula_s"].get<double>(), bytes = j["bytes"].get<double>();
      EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f) << algo << " " << op << " P=" << p;
      if (algo == "ring" || algo == "nccl") {
        EXPECT_NEAR(f, (p - 1) * (L + bytes / p / B), 1e-12 * f) << p << " " << n;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Operations, OperationFormula,
                         ::testing::Combine(::testing::Values("ring", "recursive_halving_doubling",
                                                              "auto", "hierarchical", "nccl"),
                                            ::testing::Values("allgather", "reduce_scatter"),
                                            ::testing::Values(8, 64)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::to_string(std::get<2>(info.param));
                         });
INSTANTIATE_TEST_SUITE_P(RingOperations, OperationFormula,
                         ::testing::Combine(::testing::Values("ring"),
                                            ::testing::Values("allgather", "reduce_scatter"),
                                            ::testing::Values(2, 3, 37, 256)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(Collective, OperationsAreChecked) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"collective", "--ranks", "4", "--bytes", "1MB", "--operation", "alltoall"},
           {"collective", "--algorithm", "tree", "--ranks", "4", "--bytes", "1MB", "--operation",
            "allgather"},
           {"collective", "--algorithm", "rhd", "--ranks", "6", "--bytes", "1MB", "--operation",
            "reduce_scatter"}}) {
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

namespace {
/// `collective --json` of a ring of `ranks` moving 100 MB on the ideal 10 Gb/s, 5 us star.
json ideal_ring(int ranks, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"collective",          "--algorithm", "ring",        "--ranks",
                                   std::to_string(ranks), "--bytes",     "100MB",       "--json",
                                   "--network-model",     "ideal",       "--bandwidth", "10Gbps",
                                   "--latency",           "5us"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}
}  // namespace

// MPI's ring copies the send buffer before its first message: on the ideal network the time is
// the ring's formula plus bytes / copy_bandwidth, at both fidelities, for an allreduce only; an
// algorithm that does not declare the option refuses it.
TEST(CollectiveCommand, RingCopyIsPaidOnceBeforeTheRing) {
  auto time_of = [](const std::vector<std::string>& extra) { return ideal_ring(5, extra); };
  const double ring = time_of({})["time_s"];
  const double copy = 100e6 / 2e9;
  for (const std::string fidelity : {"flow", "analytic"}) {
    json j = time_of({"--copy-bandwidth", "2GBps", "--fidelity", fidelity});
    EXPECT_NEAR(j["time_s"].get<double>(), ring + copy, 1e-9) << fidelity;
    EXPECT_NEAR(j["formula_s"].get<double>(), ring + copy, 1e-9) << fidelity;
  }
  const double gather = time_of({"--operation", "allgather"})["time_s"];
  EXPECT_EQ(time_of({"--operation", "allgather", "--copy-bandwidth", "2GBps"})["time_s"], gather);
  CliResult other = run_sgdsim({"collective", "--algorithm", "rhd", "--ranks", "4", "--bytes",
                                "1MB", "--copy-bandwidth", "2GBps"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(count_lines(other.err), 1) << other.err;
  EXPECT_NE(other.err.find("--copy-bandwidth: only algorithm \"ring\" uses it"), std::string::npos)
      << other.err;
}

// K jobs on the same ranks: in lockstep on the ideal network each link is shared K ways, so an
// operation takes the ring's latency plus K times its transfer; spread jobs, one job repeated
// and analytic jobs (no contention) check the other cases; --platform needs an offset.
TEST(CollectiveCommand, ConcurrentJobsShareTheNetwork) {
  const int p = 4;
  const double L = 5e-6, B = 10e9 / 8, n = 100e6;
  auto run = [](const std::vector<std::string>& extra) { return ideal_ring(4, extra); };
  const double alone = 2.0 * (p - 1) * L + 2.0 * (p - 1) / p * n / B;
  for (int k : {2, 3}) {
    json j = run({"--jobs", std::to_string(k), "--iterations", "3", "--job-offset", "0s"});
    const double shared = 2.0 * (p - 1) * L + k * 2.0 * (p - 1) / p * n / B;
    EXPECT_NEAR(j["time_s"].get<double>(), shared, 1e-9 * shared) << k;
    ASSERT_EQ(j["job_operation_s"].size(), static_cast<size_t>(k));
    EXPECT_EQ(j["job_offset_s"].get<double>(), 0.0);
  }
  // Spread evenly (the default offset), two jobs keep the links busier: less than lockstep,
  // more than alone.
  json spread = run({"--jobs", "2", "--iterations", "10"});
  EXPECT_NEAR(spread["job_offset_s"].get<double>(), spread["formula_s"].get<double>() / 2, 1e-15);
  EXPECT_GT(spread["time_s"].get<double>(), alone * 1.01);
  EXPECT_LT(spread["time_s"].get<double>(), 2 * alone);
  EXPECT_NEAR(run({"--iterations", "5"})["time_s"].get<double>(), alone, 1e-9 * alone);
  EXPECT_NEAR(run({"--jobs", "3", "--fidelity", "analytic"})["time_s"].get<double>(), alone,
              1e-9 * alone);
  CliResult bad = run_sgdsim({"collective", "--ranks", "2", "--bytes", "1MB", "--platform",
                              "platforms/bcaffe-k80-10gbe.xml", "--jobs", "2"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(count_lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--jobs with --platform needs --job-offset"), std::string::npos)
      << bad.err;
}
