/// The host path inside one node, following NCCL's topology rules (src/graph/paths.cc,
/// search.cc, topo.h, topo.cc of NVIDIA/nccl; rules restated, no code copied):
/// - P2P between two GPUs over NVLink when they have NVLink, else over PCIe when both sit
///   under one PCIe switch (NCCL's default P2P level PXB: not through a CPU host bridge) and
///   P2P is allowed (NCCL_P2P_DISABLE also turns NVLink P2P off);
/// - otherwise SHM through host memory, the buffer on the receiver's socket (NCCL's default
///   NCCL_SHM_LOCALITY, src/transport/shm.cc): each GPU's PCIe link, NCCL's 6/5 overhead through
///   an Intel root complex (search.cc: only when both GPUs hang under one CPU, PATH_PHB), the
///   inter-socket link when the sockets differ, shared by the ring's hops crossing it in that
///   direction, and the receiver socket's DRAM, shared by every SHM hop whose buffer is there
///   (each byte is written into it and read out of it once);
/// - NET with GPUDirect RDMA when GPU and NIC share a PCIe switch (NCCL's GDR level PXB) and
///   GDR is on, else staged through host memory (GPU -> DRAM -> NIC: two PCIe crossings and a
///   DRAM write + read).
/// Left out: NVLink topologies other than "every ring hop gets nvlink_Bps", PCIe switch
/// hierarchies (PXB across switches), PXN, C2C, CollNet, per-channel bandwidth limits (NVLS on
/// one node is the `nvls` flag, which nccl_tuner reads).
#include "sim/scenario/host_path.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace sgdsim {

