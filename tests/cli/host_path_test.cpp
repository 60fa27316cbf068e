// A node preset's host path in a whole simulation: a BERT-Large allreduce (1.34 GB) on one
// node of 4 PCIe GPUs without P2P or GPUDirect takes the ring's time at the SHM hop's rate,
// through `sgdsim collective --node` and through a scenario's platform.generate.node.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kBertLargeBytes = 1.34e9;

json ring_on_node(const std::string& preset, const std::string& fidelity, int gpus = 4,
                  const std::string& model = "ideal") {
  const std::string n = std::to_string(gpus);
  CliResult r = run_sgdsim({"collective", "--algorithm", "ring", "--ranks", n, "--devices-per-node",
                            n, "--bytes", "1.34GB", "--node", preset, "--latency", "2us",
                            "--network-model", model, "--fidelity", fidelity, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

/// Ring allreduce over n ranks: 2(n-1) steps of alpha, 2(n-1)/n x bytes at `rate_Bps`.
double ring_s(double alpha_s, double rate_Bps, int n = 4) {
  return 2.0 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * kBertLargeBytes / rate_Bps;
}

/// nccl-tests' bus bandwidth of an allreduce result: bytes / time x 2(n-1)/n.
double busbw_Bps(const json& r, int n) {
  return kBertLargeBytes / r["time_s"].get<double>() * 2.0 * (n - 1) / n;
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

TEST(HostPathCli, TwoSocketServerBusBandwidthFallsFromFourToEightGpus) {
  // pcie-8gpu-2socket-gen5: 4 GPUs of one socket share its DRAM (307.2 GB/s, a write and a
  // read per byte of 4 SHM hops: 38.4 GB/s each); with 8 GPUs two hops cross the socket link
  // (NCCL's SRP_QPI_BW, 22 GB/s). The bus bandwidth falls by the ring formula's ratio.
  const std::string preset = "pcie-8gpu-2socket-gen5";
  for (const std::string fidelity : {"flow", "analytic"}) {
    const json four = ring_on_node(preset, fidelity, 4), eight = ring_on_node(preset, fidelity, 8);
    const double t4 = ring_s(1e-6, 38.4e9, 4), t8 = ring_s(1e-6, 22e9, 8);
    EXPECT_NEAR(four["time_s"].get<double>(), t4, 1e-6 * t4) << fidelity;
    EXPECT_NEAR(eight["time_s"].get<double>(), t8, 1e-6 * t8) << fidelity;
    const double expected_ratio =
        (kBertLargeBytes * 2 * 7 / 8 / t8) / (kBertLargeBytes * 2 * 3 / 4 / t4);
    EXPECT_NEAR(busbw_Bps(eight, 8) / busbw_Bps(four, 4), expected_ratio, 1e-6) << fidelity;
    EXPECT_LT(busbw_Bps(eight, 8), 0.6 * busbw_Bps(four, 4)) << fidelity;
  }
  EXPECT_NEAR(ring_on_node(preset, "flow", 8)["time_s"].get<double>(),
              ring_on_node(preset, "analytic", 8)["time_s"].get<double>(), 1e-9);
}

TEST(HostPathCli, LinksModelAppliesOnlyTheAchievableRate) {
  // Under network_model links the PCIe technology keeps its per-message overhead, but its
  // TLP framing efficiency is not applied again on top of the host path's achievable rate:
  // the ring runs at the SHM hop's 10 GB/s, not 10 x 256 / 280.
  const json links = ring_on_node("pcie-4gpu-1nic", "flow", 4, "links");
  const double rate_Bps = 2.0 * 3 / 4 * kBertLargeBytes / links["time_s"].get<double>();
  EXPECT_GT(rate_Bps, 0.99 * 10e9);
  EXPECT_LT(rate_Bps, 10e9);
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
  // The achievable rate carries no second framing factor: PCIe's 256/280 is not on the link.
  const size_t dev_link = xml.find(R"(id="node-0-dev-0-link")");
  EXPECT_NE(xml.find(R"(<prop id="efficiency" value="1"/>)", dev_link), std::string::npos);
  EXPECT_EQ(xml.find("0.914"), std::string::npos);
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
  CliResult r = run({"--devices-per-node", "4", "--node", "dgx3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--node: expected a2-highgpu-8g, dgx-a100, dgx-h100, dgx1-p100, dgx1-v100, "
                       "dgx2, dgx2h, "
                       "g4dn.12xlarge, g5.48xlarge, hgx-a800, hgx-h800, nd-gb200-v6, nd40rs-v2, "
                       "nd96amsr-a100-v4, nd96asr-v4, "
                       "nd96isr-h100-v5, p2.16xlarge, "
                       "p2.8xlarge, p3.16xlarge, p3.8xlarge, p3dn.24xlarge, p4d.24xlarge, "
                       "p5.48xlarge, pcie-4gpu-1nic, pcie-8gpu-2socket-gen5, got \"dgx3\""),
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
  // A board description: malformed JSON, and a key it lacks, are one line each.
  r = run({"--devices-per-node", "4", "--node", "{'gpus': 4}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--node: expected a preset name or a board description in JSON, got "
                       "{'gpus': 4}"),
            std::string::npos)
      << r.err;
  r = run({"--devices-per-node", "4", "--node", R"({"gpus": 4, "pcie_gen": 4})"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("usage: --node: /cpu: expected \"intel\", \"amd\" or \"arm\""),
            std::string::npos)
      << r.err;
}

TEST(HostPathCli, NodeCommandShowsTheLayoutAndPathsOfPresetsAndBoards) {
  // Every preset is listed, the two-socket PCIe server's ring with its GPU count, and a board
  // description of that server shows the same layout and paths.
  CliResult list = run_sgdsim({"node", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json rows = json::parse(list.out);
  std::map<std::string, json> by_name;
  for (const json& r : rows) by_name[r["name"].get<std::string>()] = r;
  EXPECT_EQ(by_name.size(), rows.size());  // one row per preset
  EXPECT_EQ(by_name["dgx-a100"]["ring_transport"], "p2p_nvlink");
  EXPECT_DOUBLE_EQ(by_name["dgx-a100"]["ring_GBps"].get<double>(), 240);
  EXPECT_DOUBLE_EQ(by_name["pcie-8gpu-2socket-gen5"]["ring_GBps"].get<double>(), 22);
  CliResult preset = run_sgdsim({"node", "pcie-8gpu-2socket-gen5", "--json"});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  const json p = json::parse(preset.out);
  EXPECT_EQ(p["paths"][3]["ring_transport"], "shm");
  EXPECT_DOUBLE_EQ(p["paths"][3]["ring_GBps"].get<double>(), 38.4);  // the socket's DRAM share
  EXPECT_DOUBLE_EQ(p["paths"][7]["ring_GBps"].get<double>(), 22);    // the socket link
  CliResult board = run_sgdsim(
      {"node",
       R"({"gpus": 8, "pcie_gen": 5, "sockets": 2, "cpu": "intel", "host_memory_bandwidth":
       "307.2GBps", "socket_link_bandwidth": "22GBps", "nic_bandwidth": "100Gbps",
       "nic_pcie_gen": 4, "gdr": false})",
       "--json"});
  ASSERT_EQ(board.exit_code, 0) << board.err;
  const json b = json::parse(board.out);
  EXPECT_EQ(b["name"], "custom");
  for (const char* key : {"gpus", "nics", "paths", "nic_line_GBps", "p2p", "gdr"})
    EXPECT_EQ(b[key], p[key]) << key;
  CliResult table = run_sgdsim({"node", "pcie-8gpu-2socket-gen5"});
  EXPECT_NE(table.out.find("GPU 4   Gen5 x16, root port, socket 1"), std::string::npos)
      << table.out;
  CliResult bad = run_sgdsim({"node", "dgx3"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("usage: sgdsim node: expected a2-highgpu-8g"), std::string::npos)
      << bad.err;
  EXPECT_EQ(run_sgdsim({"node", "dgx-a100", "dgx-h100"}).exit_code, 2);
}
