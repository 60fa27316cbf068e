// NCCL's Simple-protocol ring on the staged network path, slice by slice: without GPUDirect
// RDMA the kernel writes each step into host memory and reads it back over PCIe, and the network
// proxy sends it from there (see nccl_tuner.cpp for where it is used and what it leaves out).
#include "sim/collectives/nccl_staged_ring.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace sgdsim {

namespace {

// NCCL's Simple-protocol ring (NCCL 2.4.8 - 2.8: src/include/devcomm.h NCCL_STEPS 8;
// collectives.h ALLREDUCE_CHUNKSTEPS NCCL_STEPS/2, ALLREDUCE_SLICESTEPS NCCL_STEPS/4).
constexpr int kChunkSteps = 4, kSliceSteps = 2;
constexpr int kSlicesPerChunk = kChunkSteps / kSliceSteps;
constexpr int kSliceSlots = kNcclSteps / kSliceSteps;  // slices a connection's buffer holds

/// One GPU operation of NCCL's ring kernel: a slice of a primitive (send, recvReduceSend, ...).
struct SliceOp {
  double bytes = 0;   ///< data of the slice on one channel (0: an empty slice, still posted)
  bool recv = false;  ///< waits for the previous rank's slice (every primitive but the first)
  bool send = false;  ///< hands its slice to the network (every primitive but the last)
};

/// The slices one channel of NCCL's ring allreduce works through, in order: loops of
/// channels x ranks x chunk bytes, each 2p - 1 primitives on a chunk of min(chunk, the rest /
/// (ranks x channels)) bytes (all_reduce.h, realChunkSize), each primitive 2 slices of 2 steps.
std::vector<SliceOp> ring_slices(int ranks, int channels, double bytes, double buffer_bytes) {
  const double step = buffer_bytes / kNcclSteps, chunk = step * kChunkSteps;
  const double slice = step * kSliceSteps, loop = ranks * channels * chunk;
  std::vector<SliceOp> ops;
  for (double offset = 0; offset < bytes; offset += loop) {
    const double c = std::min(chunk, std::ceil((bytes - offset) / (ranks * channels)));
    for (int j = 0; j < 2 * ranks - 1; ++j)
      for (int k = 0; k < kSlicesPerChunk; ++k)
        ops.push_back({std::clamp(c - k * slice, 0.0, slice), j > 0, j < 2 * ranks - 2});
  }
  return ops;
}

/// NCCL's ring allreduce on the staged network path, one GPU per node, by its kernel's slices.
/// Every rank and channel runs the same schedule at the same time (a ring of identical nodes),
/// so one channel of one rank is simulated: a slice's GPU operation starts when the previous one
/// is done, the previous rank's slice has arrived (its own slice of the previous primitive,
/// sent over the network) and, to send, the buffer has a free slot (NCCL_STEPS steps); the
/// network carries one slice at a time at net_Bps / channels, each arriving latency_s later.
/// The channels share the host path and the NIC, so each gets 1 / channels of their rates.
double staged_slices_s(int ranks, int channels, double bytes, double buffer_bytes, double host_Bps,
                       double net_Bps, double latency_s) {
  const std::vector<SliceOp> ops = ring_slices(ranks, channels, bytes, buffer_bytes);
  std::vector<double> done(ops.size()), arrival(ops.size());
  std::vector<size_t> sent_by;  // the operation of each send, in order
  std::vector<double> sent_at;  // when each send has left the sender's buffer
  double gpu_free = 0, nic_free = 0;
  for (size_t o = 0; o < ops.size(); ++o) {
    const SliceOp& op = ops[o];
    const size_t m = sent_by.size();
    double start = gpu_free;
    if (op.recv) start = std::max(start, arrival[o - kSlicesPerChunk]);
    if (op.send && m >= kSliceSlots) start = std::max(start, sent_at[m - kSliceSlots]);
    done[o] = gpu_free = start + op.bytes * channels / host_Bps;
    if (!op.send) continue;
    // The receiver's slot frees once it has consumed the send kSliceSlots before.
    double leave = std::max(done[o], nic_free);
    if (m >= kSliceSlots) leave = std::max(leave, done[sent_by[m - kSliceSlots] + kSlicesPerChunk]);
    nic_free = leave + op.bytes * channels / net_Bps;
    sent_by.push_back(o);
    sent_at.push_back(nic_free);
    arrival[o] = nic_free + latency_s;
  }
  return ops.empty() ? 0.0 : done.back();
}

}  // namespace

/// staged_slices_s, with every loop beyond kSimulatedLoops taken at the steady state's time per
/// loop (the schedule repeats itself from loop to loop once its pipeline has filled), so that
/// large messages and small buffers cost a bounded simulation.
double staged_ring_s(int ranks, int channels, double bytes, double buffer_bytes, double host_Bps,
                     double net_Bps, double latency_s) {
  constexpr double kSimulatedLoops = 256;
  const double loop = ranks * channels * buffer_bytes / kNcclSteps * kChunkSteps;
  const double loops = std::floor(bytes / loop);
  auto slices_s = [&](double b) {
    return staged_slices_s(ranks, channels, b, buffer_bytes, host_Bps, net_Bps, latency_s);
  };
  if (loops <= kSimulatedLoops) return slices_s(bytes);
  const double rest = bytes - loops * loop;
  const double half = slices_s(kSimulatedLoops / 2 * loop + rest);
  const double full = slices_s(kSimulatedLoops * loop + rest);
  return full + (loops - kSimulatedLoops) * (full - half) / (kSimulatedLoops / 2);
}

}  // namespace sgdsim