namespace {

constexpr double kGB = 1e9;

/// A socket's peak DRAM bandwidth: channels x transfers/s x 8 bytes (the 64 data bits of a
/// JEDEC DDR4 channel, and of a DDR5 DIMM's two 32-bit subchannels).
double ddr_Bps(int channels, double mega_transfers) {
  return channels * mega_transfers * 1e6 * 8;
}

/// `count` endpoints on PCIe Gen `gen` x `lanes`; endpoint i on switch i / per_switch (or on a
/// root port if per_switch is 0), on socket i / per_socket.
std::vector<PcieEndpoint> endpoints_laid_out(int count, int gen, int lanes, int per_switch,
                                             int per_socket) {
  std::vector<PcieEndpoint> v;
  for (int i = 0; i < count; ++i)
    v.push_back({gen, lanes, per_switch > 0 ? i / per_switch : -1, i / per_socket});
  return v;
}

/// The presets' endpoints: x16 links.
std::vector<PcieEndpoint> endpoints(int count, int gen, int per_switch, int per_socket) {
  return endpoints_laid_out(count, gen, 16, per_switch, per_socket);
}

// NVLink: NCCL's per-link ring bandwidth (topo.h SM70_NVLINK_BW, SM80_NVLINK_BW = 20 GB/s)
// times the links per GPU (V100: 6 NVLink2 links; A100: 12 NVLink3 links; NVIDIA data sheets).
constexpr double kNcclNvlinkPerLinkBps = 20 * kGB;
// Inter-socket links: NCCL topo.h BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22, AMD_BW 16 (GB/s).
constexpr double kBroadwellQpiBps = 6 * kGB;
constexpr double kSkylakeUpiBps = 10 * kGB;
constexpr double kSapphireRapidsUpiBps = 22 * kGB;
constexpr double kAmdBps = 16 * kGB;
// AMD_ZEN34_BW (Zen 3 and 4) in NCCL's current topo.h; NCCL 2.18's AMD_BW was one figure, 16.
constexpr double kAmdZen3Bps = 24 * kGB;
// NVLink 1.0 (P100): topo.h SM60_NVLINK_BW.
constexpr double kNcclNvlink1PerLinkBps = 18 * kGB;
// NVLink4 (H100): topo.h SM90_NVLINK_BW.
constexpr double kNcclNvlink4PerLinkBps = 20.6 * kGB;
// NVLink5 (B200, GB200): topo.h SM100_NVLINK_BW.
constexpr double kNcclNvlink5PerLinkBps = 40.1 * kGB;
// Arm CPUs between sockets: topo.h ARM_BW.
constexpr double kArmBps = 6 * kGB;

/// `n` under another preset's name: a product with the same host path.
NodeDescription renamed(NodeDescription n, const char* name) {
  n.name = name;
  return n;
}

/// NVIDIA DGX-1 with Tesla V100 System Architecture (WP-08437-002): 8 V100 SXM2 in a hybrid
/// cube-mesh of NVLink (6 links each), 4 PCIe Gen3 switches each with 2 GPUs and one 100 Gb/s
/// EDR InfiniBand NIC (GPUDirect RDMA), 2 Xeon E5-2698 v4 (Broadwell, 4 channels DDR4-2133).
NodeDescription dgx1_v100() {
  NodeDescription n;
  n.name = "dgx1-v100";
  n.gpus = endpoints(8, 3, 2, 4);
  n.nics = endpoints(4, 3, 1, 2);
  n.nic_line_Bps = 100e9 / 8;
  n.nvlink_Bps = 6 * kNcclNvlinkPerLinkBps;
  n.host_memory_Bps = ddr_Bps(4, 2133);
  n.socket_link_Bps = kBroadwellQpiBps;
  return n;
}

/// NVIDIA DGX-1 with Tesla P100 (the DGX-1 System Architecture white paper, WP-08437-001): 8
/// P100 SXM2 in the same hybrid cube-mesh with 4 NVLink 1.0 links each (NCCL's SM60_NVLINK_BW,
/// 18 GB/s per link), the PCIe layout, NICs and CPUs of the V100 DGX-1.
NodeDescription dgx1_p100() {
  NodeDescription n = dgx1_v100();
  n.name = "dgx1-p100";
  n.nvlink_Bps = 4 * kNcclNvlink1PerLinkBps;
  return n;
}

/// NVIDIA DGX-2 data sheet: 16 V100 SXM3 32 GB on 12 NVSwitches (6 NVLink2 links each), 8 x
/// 100 Gb/s EDR InfiniBand / 100 GbE compute ports, 2 Xeon Platinum 8168 (Skylake-SP, 6
/// channels DDR4-2666 each). PCIe Gen3: 8 switches, each with 2 GPUs and one compute NIC, 4 per
/// socket (`nvidia-smi topo -m` of a DGX-2 in NVIDIA/nccl-tests#78: GPU pairs PIX to one mlx5
/// port, GPUs 0-7 on the first socket), GPUDirect RDMA.
NodeDescription dgx2() {
  NodeDescription n;
  n.name = "dgx2";
  n.gpus = endpoints(16, 3, 2, 8);
  n.nics = endpoints(8, 3, 1, 4);
  n.nic_line_Bps = 100e9 / 8;
  n.nvlink_Bps = 6 * kNcclNvlinkPerLinkBps;
  n.host_memory_Bps = ddr_Bps(6, 2666);
  n.socket_link_Bps = kSkylakeUpiBps;
  return n;
}

/// NVIDIA DGX-2H: the DGX-2 with faster V100 (450 W) and Xeon Platinum 8174: the same host path.
NodeDescription dgx2h() {
  return renamed(dgx2(), "dgx2h");
}

/// NVIDIA DGX A100 User Guide / data sheet: 8 A100 SXM4 on 6 NVSwitches (12 NVLink3 links
/// each), 4 PCIe Gen4 switches each with 2 GPUs and 2 of the 8 single-port 200 Gb/s HDR
/// ConnectX-6 compute NICs (GPUDirect RDMA), 2 AMD EPYC 7742 (8 channels DDR4-3200 each).
NodeDescription dgx_a100() {
  NodeDescription n;
  n.name = "dgx-a100";
  n.gpus = endpoints(8, 4, 2, 4);
  n.nics = endpoints(8, 4, 2, 4);
  n.nic_line_Bps = 200e9 / 8;
  n.nvlink_Bps = 12 * kNcclNvlinkPerLinkBps;
  n.host_memory_Bps = ddr_Bps(8, 3200);
  n.socket_link_Bps = kAmdBps;
  n.intel_root_complex = false;
  return n;
}

/// AWS EC2 P3 instances (p3dn.24xlarge): 8 V100 32 GB with NVLink (the DGX-1 mesh), one
/// 100 Gb/s ENA/EFA adapter without GPUDirect RDMA (AWS lists GPUDirect RDMA from P4d on),
/// 2 Xeon Platinum 8175M (Skylake, 6 channels DDR4-2666 each).
NodeDescription p3dn_24xlarge() {
  NodeDescription n;
  n.name = "p3dn.24xlarge";
  n.gpus = endpoints(8, 3, 2, 4);
  n.nics = endpoints(1, 3, 0, 1);
  n.nic_line_Bps = 100e9 / 8;
  n.nvlink_Bps = 6 * kNcclNvlinkPerLinkBps;
  n.host_memory_Bps = ddr_Bps(6, 2666);
  n.socket_link_Bps = kSkylakeUpiBps;
  n.gdr = false;
  return n;
}

/// AWS EC2 P4d instances (p4d.24xlarge): 8 A100 40 GB on NVSwitch (600 GB/s per GPU), 4 x
/// 100 Gb/s EFA with GPUDirect RDMA, PCIe Gen4 switches each with 2 GPUs and one EFA, 2 Xeon
/// Platinum 8275CL (Cascade Lake, 6 channels DDR4-2933 each).
NodeDescription p4d_24xlarge() {
  NodeDescription n;
  n.name = "p4d.24xlarge";
  n.gpus = endpoints(8, 4, 2, 4);
  n.nics = endpoints(4, 4, 1, 2);
  n.nic_line_Bps = 100e9 / 8;
  n.nvlink_Bps = 12 * kNcclNvlinkPerLinkBps;
  n.host_memory_Bps = ddr_Bps(6, 2933);
  n.socket_link_Bps = kSkylakeUpiBps;
  return n;
}

/// AWS EC2 P3 (the P3 launch post, aws.amazon.com/blogs/aws, 2017-10-25, and the P3 product
/// page): p3.16xlarge is 8 V100 16 GB in the DGX-1 NVLink mesh (300 GB/s per GPU: 6 links),
/// 25 Gb/s ENA networking, 2 Xeon E5-2686 v4 (Broadwell; AWS's own part: the memory is taken
/// as the Xeon E5-2600 v4 family's 4 channels of DDR4-2400, Intel ARK). No GPUDirect RDMA.
NodeDescription p3_16xlarge() {
  NodeDescription n = dgx1_v100();
  n.name = "p3.16xlarge";
  n.nics = endpoints(1, 3, 0, 1);
  n.nic_line_Bps = 25e9 / 8;
  n.host_memory_Bps = ddr_Bps(4, 2400);
  n.gdr = false;
  return n;
}

/// AWS EC2 p3.8xlarge: 4 V100 16 GB with 200 GB/s of NVLink per GPU (4 links: the DGX-1
/// mesh's links inside one quad), 32 vCPUs of one Xeon E5-2686 v4, 10 Gb/s ENA, no GPUDirect.
NodeDescription p3_8xlarge() {
  NodeDescription n = p3_16xlarge();
  n.name = "p3.8xlarge";
  n.gpus = endpoints(4, 3, 2, 4);
  n.nvlink_Bps = 4 * kNcclNvlinkPerLinkBps;
  n.nic_line_Bps = 10e9 / 8;
  return n;
}

/// AWS EC2 P2 (the P2 launch post, aws.amazon.com/blogs/aws, 2016-09-29): Tesla K80 boards,
/// two GK210 GPUs each behind the board's PCIe switch on one Gen3 x16 slot (NVIDIA Tesla K80
/// board specification), P2P between them; no NVLink; Xeon E5-2686 v4. p2.8xlarge: 8 GPUs
/// (4 boards), 32 vCPUs of one socket, 10 Gb/s; p2.16xlarge: 16 GPUs, 2 sockets, 25 Gb/s.
NodeDescription p2_instance(const char* name, int gpus, double nic_bps) {
  NodeDescription n;
  n.name = name;
  n.gpus = endpoints(gpus, 3, 2, 8);
  n.nics = endpoints(1, 3, 0, 1);
  n.nic_line_Bps = nic_bps / 8;
  n.host_memory_Bps = ddr_Bps(4, 2400);
  n.socket_link_Bps = kBroadwellQpiBps;
  n.gdr = false;
  return n;
}
NodeDescription p2_8xlarge() {
  return p2_instance("p2.8xlarge", 8, 10e9);
}
NodeDescription p2_16xlarge() {
  return p2_instance("p2.16xlarge", 16, 25e9);
}

/// NVIDIA DGX H100 User Guide: 8 H100 SXM5 on 4 NVSwitches (18 NVLink4 links each), PCIe Gen5
/// switches each with 2 GPUs and 2 of the 8 single-port 400 Gb/s ConnectX-7 compute NICs
/// (GPUDirect RDMA), 2 Xeon Platinum 8480C (Sapphire Rapids, 8 channels DDR5-4800 each).
NodeDescription dgx_h100() {
  NodeDescription n;
  n.name = "dgx-h100";
  n.nvls = true;  // four third-generation NVSwitches
  n.gpus = endpoints(8, 5, 2, 4);
  n.nics = endpoints(8, 5, 2, 4);
  n.nic_line_Bps = 400e9 / 8;
  n.nvlink_Bps = 18 * kNcclNvlink4PerLinkBps;
  n.host_memory_Bps = ddr_Bps(8, 4800);
  n.socket_link_Bps = kSapphireRapidsUpiBps;
  return n;
}

/// AWS EC2 P5 (p5.48xlarge, the P5 product page): 8 H100 80 GB on NVSwitch (900 GB/s per GPU),
/// 3200 Gb/s of EFA as 32 x 100 Gb/s with GPUDirect RDMA, 2 AMD EPYC 7R13 (Milan, 8 channels
/// DDR4-3200). The PCIe layout is not published: taken as 4 switches of 2 GPUs and 8 EFA each,
/// Gen4 x16 (Milan's root ports).
NodeDescription p5_48xlarge() {
  NodeDescription n;
  n.name = "p5.48xlarge";
  n.nvls = true;  // H100 SXM on NVSwitch: third generation
  n.gpus = endpoints(8, 4, 2, 4);
  n.nics = endpoints(32, 4, 8, 16);
  n.nic_line_Bps = 100e9 / 8;
  n.nvlink_Bps = 18 * kNcclNvlink4PerLinkBps;
  n.host_memory_Bps = ddr_Bps(8, 3200);
  n.socket_link_Bps = kAmdZen3Bps;
  n.intel_root_complex = false;
  return n;
}

/// Azure ND A100 v4 (ND96asr_v4, Microsoft Learn "ND A100 v4-series"): 8 A100 40 GB on
/// NVSwitch, one 200 Gb/s HDR InfiniBand NIC per GPU with GPUDirect RDMA, 2 AMD EPYC 7V12
/// (Rome, 8 channels DDR4-3200): the DGX A100's layout.
NodeDescription nd96asr_v4() {
  return renamed(dgx_a100(), "nd96asr-v4");
}

/// Azure NDm A100 v4 (ND96amsr_A100_v4, Microsoft Learn "NDm A100 v4-series"): as ND A100 v4
/// with A100 80 GB: one 200 Gb/s HDR InfiniBand NIC per GPU with GPUDirect RDMA, NVLink 3.0,
/// 96 cores of AMD EPYC 7V12 (Rome).
NodeDescription nd96amsr_a100_v4() {
  return renamed(nd96asr_v4(), "nd96amsr-a100-v4");
}

/// Azure NDv2 (ND40rs_v2, Microsoft Learn "NDv2-series"): 8 V100 32 GB connected by NVLink (the
/// HGX-1 / DGX-1 hybrid cube mesh), 40 cores of Xeon Platinum 8168 (Skylake, 6 channels
/// DDR4-2666 per socket), one 100 Gb/s EDR InfiniBand NIC; GPUDirect RDMA is not listed. The
/// PCIe layout is taken as the DGX-1's, with the NIC on the first switch (as p3dn.24xlarge).
NodeDescription nd40rs_v2() {
  return renamed(p3dn_24xlarge(), "nd40rs-v2");
}

/// Azure ND H100 v5 (ND96isr_H100_v5, Microsoft Learn "ND H100 v5 series"): 8 H100 with NVLink
/// 4.0, one 400 Gb/s Quantum-2 ConnectX-7 InfiniBand NIC per GPU with GPUDirect RDMA, 96 cores
/// of fourth-generation Xeon Scalable (Sapphire Rapids: 8 channels DDR5-4800 per socket). The
/// PCIe layout is not published: taken as the DGX H100's (2 GPUs and 2 NICs per Gen5 switch).
NodeDescription nd96isr_h100_v5() {
  return renamed(dgx_h100(), "nd96isr-h100-v5");
}

/// Azure ND GB200 v6 (Microsoft Learn "ND GB200 v6 series"): one compute tray of a GB200 NVL72
/// rack, 2 Grace CPUs and 4 Blackwell GPUs on fifth-generation NVLink (18 links, 1.8 TB/s per
/// GPU both ways), 4 x 400 Gb/s Quantum-2 ConnectX-7 InfiniBand (one per GPU). Not published,
/// taken as: each GPU and its NIC under one Gen5 switch with GPUDirect RDMA, 2 GPUs per Grace;
/// a Grace's LPDDR5X at 512 GB/s (NVIDIA: 1 TB/s for the two Graces of a Grace CPU
/// Superchip; unused here, as the socket link is). NVLS is not declared: NCCL's
/// efficiency on Blackwell (0.74) is not nvls's default (run `nvls` with 0.74 by hand).
NodeDescription nd_gb200_v6() {
  NodeDescription n;
  n.name = "nd-gb200-v6";
  n.gpus = endpoints(4, 5, 1, 2);
  n.nics = endpoints(4, 5, 1, 2);
  n.nic_line_Bps = 400e9 / 8;
  n.nvlink_Bps = 18 * kNcclNvlink5PerLinkBps;
  n.host_memory_Bps = 512 * kGB;
  n.socket_link_Bps = kArmBps;  // unused: every GPU pair has NVLink
  n.intel_root_complex = false;
  return n;
}

/// HGX A800 8-GPU servers (NVIDIA A800 data sheet: A800 SXM4 80 GB, NVLink at 400 GB/s both
/// directions, 8 NVLink3 links where the A100 has 12): the HGX A100 board, so the DGX A100's
/// host path is taken (2 GPUs and 2 of 8 x 200 Gb/s NICs per Gen4 switch, GPUDirect RDMA);
/// servers differ in CPUs and NICs (fewer or slower NICs: `node_link.bandwidth`).
NodeDescription hgx_a800() {
  NodeDescription n = renamed(dgx_a100(), "hgx-a800");
  n.nvlink_Bps = 8 * kNcclNvlinkPerLinkBps;
  return n;
}

/// HGX H800 8-GPU servers (NVIDIA H800 data sheet: H800 SXM5, NVLink at 400 GB/s both
/// directions, 8 NVLink4 links where the H100 has 18, on third-generation NVSwitches): the DGX
/// H100's host path (2 GPUs and 2 of 8 x 400 Gb/s NICs per Gen5 switch, GPUDirect RDMA), NVLS.
NodeDescription hgx_h800() {
  NodeDescription n = renamed(dgx_h100(), "hgx-h800");
  n.nvlink_Bps = 8 * kNcclNvlink4PerLinkBps;
  return n;
}

/// Google Cloud a2-highgpu-8g (Compute Engine GPU machine types): 8 A100 40 GB on NVSwitch,
/// 100 Gb/s of VM networking (gVNIC, TCP; no GPUDirect), Intel Cascade Lake (6 channels
/// DDR4-2933 per socket).
NodeDescription a2_highgpu_8g() {
  NodeDescription n = p4d_24xlarge();
  n.name = "a2-highgpu-8g";
  n.nics = endpoints(1, 3, 0, 1);
  n.gdr = false;
  return n;
}

/// GPUs of one PCIe generation on root ports (no switch), `per_socket` to a socket.
struct RootPortGpus {
  int count, gen, per_socket;
};
/// One NIC on a root port of socket 0.
struct RootPortNic {
  int gen;
  double line_Bps;
};

/// A server whose GPUs and one NIC sit on CPU root ports, without GPUDirect RDMA: NCCL's SHM
/// between GPUs, the NIC staged through host memory.
NodeDescription root_port_server(const char* name, RootPortGpus gpus, RootPortNic nic,
                                 double memory_Bps, double socket_link_Bps) {
  NodeDescription n;
  n.name = name;
  n.gpus = endpoints(gpus.count, gpus.gen, 0, gpus.per_socket);
  n.nics = endpoints(1, nic.gen, 0, 1);
  n.nic_line_Bps = nic.line_Bps;
  n.host_memory_Bps = memory_Bps;
  n.socket_link_Bps = socket_link_Bps;
  n.gdr = false;
  return n;
}

/// AWS EC2 G4dn (g4dn.12xlarge): 4 T4 (PCIe Gen3 x16, no NVLink), 48 vCPUs of one Xeon
/// Platinum 8259CL (Cascade Lake, 6 channels DDR4-2933), 50 Gb/s ENA. The PCIe layout is not
/// published: taken as root ports (no switch, so NCCL's SHM between GPUs).
NodeDescription g4dn_12xlarge() {
  return root_port_server("g4dn.12xlarge", {4, 3, 4}, {3, 50e9 / 8}, ddr_Bps(6, 2933),
                          kSkylakeUpiBps);
}

/// AWS EC2 G5 (g5.48xlarge; EC2 accelerated computing instances): 8 A10G (PCIe Gen4 x16, no
/// NVLink), 192 vCPUs of second-generation AMD EPYC (Rome: two sockets, 8 channels DDR4-3200
/// each), 100 Gb/s ENA without GPUDirect RDMA. The PCIe layout is not published: taken as root
/// ports, 4 GPUs per socket (no switch, so NCCL's SHM between GPUs), the ENA on socket 0.
NodeDescription g5_48xlarge() {
  NodeDescription n =
      root_port_server("g5.48xlarge", {8, 4, 4}, {4, 100e9 / 8}, ddr_Bps(8, 3200), kAmdBps);
  n.intel_root_complex = false;
  return n;
}

/// A 2-socket PCIe Gen5 server of 8 GPUs without NVLink or P2P (as GeForce GPUs), each GPU
/// Gen5 x16 on a root port, 4 per socket, one 100 Gb/s NIC (Gen4 x16) on socket 0 without
/// GPUDirect RDMA; 2 Intel Xeon Platinum 8480+ (Sapphire Rapids; Intel ARK: 80 PCIe 5.0
/// lanes, 8 channels DDR5-4800, 4 UPI links at 16 GT/s). Inter-socket: NCCL's SRP_QPI_BW.
NodeDescription pcie_8gpu_2socket_gen5() {
  return root_port_server("pcie-8gpu-2socket-gen5", {8, 5, 4}, {4, 100e9 / 8}, ddr_Bps(8, 4800),
                          kSapphireRapidsUpiBps);
}

/// A generic PCIe server: 4 GPUs and one 100 Gb/s NIC, each PCIe Gen3 x16 on a root port of
/// one Intel Xeon (Skylake-SP: 48 lanes, 6 channels DDR4-2666), no switch, no GPUDirect RDMA.
NodeDescription pcie_4gpu_1nic() {
  return root_port_server("pcie-4gpu-1nic", {4, 3, 4}, {3, 100e9 / 8}, ddr_Bps(6, 2666),
                          kSkylakeUpiBps);
}

const std::map<std::string, NodeDescription (*)()>& presets() {
  static const std::map<std::string, NodeDescription (*)()> m = {
      {"dgx1-p100", dgx1_p100},
      {"dgx1-v100", dgx1_v100},
      {"dgx2", dgx2},
      {"dgx2h", dgx2h},
      {"dgx-a100", dgx_a100},
      {"dgx-h100", dgx_h100},
      {"hgx-a800", hgx_a800},
      {"hgx-h800", hgx_h800},
      {"p2.8xlarge", p2_8xlarge},
      {"p2.16xlarge", p2_16xlarge},
      {"p3.8xlarge", p3_8xlarge},
      {"p3.16xlarge", p3_16xlarge},
      {"p3dn.24xlarge", p3dn_24xlarge},
      {"p4d.24xlarge", p4d_24xlarge},
      {"p5.48xlarge", p5_48xlarge},
      {"nd40rs-v2", nd40rs_v2},
      {"nd96amsr-a100-v4", nd96amsr_a100_v4},
      {"nd96asr-v4", nd96asr_v4},
      {"nd96isr-h100-v5", nd96isr_h100_v5},
      {"nd-gb200-v6", nd_gb200_v6},
      {"a2-highgpu-8g", a2_highgpu_8g},
      {"g4dn.12xlarge", g4dn_12xlarge},
      {"g5.48xlarge", g5_48xlarge},
      {"pcie-4gpu-1nic", pcie_4gpu_1nic},
      {"pcie-8gpu-2socket-gen5", pcie_8gpu_2socket_gen5}};
  return m;
}

double dma_Bps(const PcieEndpoint& e) {
  return pcie_dma_Bps(e.gen, e.lanes);
}

bool same_switch(const PcieEndpoint& a, const PcieEndpoint& b) {
  return a.pcie_switch >= 0 && a.pcie_switch == b.pcie_switch && a.socket == b.socket;
}

}  // namespace

