#include "sim/scenario/host_path.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/unit/scenario_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {

/// A one-node scenario of `gpus` workers on node `node` (a preset name or an object).
json one_node(const json& node, int gpus) {
  json j = json::parse(R"({"model": "mlp", "platform": {"generate": {"topology": "star",
                           "nodes": 1}}})");
  j["workers"] = {{"count", gpus}, {"per_node", gpus}};
  j["platform"]["generate"]["node"] = node;
  return j;
}

std::string error_of(const json& j) {
  return test::scenario_error(j);
}

}  // namespace

TEST(HostPath, PcieAchievableRateIsNcclsPerLaneFigure) {
  // NCCL topo.cc: width x {15, 30, 60, 120, 240, 480} / 80 GB/s for Gen1..Gen6.
  EXPECT_DOUBLE_EQ(pcie_dma_Bps(3, 16), 12e9);
  EXPECT_DOUBLE_EQ(pcie_dma_Bps(4, 16), 24e9);
  EXPECT_DOUBLE_EQ(pcie_dma_Bps(5, 16), 48e9);
  EXPECT_DOUBLE_EQ(pcie_dma_Bps(3, 8), 6e9);
  EXPECT_DOUBLE_EQ(pcie_dma_Bps(1, 1), 0.1875e9);
  EXPECT_THROW(pcie_dma_Bps(7, 16), std::out_of_range);
  EXPECT_THROW(node_preset("dgx3"), std::out_of_range);
}

TEST(HostPath, TransportPerPreset) {
  struct Row {
    const char* preset;
    HostTransport gpu_gpu, gpu_nic0;
  };
  const Row rows[] = {{"dgx1-v100", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"dgx-a100", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"p3dn.24xlarge", HostTransport::p2p_nvlink, HostTransport::net_staged},
                      {"p4d.24xlarge", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"pcie-4gpu-1nic", HostTransport::shm, HostTransport::net_staged},
                      {"pcie-8gpu-2socket-gen5", HostTransport::shm, HostTransport::net_staged},
                      {"dgx-h100", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"p2.8xlarge", HostTransport::p2p_pcie, HostTransport::net_staged},
                      {"p2.16xlarge", HostTransport::p2p_pcie, HostTransport::net_staged},
                      {"p3.8xlarge", HostTransport::p2p_nvlink, HostTransport::net_staged},
                      {"p3.16xlarge", HostTransport::p2p_nvlink, HostTransport::net_staged},
                      {"p5.48xlarge", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"nd96asr-v4", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"a2-highgpu-8g", HostTransport::p2p_nvlink, HostTransport::net_staged},
                      {"g4dn.12xlarge", HostTransport::shm, HostTransport::net_staged},
                      {"nd96isr-h100-v5", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"g5.48xlarge", HostTransport::shm, HostTransport::net_staged},
                      {"nd96amsr-a100-v4", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"nd40rs-v2", HostTransport::p2p_nvlink, HostTransport::net_staged},
                      {"dgx1-p100", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"dgx2", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"dgx2h", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"nd-gb200-v6", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"hgx-a800", HostTransport::p2p_nvlink, HostTransport::net_gdr},
                      {"hgx-h800", HostTransport::p2p_nvlink, HostTransport::net_gdr}};
  EXPECT_EQ(node_preset_names().size(), std::size(rows));
  for (const Row& r : rows) {
    const NodeDescription n = node_preset(r.preset);
    EXPECT_EQ(n.name, r.preset);
    EXPECT_EQ(transport_name(gpu_gpu_path(n, 0, 1, 1).transport), transport_name(r.gpu_gpu))
        << r.preset;
    EXPECT_EQ(transport_name(gpu_nic_path(n, 0, 0).transport), transport_name(r.gpu_nic0))
        << r.preset;
  }
  // DGX-1: GPU 0 and the NIC of the other socket's switch: staged, capped by Broadwell's QPI.
  const NodeDescription dgx1 = node_preset("dgx1-v100");
  EXPECT_EQ(gpu_nic_path(dgx1, 0, 3).transport, HostTransport::net_staged);
  EXPECT_DOUBLE_EQ(gpu_nic_path(dgx1, 0, 3).rate_Bps, 6e9);
  EXPECT_DOUBLE_EQ(gpu_nic_path(dgx1, 0, 0).rate_Bps, 12e9);
  EXPECT_DOUBLE_EQ(gpu_gpu_path(dgx1, 0, 1, 1).rate_Bps, 120e9);
  EXPECT_DOUBLE_EQ(gpu_gpu_path(node_preset("dgx-a100"), 0, 7, 1).rate_Bps, 240e9);
  // Without NVLink, GPUs under one PCIe switch use P2P over it; P2P off sends them through SHM.
  NodeDescription no_nvlink = dgx1;
  no_nvlink.nvlink_Bps = 0;
  EXPECT_EQ(gpu_gpu_path(no_nvlink, 0, 1, 1).transport, HostTransport::p2p_pcie);
  EXPECT_DOUBLE_EQ(gpu_gpu_path(no_nvlink, 0, 1, 1).rate_Bps, 12e9);
  EXPECT_EQ(gpu_gpu_path(no_nvlink, 1, 2, 1).transport, HostTransport::shm);
  NodeDescription p2p_off = dgx1;
  p2p_off.p2p = false;
  EXPECT_EQ(gpu_gpu_path(p2p_off, 0, 1, 1).transport, HostTransport::shm);
  // GDR off: the same-switch NIC is staged.
  NodeDescription gdr_off = dgx1;
  gdr_off.gdr = false;
  EXPECT_EQ(gpu_nic_path(gdr_off, 0, 0).transport, HostTransport::net_staged);
}

