// network_model "links": every message pays its route's technology once (SimGrid factor
// callbacks); on a contention-free platform simulated collectives equal their formulas with
// alpha = route latency + overhead and beta = 1 / (bottleneck x efficiency).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
json links_collective(const std::string& algorithm, int ranks, const std::string& bytes,
                      const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"collective",
                                   "--algorithm",
                                   algorithm,
                                   "--ranks",
                                   std::to_string(ranks),
                                   "--bytes",
                                   bytes,
                                   "--bandwidth",
                                   "10Gbps",
                                   "--latency",
                                   "32us",
                                   "--network-model",
                                   "links",
                                   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}
}  // namespace

// Flat algorithms on one rank per node, hierarchical on 4-GPU PCIe nodes over 10 GbE TCP (the
// issue's cluster): flow and analytic equal the formula. (A flat algorithm on multi-GPU nodes
// mixes cheap and dear hops, which its single-alpha formula does not describe.)
TEST(Transport, LinksEqualTheirFormulas) {
  auto check = [](const std::string& algorithm, int ranks, const std::string& bytes,
                  const std::string& dpn) {
    json flow = links_collective(algorithm, ranks, bytes, {"--devices-per-node", dpn});
    json analytic = links_collective(algorithm, ranks, bytes,
                                     {"--devices-per-node", dpn, "--fidelity", "analytic"});
    const double f = flow["formula_s"], t = flow["time_s"], a = analytic["time_s"];
    EXPECT_NEAR(t, f, 1e-6 * f) << algorithm << " P=" << ranks << " N=" << bytes;
    EXPECT_NEAR(a, t, 1e-6 * t) << algorithm << " P=" << ranks << " N=" << bytes;
  };
  for (const char* bytes : {"8B", "1MB", "100MB"})
    for (int ranks : {8, 16}) {
      for (const char* algorithm : {"ring", "recursive_halving_doubling", "tree"})
        check(algorithm, ranks, bytes, "1");
      check("hierarchical", ranks, bytes, "4");
    }
}

TEST(Transport, TcpPaysItsOverheadOncePerMessage) {
  // A 16-rank ring of 1 KB: 30 messages in sequence; TCP's 25 us against RDMA's 1 us.
  json tcp = links_collective("ring", 16, "1KB", {"--technology", "tcp"});
  json rdma = links_collective("ring", 16, "1KB", {"--technology", "rdma"});
  const double gap = tcp["time_s"].get<double>() - rdma["time_s"].get<double>();
  EXPECT_NEAR(gap, 30 * 24e-6, 30 * 24e-6 * 0.01);
}

namespace {
/// Two hosts joined by one split-duplex link whose properties are `props` (raw XML).
fs::path two_host_platform(const std::string& props) {
  fs::path dir = temp_path("transport");
  fs::create_directories(dir);
  fs::path f = dir / "p.xml";
  std::ofstream(f) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
                      "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
                      "<zone id=\"z\" routing=\"Full\">\n"
                      "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>\n"
                      "<link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\" "
                      "sharing_policy=\"SPLITDUPLEX\">"
                   << props
                   << "</link>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\" direction=\"UP\"/>"
                      "</route>\n</zone>\n</platform>\n";
  return f;
}
double file_ring_s(const fs::path& platform, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "collective",      "--ranks",         "2",     "--bytes", "1MB", "--platform",
      platform.string(), "--network-model", "links", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["time_s"].get<double>();
}
}  // namespace

TEST(Transport, PlatformFileLinksSayWhatTheyAre) {
  // A 2-rank ring is two 500 kB messages, one after the other on each side.
  const double rdma =
      file_ring_s(two_host_platform("<prop id=\"technology\" value=\"rdma\"/>"), {});
  EXPECT_NEAR(rdma, 2 * (10e-6 + 1e-6 + 5e5 / (1e9 * 4096.0 / 4126.0)), 1e-9);
  // Without the property the link takes --technology (tcp unless told).
  const double tcp = file_ring_s(two_host_platform(""), {});
  EXPECT_NEAR(tcp, 2 * (10e-6 + 25e-6 + 5e5 / (1e9 * 1448.0 / 1538.0)), 1e-9);
  const double custom = file_ring_s(
      two_host_platform("<prop id=\"technology\" value=\"custom\"/><prop id=\"overhead\" "
                        "value=\"5us\"/><prop id=\"efficiency\" value=\"0.5\"/>"),
      {});
  EXPECT_NEAR(custom, 2 * (10e-6 + 5e-6 + 5e5 / 0.5e9), 1e-9);
}