std::string transport_name(HostTransport t) {
  switch (t) {
    case HostTransport::p2p_nvlink:
      return "p2p_nvlink";
    case HostTransport::p2p_pcie:
      return "p2p_pcie";
    case HostTransport::shm:
      return "shm";
    case HostTransport::net_gdr:
      return "net_gdr";
    case HostTransport::net_staged:
      return "net_staged";
  }
  return "?";
}

double pcie_dma_Bps(int gen, int lanes) {
  // NCCL topo.cc: bw = width x speed / 80 GB/s, speed 15, 30, 60, 120, 240, 480 for the
  // 2.5 to 64 GT/s generations (Gen3 x16: 12 GB/s, topo.h PCI_BW; Gen4 x16: 24 GB/s).
  static const double per_gen[] = {15, 30, 60, 120, 240, 480};
  if (gen < 1 || gen > 6) throw std::out_of_range("PCIe generation 1-6");
  return lanes * per_gen[gen - 1] / 80 * kGB;
}

std::vector<PcieEndpoint> pcie_endpoints(int count, int gen, int lanes, int per_switch,
                                         int sockets) {
  return endpoints_laid_out(count, gen, lanes, per_switch,
                            std::max(1, (count + sockets - 1) / sockets));
}

std::vector<std::string> node_preset_names() {
  std::vector<std::string> v;
  for (const auto& [name, make] : presets()) v.push_back(name);
  return v;
}

