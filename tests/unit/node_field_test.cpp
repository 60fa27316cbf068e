#include "sim/scenario/node_field.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/core/errors.hpp"
#include "tests/unit/scenario_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {

NodeDescription board_of(const json& v) {
  return read_node_description(v, "s.json", "/node");
}

std::string board_error(const json& v) {
  try {
    board_of(v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// Every path NCCL would take on the two nodes is the same: each GPU pair's, each ring over
/// the first g GPUs and its NVLS rate, and the NICs' host path for each g.
void expect_same_node_paths(const NodeDescription& a, const NodeDescription& b) {
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  const int gpus = static_cast<int>(a.gpus.size());
  for (int i = 0; i < gpus; ++i)
    for (int j = 0; j < gpus; ++j) {
      if (i == j) continue;
      EXPECT_EQ(gpu_gpu_path(a, i, j, 1).transport, gpu_gpu_path(b, i, j, 1).transport);
      EXPECT_DOUBLE_EQ(gpu_gpu_path(a, i, j, 1).rate_Bps, gpu_gpu_path(b, i, j, 1).rate_Bps);
    }
  for (int g = 1; g <= gpus; ++g) {
    EXPECT_DOUBLE_EQ(nic_path(a, g).rate_Bps, nic_path(b, g).rate_Bps) << g << " GPUs";
    if (g < 2) continue;
    const HostPath ra = intra_node_ring_path(a, g), rb = intra_node_ring_path(b, g);
    EXPECT_EQ(ra.transport, rb.transport) << g << " GPUs";
    EXPECT_DOUBLE_EQ(ra.rate_Bps, rb.rate_Bps) << g << " GPUs";
    EXPECT_DOUBLE_EQ(nvls_link_Bps(a, ra), nvls_link_Bps(b, rb)) << g << " GPUs";
  }
}

/// How many consecutive endpoints share a PCIe switch (0: root ports).
int switch_group(const std::vector<PcieEndpoint>& v) {
  if (v.empty() || v.front().pcie_switch < 0) return 0;
  return static_cast<int>(std::count_if(v.begin(), v.end(), [&](const PcieEndpoint& e) {
    return e.pcie_switch == v.front().pcie_switch;
  }));
}

/// A rate as the input writes it, to the last bit.
std::string board_rate(double Bps) {
  return fmt::format("{}Bps", Bps);
}

/// The board description of preset `n`, in the words of its spec sheet.
json board_words(const NodeDescription& n) {
  int sockets = 0;
  for (const PcieEndpoint& e : n.gpus) sockets = std::max(sockets, e.socket + 1);
  json d = {{"gpus", n.gpus.size()},
            {"pcie_gen", n.gpus.front().gen},
            {"gpus_per_switch", switch_group(n.gpus)},
            {"sockets", sockets},
            {"cpu", n.intel_root_complex ? "intel" : "amd"},
            {"host_memory_bandwidth", board_rate(n.host_memory_Bps)},
            {"nics", n.nics.size()},
            {"p2p", n.p2p},
            {"gdr", n.gdr},
            {"nvls", n.nvls}};
  if (sockets > 1) d["socket_link_bandwidth"] = board_rate(n.socket_link_Bps);
  if (n.nvlink_Bps > 0) d["nvlink_bandwidth"] = board_rate(n.nvlink_Bps);
  if (!n.nics.empty()) {
    d["nic_bandwidth"] = board_rate(n.nic_line_Bps);
    d["nic_pcie_gen"] = n.nics.front().gen;
    d["nics_per_switch"] = switch_group(n.nics);
  }
  return d;
}

}  // namespace

TEST(NodeDescription, EveryPresetDescribedAsABoardTakesTheSamePaths) {
  // The presets lay GPUs and NICs out in order over switches and sockets; a board description
  // lays them out by the same rule, so each preset, described in its own words, is itself.
  for (const std::string& name : node_preset_names()) {
    SCOPED_TRACE(name);
    const NodeDescription preset = node_preset(name);
    const NodeDescription board = board_of(board_words(preset));
    EXPECT_EQ(board.name, "custom");
    for (size_t i = 0; i < preset.gpus.size(); ++i) {
      EXPECT_EQ(board.gpus[i].pcie_switch, preset.gpus[i].pcie_switch) << "GPU " << i;
      EXPECT_EQ(board.gpus[i].socket, preset.gpus[i].socket) << "GPU " << i;
    }
    ASSERT_EQ(board.nics.size(), preset.nics.size());
    for (size_t k = 0; k < preset.nics.size(); ++k) {
      EXPECT_EQ(board.nics[k].pcie_switch, preset.nics[k].pcie_switch) << "NIC " << k;
      EXPECT_EQ(board.nics[k].socket, preset.nics[k].socket) << "NIC " << k;
    }
    expect_same_node_paths(board, preset);
  }
}

TEST(NodeDescription, ASpecSheetOfTheTwoSocketPcieServerIsItsPreset) {
  // docs/host-path.md, "Describing a board": 2 Xeon Platinum 8480+ (8 channels DDR5-4800 each,
  // NCCL's 22 GB/s between Sapphire Rapids sockets), 8 GeForce GPUs on Gen5 root ports, one
  // 100 Gb/s NIC on Gen4.
  const json board = json::parse(R"({"gpus": 8, "pcie_gen": 5, "sockets": 2, "cpu": "intel",
      "host_memory_bandwidth": "307.2GBps", "socket_link_bandwidth": "22GBps",
      "nic_bandwidth": "100Gbps", "nic_pcie_gen": 4, "gdr": false})");
  expect_same_node_paths(board_of(board), node_preset("pcie-8gpu-2socket-gen5"));
  // A board is not a preset of another layout: the same server with a PCIe switch per 4 GPUs
  // and P2P allowed runs P2P inside each switch, not SHM.
  json switched = board;
  switched["gpus_per_switch"] = 4;
  EXPECT_EQ(gpu_gpu_path(board_of(switched), 0, 1, 1).transport, HostTransport::p2p_pcie);
  EXPECT_EQ(gpu_gpu_path(board_of(board), 0, 1, 1).transport, HostTransport::shm);
}

TEST(NodeDescription, BadBoardsNameTheKey) {
  const json ok = json::parse(R"({"gpus": 4, "pcie_gen": 4, "cpu": "amd",
      "host_memory_bandwidth": "204.8GBps", "nic_bandwidth": "10Gbps"})");
  EXPECT_EQ(board_error(ok), "");
  auto without = [&](const char* key) {
    json j = ok;
    j.erase(key);
    return board_error(j);
  };
  auto with = [&](const char* key, const json& v) {
    json j = ok;
    j[key] = v;
    return board_error(j);
  };
  EXPECT_EQ(without("pcie_gen"),
            "s.json: /node/pcie_gen: expected the GPUs' PCIe generation, 1 to 6, got nothing (the "
            "field is required)");
  EXPECT_NE(without("cpu").find("/node/cpu: expected \"intel\", \"amd\" or \"arm\""),
            std::string::npos);
  EXPECT_NE(without("host_memory_bandwidth").find("/node/host_memory_bandwidth"),
            std::string::npos);
  EXPECT_NE(without("nic_bandwidth").find("/node/nic_bandwidth"), std::string::npos);
  EXPECT_EQ(with("nics", 0), "");
  EXPECT_NE(with("sockets", 2).find("/node/socket_link_bandwidth: expected the rate between"),
            std::string::npos);
  EXPECT_NE(with("sockets", 3).find("/node/sockets: expected a divisor of the 4 GPUs"),
            std::string::npos);
  EXPECT_NE(with("socket_link_bandwidth", "16GBps").find("nothing with one socket"),
            std::string::npos);
  EXPECT_NE(with("pcie_gen", 7).find("/node/pcie_gen"), std::string::npos);
  EXPECT_NE(with("nvls", true).find("/node/nvls: expected false without nvlink_bandwidth"),
            std::string::npos);
  EXPECT_NE(with("nvswitch", true).find("/node/nvswitch"), std::string::npos);
  EXPECT_NE(with("preset", "dgx-a100").find("not both"), std::string::npos);
  EXPECT_NE(board_error(json::object()).find("/node: expected \"preset\" or a board description"),
            std::string::npos);
}