TEST(HostPath, PcieNodeShmHopRate) {
  const NodeDescription n = node_preset("pcie-4gpu-1nic");
  // Gen3 x16 = 12 GB/s, through an Intel root complex x 5/6 = 10 GB/s; DRAM 6 x 2666 MT/s
  // x 8 B = 127.968 GB/s, a write and a read per byte, shared by 4 GPUs: 15.996 GB/s each.
  EXPECT_DOUBLE_EQ(n.host_memory_Bps, 127.968e9);
  const HostPath hop = intra_node_ring_path(n, 4);
  EXPECT_EQ(hop.transport, HostTransport::shm);
  EXPECT_DOUBLE_EQ(hop.rate_Bps, 10e9);
  EXPECT_DOUBLE_EQ(gpu_gpu_path(n, 0, 1, 4).rate_Bps, 10e9);
  // DRAM binds once enough GPUs share it: 127.968 / (2 x 7) < 10 GB/s.
  EXPECT_DOUBLE_EQ(gpu_gpu_path(n, 0, 1, 7).rate_Bps, 127.968e9 / 14);
  // Without the Intel overhead the PCIe link binds at 12 GB/s.
  NodeDescription amd = n;
  amd.intel_root_complex = false;
  EXPECT_DOUBLE_EQ(intra_node_ring_path(amd, 4).rate_Bps, 12e9);
  // The one NIC, staged: PCIe Gen3 x16 (12 GB/s) below its 12.5 GB/s line rate.
  EXPECT_EQ(nic_path(n, 4).transport, HostTransport::net_staged);
  EXPECT_DOUBLE_EQ(nic_path(n, 4).rate_Bps, 12e9);
}

TEST(HostPath, ScenarioNodeSetsLinks) {
  Scenario s = parse_scenario(one_node("pcie-4gpu-1nic", 4), "s.json");
  ASSERT_TRUE(s.platform.generate);
  EXPECT_DOUBLE_EQ(s.platform.generate->intra_node_link.bandwidth_Bps, 10e9);
  EXPECT_DOUBLE_EQ(s.platform.generate->node_link.bandwidth_Bps, 12e9);
  // A DGX A100's 8 NICs at 25 GB/s do not cap the 100 Gb/s default node link.
  Scenario a = parse_scenario(one_node("dgx-a100", 8), "s.json");
  EXPECT_DOUBLE_EQ(a.platform.generate->intra_node_link.bandwidth_Bps, 240e9);
  EXPECT_DOUBLE_EQ(a.platform.generate->node_link.bandwidth_Bps, 12.5e9);
  // The object form: P2P off on a DGX-1 sends the ring through host memory.
  Scenario off = parse_scenario(one_node({{"preset", "dgx1-v100"}, {"p2p", false}}, 4), "s.json");
  // Broadwell DRAM binds: 4 x 2133 MT/s x 8 B = 68.256 GB/s, a write and a read, 4 GPUs.
  EXPECT_DOUBLE_EQ(off.platform.generate->intra_node_link.bandwidth_Bps, 68.256e9 / 8);
}

TEST(HostPath, ResolvedScenarioKeepsTheNodeAndRereadsTheSameLinks) {
  // scenario.resolved.json (and a sweep's sweep-scenario.json, which a sweep runs) names the
  // preset and leaves out the intra-node bandwidth it sets: rereading gives the same links.
  for (const json& node : {json("dgx-a100"), json{{"preset", "dgx1-v100"}, {"p2p", false}}}) {
    Scenario s = parse_scenario(one_node(node, 4), "s.json");
    EXPECT_EQ(s.resolved["platform"]["generate"]["node"], node);
    EXPECT_FALSE(s.resolved["platform"]["generate"]["intra_node_link"].contains("bandwidth"));
    Scenario again = parse_scenario(s.resolved, "s.json");
    EXPECT_DOUBLE_EQ(again.platform.generate->intra_node_link.bandwidth_Bps,
                     s.platform.generate->intra_node_link.bandwidth_Bps);
    EXPECT_DOUBLE_EQ(again.platform.generate->intra_node_link.transport.efficiency,
                     s.platform.generate->intra_node_link.transport.efficiency);
    EXPECT_DOUBLE_EQ(again.platform.generate->node_link.bandwidth_Bps,
                     s.platform.generate->node_link.bandwidth_Bps);
  }
}