NodeDescription node_preset(const std::string& name) {
  return presets().at(name)();
}

HostPath gpu_gpu_path(const NodeDescription& n, int a, int b, int sharing, int crossing) {
  const PcieEndpoint &ga = n.gpus.at(a), &gb = n.gpus.at(b);
  if (n.p2p && n.nvlink_Bps > 0) return {HostTransport::p2p_nvlink, n.nvlink_Bps};
  const double dma = std::min(dma_Bps(ga), dma_Bps(gb));
  if (n.p2p && same_switch(ga, gb)) return {HostTransport::p2p_pcie, dma};
  const bool same_socket = ga.socket == gb.socket;
  double rate = n.intel_root_complex && same_socket ? dma * 5 / 6 : dma;
  if (!same_socket) rate = std::min(rate, n.socket_link_Bps / std::max(crossing, 1));
  rate = std::min(rate, n.host_memory_Bps / (2.0 * std::max(sharing, 1)));
  return {HostTransport::shm, rate};
}

HostPath gpu_nic_path(const NodeDescription& n, int g, int k) {
  const PcieEndpoint &gpu = n.gpus.at(g), &nic = n.nics.at(k);
  const double dma = std::min(dma_Bps(gpu), dma_Bps(nic));
  if (n.gdr && same_switch(gpu, nic)) return {HostTransport::net_gdr, dma};
  double rate = std::min(dma, n.host_memory_Bps / 2);
  if (gpu.socket != nic.socket) rate = std::min(rate, n.socket_link_Bps);
  return {HostTransport::net_staged, rate};
}