TEST(NodeDescription, ABoardSetsTheScenarioLinks) {
  // 4 GPUs on Gen4 root ports of one AMD socket (no 6/5 overhead), 8 channels DDR4-3200: each
  // SHM hop at the Gen4 rate, 24 GB/s, under the DRAM share 204.8 / (2 x 4) = 25.6 GB/s.
  json j = json::parse(R"({"model": "mlp", "workers": {"count": 4, "per_node": 4},
      "platform": {"generate": {"topology": "star", "nodes": 1, "node": {"gpus": 4,
      "pcie_gen": 4, "cpu": "amd", "host_memory_bandwidth": "204.8GBps",
      "nic_bandwidth": "10Gbps"}}}})");
  const Scenario s = parse_scenario(j, "s.json");
  EXPECT_DOUBLE_EQ(s.platform.generate->intra_node_link.bandwidth_Bps, 24e9);
  EXPECT_DOUBLE_EQ(s.platform.generate->node_link.bandwidth_Bps, 10e9 / 8);
}

TEST(NodeDescription, APresetTakesItsServersNicRate) {
  // p3.8xlarge's 10 GbE, or the same host path with a 100 Gb/s NIC: the NIC (staged through
  // host memory, no GPUDirect) then carries what its line rate and that path allow.
  const NodeDescription ten = board_of(json{{"preset", "p3.8xlarge"}});
  const NodeDescription hundred =
      board_of(json{{"preset", "p3.8xlarge"}, {"nic_bandwidth", "100Gbps"}});
  EXPECT_DOUBLE_EQ(nic_path(ten, 4).rate_Bps, 10e9 / 8);
  EXPECT_DOUBLE_EQ(hundred.nic_line_Bps, 100e9 / 8);
  EXPECT_GT(nic_path(hundred, 4).rate_Bps, nic_path(ten, 4).rate_Bps);
  EXPECT_LE(nic_path(hundred, 4).rate_Bps, 100e9 / 8);
  EXPECT_EQ(hundred.gpus.size(), ten.gpus.size());  // the layout is the preset's
}

