// A node preset's host path in a whole simulation: a BERT-Large allreduce (1.34 GB) on one
// node of 4 PCIe GPUs without P2P or GPUDirect takes the ring's time at the SHM hop's rate,
// through `sgdsim collective --node` and through a scenario's platform.generate.node.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kBertLargeBytes = 1.34e9;

json ring_on_node(const std::string& preset, const std::string& fidelity) {
  CliResult r =
      run_sgdsim({"collective", "--algorithm", "ring", "--ranks", "4", "--devices-per-node", "4",
                  "--bytes", "1.34GB", "--node", preset, "--latency", "2us", "--network-model",
                  "ideal", "--fidelity", fidelity, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

/// Ring allreduce over 4 ranks: 2(n-1) steps of alpha, 2(n-1)/n x bytes at `rate_Bps`.
double ring_s(double alpha_s, double rate_Bps) {
  return 2.0 * 3 * alpha_s + 2.0 * 3 / 4 * kBertLargeBytes / rate_Bps;
}

}  // namespace

TEST(HostPathCli, BertLargeAllreduceOnPcieNodeTakesShmTime) {
  // SHM hop: PCIe Gen3 x16 12 GB/s x 5/6 (Intel root complex) = 10 GB/s; alpha 1 us.
  const json flow = ring_on_node("pcie-4gpu-1nic", "flow");
  const double expected_s = ring_s(1e-6, 10e9);
  EXPECT_NEAR(flow["time_s"].get<double>(), expected_s, 1e-6 * expected_s);
  EXPECT_NEAR(flow["formula_s"].get<double>(), expected_s, 1e-6 * expected_s);
  const json analytic = ring_on_node("pcie-4gpu-1nic", "analytic");
  EXPECT_NEAR(analytic["time_s"].get<double>(), flow["time_s"].get<double>(), 1e-6 * expected_s);
  // Over a DGX-1's NVLink (6 links x NCCL's 20 GB/s) the same allreduce is 12x faster.
  const json nvlink = ring_on_node("dgx1-v100", "flow");
  EXPECT_NEAR(nvlink["time_s"].get<double>(), ring_s(1e-6, 120e9), 1e-6 * ring_s(1e-6, 120e9));
  EXPECT_GT(flow["time_s"].get<double>() / nvlink["time_s"].get<double>(), 11.0);
}

TEST(HostPathCli, ScenarioNodeGivesThePlatformItsHostPath) {
  const fs::path dir = temp_path("host_path");
  fs::create_directories(dir);
  {
    std::ofstream(dir / "s.json")
        << R"({"model": "bert_large", "workers": {"count": 4, "per_node": 4},
              "platform": {"generate": {"topology": "star", "nodes": 1,
                                        "node": "pcie-4gpu-1nic"}}})";
  }
  CliResult p =
      run_sgdsim({"platform", (dir / "s.json").string(), "--output", (dir / "p.xml").string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string xml = slurp(dir / "p.xml");
  EXPECT_NE(xml.find(R"(id="node-0-dev-0-link" bandwidth="10000000000Bps")"), std::string::npos);
  // The one staged NIC (12 GB/s of PCIe) caps the 100 Gb/s default node link.
  EXPECT_NE(xml.find(R"(id="node-0-link" bandwidth="12000000000Bps")"), std::string::npos);
  CliResult r = run_sgdsim({"collective", "--platform", (dir / "p.xml").string(), "--ranks", "4",
                            "--bytes", "1.34GB", "--network-model", "ideal", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Device to device crosses two 1 us intra-node links: alpha 2 us.
  const double expected_s = ring_s(2e-6, 10e9);
  EXPECT_NEAR(json::parse(r.out)["time_s"].get<double>(), expected_s, 1e-6 * expected_s);
  fs::remove_all(dir);
}

TEST(HostPathCli, BadNodeOptions) {
  const std::vector<std::string> base = {"collective", "--ranks", "8", "--bytes", "1MB"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sgdsim(args);
  };
  CliResult r = run({"--devices-per-node", "4", "--node", "dgx2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--node: expected dgx-a100, dgx1-v100, p3dn.24xlarge, p4d.24xlarge, "
                       "pcie-4gpu-1nic, got \"dgx2\""),
            std::string::npos)
      << r.err;
  r = run({"--devices-per-node", "8", "--node", "pcie-4gpu-1nic"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--devices-per-node: expected at most 4"), std::string::npos) << r.err;
  r = run({"--devices-per-node", "4", "--node", "dgx1-v100", "--intra-bandwidth", "16GBps"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("either --node or --intra-bandwidth"), std::string::npos) << r.err;
  r = run({"--node", "dgx1-v100", "--platform", "platforms/ib56-gpu-cluster.xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("either --platform or --node"), std::string::npos) << r.err;
}