TEST(HostPath, BadNodeInputsNameThePointer) {
  EXPECT_EQ(error_of(one_node("dgx3", 4)),
            "s.json: /platform/generate/node: expected a node preset (a2-highgpu-8g, dgx-a100, "
            "dgx-h100, dgx1-p100, dgx1-v100, dgx2, dgx2h, g4dn.12xlarge, g5.48xlarge, hgx-a800, "
            "hgx-h800, nd-gb200-v6, "
            "nd40rs-v2, "
            "nd96amsr-a100-v4, "
            "nd96asr-v4, nd96isr-h100-v5, "
            "p2.16xlarge, p2.8xlarge, p3.16xlarge, p3.8xlarge, p3dn.24xlarge, p4d.24xlarge, "
            "p5.48xlarge, pcie-4gpu-1nic, pcie-8gpu-2socket-gen5), got \"dgx3\"");
  EXPECT_EQ(error_of(one_node(7, 4)).find("/platform/generate/node: expected a node preset"), 8u);
  EXPECT_NE(error_of(one_node("pcie-4gpu-1nic", 8))
                .find("/platform/generate/devices_per_node: expected at most 4 (the GPUs of node "
                      "\"pcie-4gpu-1nic\"), got 8"),
            std::string::npos);
  EXPECT_NE(error_of(one_node({{"preset", "dgx1-v100"}, {"nvswitch", true}}, 4))
                .find("/platform/generate/node/nvswitch"),
            std::string::npos);
  EXPECT_NE(error_of(one_node({{"preset", "dgx1-v100"}, {"gdr", "yes"}}, 4))
                .find("/platform/generate/node/gdr"),
            std::string::npos);
  EXPECT_NE(error_of(one_node({{"p2p", false}}, 4))
                .find("/platform/generate/node: expected \"preset\" or a board description"),
            std::string::npos);
  json both = one_node("pcie-4gpu-1nic", 4);
  both["platform"]["generate"]["intra_node_link"] = {{"bandwidth", "16GBps"}};
  EXPECT_NE(error_of(both).find("/platform/generate/intra_node_link/bandwidth"), std::string::npos);
}