TEST(NodeDescription, ABandwidthAboveTheNicsLineRateIsRefused) {
  // A node link faster than the NICs would be capped without a word: an error names the field.
  auto scenario_with = [](const json& node, const char* bandwidth) {
    json j = json::parse(R"({"model": "mlp", "workers": {"count": 8, "per_node": 4}})");
    j["platform"]["generate"] = {
        {"topology", "star"}, {"node", node}, {"node_link", {{"bandwidth", bandwidth}}}};
    return j;
  };
  std::string e;
  try {
    parse_scenario(scenario_with("p3.8xlarge", "100Gbps"), "s.json");
  } catch (const InputError& err) {
    e = err.what();
  }
  EXPECT_EQ(e,
            "s.json: /platform/generate/node_link/bandwidth: expected at most 10Gbps (the line "
            "rate of the 1 NIC(s) of node \"p3.8xlarge\"; faster NICs: give their rate as the "
            "node's \"nic_bandwidth\"), got 100Gbps");
  const Scenario fast = parse_scenario(
      scenario_with(json{{"preset", "p3.8xlarge"}, {"nic_bandwidth", "100Gbps"}}, "100Gbps"),
      "s.json");
  EXPECT_GT(fast.platform.generate->node_link.bandwidth_Bps, 10e9 / 8);
  // At the line rate, or below it, the host path caps as before.
  const Scenario at = parse_scenario(scenario_with("p3.8xlarge", "10Gbps"), "s.json");
  EXPECT_DOUBLE_EQ(at.platform.generate->node_link.bandwidth_Bps, 10e9 / 8);
}