double nvls_link_Bps(const NodeDescription& n, const HostPath& ring) {
  return n.nvls && ring.transport == HostTransport::p2p_nvlink ? ring.rate_Bps : 0.0;
}

HostPath intra_node_ring_path(const NodeDescription& n, int gpus) {
  HostPath worst{HostTransport::p2p_nvlink, std::numeric_limits<double>::infinity()};
  if (gpus < 2) return worst;
  // The shared resources of the ring's SHM hops: the DRAM of the receiver's socket (a write
  // and a read per byte) and the inter-socket link in the hop's direction.
  std::map<int, int> buffers_on_socket;
  std::map<std::pair<int, int>, int> crossings;
  auto next = [gpus](int a) { return (a + 1) % gpus; };
  for (int a = 0; a < gpus; ++a) {
    if (gpu_gpu_path(n, a, next(a), 1, 1).transport != HostTransport::shm) continue;
    const int from = n.gpus.at(a).socket, to = n.gpus.at(next(a)).socket;
    ++buffers_on_socket[to];
    if (from != to) ++crossings[{from, to}];
  }
  for (int a = 0; a < gpus; ++a) {
    const int from = n.gpus[a].socket, to = n.gpus[next(a)].socket;
    const HostPath p =
        gpu_gpu_path(n, a, next(a), buffers_on_socket[to], from != to ? crossings[{from, to}] : 1);
    if (p.rate_Bps < worst.rate_Bps) worst = p;
  }
  return worst;
}