TEST(HostPath, EveryPresetIsDocumented) {
  // A preset a user cannot find is no use to one mapping a cluster from its description: each
  // is a row of both tables of docs/host-path.md and named in docs/spec-sheet.md's node row.
  auto read = [](const std::string& rel) {
    std::ifstream in(std::string(SGDSIM_SOURCE_DIR) + "/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string host_path = read("docs/host-path.md"), spec = read("docs/spec-sheet.md");
  ASSERT_FALSE(host_path.empty());
  for (const std::string& name : node_preset_names()) {
    const std::string quoted = "`" + name + "`";
    size_t rows = 0;
    for (size_t at = host_path.find("| " + quoted); at != std::string::npos;
         at = host_path.find("| " + quoted, at + 1))
      ++rows;
    for (size_t at = host_path.find(", " + quoted + " |"); at != std::string::npos;
         at = host_path.find(", " + quoted + " |", at + 1))
      ++rows;  // a row shared by several presets ("`dgx2`, `dgx2h` |")
    EXPECT_GE(rows, 2u) << name << " in docs/host-path.md";
    EXPECT_NE(spec.find(quoted), std::string::npos) << name << " in docs/spec-sheet.md";
  }
}

TEST(HostPath, PresetTableOfTheDocs) {
  // docs/host-path.md: ring hop over all GPUs, GPU 0 to NIC 0, and the NICs together.
  struct Row {
    const char* preset;
    double hop_Bps, nic0_Bps, nics_Bps;
  };
  const Row rows[] = {
      {"dgx1-v100", 120e9, 12e9, 48e9},      {"dgx-a100", 240e9, 24e9, 192e9},
      {"p3dn.24xlarge", 120e9, 12e9, 12e9},  {"p4d.24xlarge", 240e9, 24e9, 50e9},
      {"pcie-4gpu-1nic", 10e9, 12e9, 12e9},  {"pcie-8gpu-2socket-gen5", 22e9, 24e9, 12.5e9},
      {"p3.16xlarge", 120e9, 12e9, 3.125e9}, {"p3.8xlarge", 80e9, 12e9, 1.25e9},
      {"p2.8xlarge", 9.6e9, 12e9, 1.25e9},   {"p2.16xlarge", 6e9, 12e9, 3.125e9},
      {"dgx-h100", 370.8e9, 48e9, 384e9},    {"p5.48xlarge", 370.8e9, 24e9, 400e9},
      {"nd96asr-v4", 240e9, 24e9, 192e9},    {"a2-highgpu-8g", 240e9, 12e9, 12e9},
      {"g4dn.12xlarge", 10e9, 12e9, 6.25e9}, {"nd96isr-h100-v5", 370.8e9, 48e9, 384e9},
      {"g5.48xlarge", 16e9, 24e9, 12.5e9},   {"nd96amsr-a100-v4", 240e9, 24e9, 192e9},
      {"nd40rs-v2", 120e9, 12e9, 12e9},      {"dgx1-p100", 72e9, 12e9, 48e9},
      {"dgx2", 120e9, 12e9, 96e9},           {"dgx2h", 120e9, 12e9, 96e9},
      {"nd-gb200-v6", 721.8e9, 48e9, 192e9}, {"hgx-a800", 160e9, 24e9, 192e9},
      {"hgx-h800", 164.8e9, 48e9, 384e9}};
  for (const Row& r : rows) {
    const NodeDescription n = node_preset(r.preset);
    const int gpus = static_cast<int>(n.gpus.size());
    EXPECT_DOUBLE_EQ(intra_node_ring_path(n, gpus).rate_Bps, r.hop_Bps) << r.preset;
    EXPECT_DOUBLE_EQ(gpu_nic_path(n, 0, 0).rate_Bps, r.nic0_Bps) << r.preset;
    EXPECT_DOUBLE_EQ(nic_path(n, gpus).rate_Bps, r.nics_Bps) << r.preset;
  }
  EXPECT_DOUBLE_EQ(node_preset("dgx-a100").host_memory_Bps, 204.8e9);
  EXPECT_DOUBLE_EQ(node_preset("p4d.24xlarge").host_memory_Bps, 140.784e9);
  EXPECT_DOUBLE_EQ(node_preset("dgx1-v100").host_memory_Bps, 68.256e9);
  // Third-generation NVSwitches reduce and multicast (NVLS): Hopper boards, not Ampere ones.
  EXPECT_TRUE(node_preset("hgx-h800").nvls);
  EXPECT_TRUE(node_preset("dgx-h100").nvls);
  EXPECT_FALSE(node_preset("hgx-a800").nvls);
  EXPECT_FALSE(node_preset("dgx-a100").nvls);
}

TEST(HostPath, TwoSocketServerSharesHostMemoryAndTheSocketLink) {
  const NodeDescription n = node_preset("pcie-8gpu-2socket-gen5");
  // Gen5 x16: 16 x 240 / 80 = 48 GB/s, x 5/6 through one Intel root complex = 40 GB/s; DRAM
  // 8 x 4800 MT/s x 8 B = 307.2 GB/s per socket; NCCL's SRP_QPI_BW 22 GB/s between sockets.
  EXPECT_DOUBLE_EQ(n.host_memory_Bps, 307.2e9);
  EXPECT_DOUBLE_EQ(n.socket_link_Bps, 22e9);
  // 4 GPUs of socket 0: 4 SHM buffers in its DRAM, a write and a read each: 307.2 / 8.
  const HostPath four = intra_node_ring_path(n, 4);
  EXPECT_EQ(four.transport, HostTransport::shm);
  EXPECT_DOUBLE_EQ(four.rate_Bps, 307.2e9 / 8);
  // 8 GPUs: still 4 buffers per socket, but hops 3 -> 4 and 7 -> 0 cross the socket link.
  EXPECT_DOUBLE_EQ(intra_node_ring_path(n, 8).rate_Bps, 22e9);
  // Same-socket hop: the root-complex overhead applies; across sockets it does not
  // (NCCL search.cc: PATH_PHB only), the link does.
  EXPECT_DOUBLE_EQ(gpu_gpu_path(n, 0, 1, 1).rate_Bps, 40e9);
  NodeDescription fast_link = n;
  fast_link.socket_link_Bps = 1e12;
  EXPECT_DOUBLE_EQ(gpu_gpu_path(fast_link, 3, 4, 1).rate_Bps, 48e9);
  // Two hops crossing in one direction share it.
  EXPECT_DOUBLE_EQ(gpu_gpu_path(n, 3, 4, 1, 2).rate_Bps, 11e9);
  // A ring of 2 GPUs on different sockets: one crossing each way, one buffer per socket.
  NodeDescription pair = n;
  pair.gpus = {n.gpus[0], n.gpus[4]};
  EXPECT_DOUBLE_EQ(intra_node_ring_path(pair, 2).rate_Bps, 22e9);
}
