#pragma once
/// PyTorch Kineto (and generic Chrome) traces: per-step times, GPU compute, NCCL collectives;
/// and the DDP bucket profile a trace implies, for simulating the same job.
#include <string>
#include <vector>

#include "sim/trace/measured.hpp"
#include "sim/trace/trace_events.hpp"
#include "sim/workload/profile.hpp"

namespace sgdsim {

/// Imports Kineto/Chrome trace events: "ProfilerStep#N" CPU annotations are the steps; GPU
/// events ("kernel", "gpu_memcpy", "gpu_memset") are assigned to the step whose window holds
/// their start; kernels named "nccl..." are collectives (name, size and group from their args,
/// else from the CPU-side "record_param_comms" launches of the same step, matched in order),
/// the others are compute (compute_s = union of their busy intervals). "autograd::engine::
/// evaluate_function" CPU ops mark the backward pass. Format "kineto" when the trace has
/// Kineto metadata or ProfilerStep annotations, else "chrome".
MeasuredTrace kineto_trace(const TraceEventFile& events);

/// Reads and imports a Kineto/Chrome trace file (plain or gzip).
MeasuredTrace read_kineto_trace(const std::string& path);

/// A data-parallel (DDP) job reduced to what sgdsim simulates: one profile layer per gradient
/// bucket, the forward pass, and the time after the last allreduce.
struct DdpProfile {
  Profile profile;                   ///< layers: forward pass, then one layer per bucket
  double update_s = 0;               ///< step time after the last allreduce and backward op
  double forward_s = 0;              ///< step start to the first backward op
  std::vector<double> bucket_bytes;  ///< bucket sizes in launch (backward) order
  int steps_used = 0;                ///< steps the medians were taken over
  std::string notes;                 ///< how the numbers were derived
  bool per_layer = false;            ///< layers are model layers (false: one per DDP bucket)
  double gpu_s = 0;                  ///< per-layer profiles: GPU kernel time in the layers
};

/// Derives a DDP bucket profile from a trace's steps (medians over the steps that have the
/// most common allreduce layout). Bucket k (launch order) gets backward time r_k - r_{k-1}, r
/// the CPU launch (else kernel start) offsets and r_{-1} the first backward op; the forward
/// pass is the step start to the first backward op. Throws InputError if the trace has no
/// steps, no allreduce of known size, or no backward ops.
DdpProfile ddp_profile_from_trace(const MeasuredTrace& trace);

}  // namespace sgdsim