HostPath nic_path(const NodeDescription& n, int gpus) {
  HostPath total{HostTransport::net_gdr, 0};
  std::map<int, double> staged_per_socket;
  for (size_t k = 0; k < n.nics.size(); ++k) {
    HostPath best{HostTransport::net_staged, 0};
    for (int g = 0; g < gpus; ++g) {
      const HostPath p = gpu_nic_path(n, g, static_cast<int>(k));
      // At equal rates GPUDirect wins: it spends no host memory, which staged NICs share.
      const bool gdr_tie = p.rate_Bps == best.rate_Bps && p.transport == HostTransport::net_gdr;
      if (p.rate_Bps > best.rate_Bps || gdr_tie) best = p;
    }
    const double rate = std::min(best.rate_Bps, n.nic_line_Bps);
    if (best.transport == HostTransport::net_staged) {
      // Staged NICs of one socket share its DRAM (a write and a read per byte).
      double& used = staged_per_socket[n.nics[k].socket];
      const double room = std::max(0.0, n.host_memory_Bps / 2 - used);
      used += std::min(rate, room);
      total.rate_Bps += std::min(rate, room);
      total.transport = HostTransport::net_staged;
    } else {
      total.rate_Bps += rate;
    }
  }
  return total;
}

}  // namespace sgdsim
