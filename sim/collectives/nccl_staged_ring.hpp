#pragma once
/// NCCL's Simple-protocol ring allreduce on the staged network path, simulated slice by slice
/// as its kernel runs (used by nccl_tuner without GPUDirect RDMA, one GPU per node).
namespace sgdsim {

/// NCCL_STEPS: the steps of one connection's buffer (NCCL 2.4.8 - 2.8 src/include/devcomm.h).
constexpr int kNcclSteps = 8;

/// The time of NCCL's ring allreduce of `bytes` over `ranks` ranks of one GPU per node on the
/// staged path: `channels` channels, NCCL_BUFFSIZE `buffer_bytes`, the host side at `host_Bps`
/// and the network at `net_Bps` (all channels together), `latency_s` per slice on the network.
double staged_ring_s(int ranks, int channels, double bytes, double buffer_bytes, double host_Bps,
                     double net_Bps, double latency_s);

}  // namespace sgdsim
