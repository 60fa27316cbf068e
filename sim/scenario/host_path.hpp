#pragma once
/// The host path inside one node, as NCCL's topology code sees it (src/graph/paths.cc):
/// GPUs and NICs on PCIe switches under CPU host bridges with host memory, and the transport
/// NCCL picks between two of them (P2P over NVLink or PCIe, SHM through host memory, NET with
/// or without GPUDirect RDMA). Rates are achievable DMA rates (docs/host-path.md).
#include <string>
#include <vector>

namespace sgdsim {

/// One PCIe endpoint (GPU or NIC): its link and where it hangs.
struct PcieEndpoint {
  int gen = 3;           ///< PCIe generation (1-6)
  int lanes = 16;        ///< link width
  int pcie_switch = -1;  ///< PCIe switch index; -1: directly on a CPU root port
  int socket = 0;        ///< CPU (host bridge / root complex) it hangs under
};

/// A node's GPUs, NICs, CPUs and host memory (a preset or a user's description).
struct NodeDescription {
  std::string name;                ///< preset name, or "custom"
  std::vector<PcieEndpoint> gpus;  ///< in ring order
  std::vector<PcieEndpoint> nics;  ///< network adapters
  double nic_line_Bps = 0;         ///< line rate of one NIC (bytes/s)
  double nvlink_Bps = 0;           ///< per-GPU NVLink rate a ring gets; 0: no NVLink
  double host_memory_Bps = 0;      ///< peak DRAM bandwidth of one socket (bytes/s)
  double socket_link_Bps = 0;      ///< between sockets (QPI/UPI/xGMI), per direction
  bool intel_root_complex = true;  ///< NCCL's 6/5 overhead through one Intel root complex
  bool p2p = true;                 ///< P2P allowed (NCCL_P2P_DISABLE unset)
  bool gdr = true;                 ///< GPUDirect RDMA available and enabled
  /// The NVSwitch reduces and multicasts (NVLink SHARP, third generation: H100, H200), which
  /// NCCL 2.17 and later use as its NVLS algorithm inside the node.
  bool nvls = false;
};

/// NCCL's transport between two GPUs or a GPU and a NIC.
enum class HostTransport { p2p_nvlink, p2p_pcie, shm, net_gdr, net_staged };

/// A chosen transport and its bottleneck rate.
struct HostPath {
  HostTransport transport = HostTransport::shm;  ///< what NCCL uses
  double rate_Bps = 0;                           ///< bottleneck, contention included
};

/// "p2p_nvlink", "p2p_pcie", "shm", "net_gdr", "net_staged".
std::string transport_name(HostTransport t);
/// Achievable DMA rate of a PCIe link: NCCL's width x per-lane figure (topo.cc kvDictPciGen).
double pcie_dma_Bps(int gen, int lanes);
/// `count` endpoints on PCIe Gen `gen` x `lanes`, spread in order as the presets lay them out:
/// endpoint i on PCIe switch i / `per_switch` (0: each on a CPU root port) and on socket
/// i / ceil(count / `sockets`).
std::vector<PcieEndpoint> pcie_endpoints(int count, int gen, int lanes, int per_switch,
                                         int sockets);
/// The preset names, sorted.
std::vector<std::string> node_preset_names();
/// A named preset; throws std::out_of_range for an unknown name.
NodeDescription node_preset(const std::string& name);
/// GPU a to GPU b while `sharing` SHM transfers use the memory of b's socket (the receiver's,
/// where NCCL puts the buffer) and `crossing` transfers cross the inter-socket link a to b.
HostPath gpu_gpu_path(const NodeDescription& n, int a, int b, int sharing, int crossing = 1);
/// GPU g to NIC k (one stream through that NIC).
HostPath gpu_nic_path(const NodeDescription& n, int g, int k);
/// The slowest hop of a ring over GPUs 0..gpus-1 (all hops at once, sharing host memory and
/// the inter-socket link), and its transport.
HostPath intra_node_ring_path(const NodeDescription& n, int gpus);
/// Each GPU's NVLink rate where NCCL may run NVLS inside the node: its NVSwitch has NVLink SHARP
/// (`nvls`) and the node's ring `ring` (intra_node_ring_path) runs over NVLink; else 0.
double nvls_link_Bps(const NodeDescription& n, const HostPath& ring);
/// The node's NICs together: each through its best GPU of 0..gpus-1, capped by its line rate.
HostPath nic_path(const NodeDescription& n, int gpus);

}  // namespace sgdsim