TEST(Transport, BadLinkPropertyIsAnInputError) {
  fs::path f = two_host_platform("<prop id=\"technology\" value=\"ethernet\"/>");
  CliResult r = run_sgdsim({"collective", "--ranks", "2", "--bytes", "1MB", "--platform",
                            f.string(), "--network-model", "links"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("link \"l\", property \"technology\": expected tcp, rdma, nvlink, pcie or "
                       "custom, got \"ethernet\""),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(Transport, PredictEqualsTheSimulationWithAStreamLimit) {
  // Two workers on a star: no contention, so the analytic prediction and SimGrid agree, also
  // with a 5 Gb/s per-stream limit on 100 Gb/s links (a FATPIPE link on each node's side).
  for (const std::string stream : {"none", "5Gbps"}) {
    const std::string set = "platform.generate.node_link.stream_bandwidth=" + stream;
    CliResult p = run_sgdsim({"predict", "experiments/examples/02-minimal.json", "--set", set,
                              "--set", "workers.count=2", "--json"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    fs::path out = temp_path("transport-run");
    CliResult r = run_sgdsim({"run", "experiments/examples/02-minimal.json", "--set", set, "--set",
                              "workers.count=2", "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double predicted = json::parse(p.out)["iteration_time_s"];
    const double simulated = json::parse(slurp(out / "summary.json"))["iteration_time_s"]["mean"];
    EXPECT_NEAR(simulated, predicted, 1e-9 * predicted) << stream;
  }
}

TEST(Transport, HalfPrecisionHalvesWhatTravels) {
  auto comm_s = [](const std::string& precision) {
    fs::path out = temp_path("transport-fp");
    CliResult r =
        run_sgdsim({"run", "experiments/examples/02-minimal.json", "--set",
                    "gradient_precision=" + precision, "--set", "network_model=ideal", "--set",
                    "scheme.fusion_bytes=0", "--set", "iterations=3", "--out", out.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(slurp(out / "summary.json"))["comm_s_per_iter"].get<double>();
  };
  const double fp32 = comm_s("fp32"), fp16 = comm_s("fp16"), bytes2 = comm_s("2");
  EXPECT_LT(fp16, 0.6 * fp32);
  EXPECT_GT(fp16, 0.4 * fp32);
  EXPECT_DOUBLE_EQ(fp16, bytes2);
}

namespace {

/// The mean iteration time of example 17 (PCIe nodes over TCP) under a scheme and collective.
double pcie_tcp_iteration_s(const std::string& scheme, const std::string& algorithm,
                            const std::string& extra) {
  fs::path out = temp_path("pcie-tcp");
  std::vector<std::string> args = {"run",   "experiments/examples/17-pcie-nodes-over-tcp.json",
                                   "--set", "scheme.type=" + scheme,
                                   "--set", "collective.algorithm=" + algorithm,
                                   "--out", out.string()};
  if (!extra.empty()) args.insert(args.end(), {"--set", extra});
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << scheme << " " << algorithm << ": " << r.err;
  return r.exit_code == 0
             ? json::parse(slurp(out / "summary.json"))["iteration_time_s"]["mean"].get<double>()
             : 0.0;
}

/// Every scheme of the sync family runs, and pseudo-sync hides part of what sync exposes.
void expect_schemes_run_on_pcie_tcp(const std::string& algorithm) {
  const double sync = pcie_tcp_iteration_s("sync", algorithm, "");
  EXPECT_LT(pcie_tcp_iteration_s("pseudo_sync", algorithm, ""), sync) << algorithm;
  EXPECT_GT(pcie_tcp_iteration_s("ssp", algorithm, ""), 0) << algorithm;
  EXPECT_GT(pcie_tcp_iteration_s("local_sgd", algorithm, ""), 0) << algorithm;
}

}  // namespace

// The cluster with the project's defaults: every scheme runs on the ring, async at
// every granularity.
TEST(Transport, EverySchemeRunsOnPcieNodesOverTcp) {
  expect_schemes_run_on_pcie_tcp("ring");
  for (const char* granularity : {"model", "layer", "bucket"})
    EXPECT_GT(
        pcie_tcp_iteration_s("async", "ring", std::string("scheme.granularity=") + granularity), 0);
}

// The same with every other collective (release only: each collective's own code paths run
// under the sanitizers in the formula and scheme tests).
TEST(Transport, EveryCollectiveRunsOnPcieNodesOverTcp) {
  for (const char* algorithm :
       {"recursive_halving_doubling", "recursive_doubling", "tree", "hierarchical", "ps", "byteps",
        "auto", "double_binary_tree", "nccl", "nccl_tuner"})
    expect_schemes_run_on_pcie_tcp(algorithm);
}

TEST(Transport, GlobalFactorsAndLinkTechnologiesDoNotMix) {
  CliResult r = run_sgdsim({"run", "experiments/examples/02-minimal.json", "--cfg",
                            "network/latency-factor:2", "--out", temp_path("mix").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("drop --cfg network/latency-factor or use network_model \"default\""),
            std::string::npos)
      << r.err;
}

TEST(Transport, BadTechnologyOptionsAreUsageErrors) {
  CliResult c = run_sgdsim({"collective", "--ranks", "2", "--bytes", "1MB", "--network-model",
                            "links", "--technology", "ib"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("--technology: expected tcp, rdma, nvlink, pcie or custom, got \"ib\""),
            std::string::npos)
      << c.err;
  CliResult without =
      run_sgdsim({"collective", "--ranks", "2", "--bytes", "1MB", "--technology", "rdma"});
  EXPECT_EQ(without.exit_code, 2) << without.err;
  CliResult p = run_sgdsim({"platform", "--node-technology", "ib"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("/platform/generate/node_link/technology"), std::string::npos) << p.err;
}
