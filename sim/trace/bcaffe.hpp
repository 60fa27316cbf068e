#pragma once
/// B-Caffe distributed-training logs (shyhuai/B-Caffe, logdata/tmp*comm.log): per parameter
/// blob, its size, the backward time of its layer and its allreduce time; the model profile
/// and the collective layout they imply. Port of experiments/mgwfbp/bcaffe_profile.py.
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/trace/measured.hpp"
#include "sim/workload/profile.hpp"

namespace sgdsim {

/// One parameter blob line "[param_id, size_elements, compute_us, allreduce_us(, merged_us)]".
struct BcaffeBlob {
  int id = 0;                  ///< param_id
  long long elements = 0;      ///< size in elements (padded to multiples of 64 by B-Caffe)
  double backward_s = 0;       ///< compute_us: backward time of the blob's layer
  double allreduce_s = 0;      ///< allreduce_us: the blob's gradient allreduce (0: merged)
  double merged_s = kUnknown;  ///< merged_us (newer logs only)
};

/// The measured block of a B-Caffe log: the last run of blobs numbered 0..N-1.
struct BcaffeLog {
  std::string file;               ///< where it was read from
  int ranks = 0;                  ///< nodes of the run (the log does not say; 0 = unknown)
  int blocks = 0;                 ///< blocks of blob lines in the log (the last one is used)
  std::vector<BcaffeBlob> blobs;  ///< the last block, ordered by id
};

/// Parses a B-Caffe log. Lines ending in "] [a, b, c, d]" or "] [a, b, c, d, e]" are blob
/// lines; other lines are skipped. The last block (from the last blob numbered 0) must number
/// its blobs 0..N-1 with N even (each layer owns a weight and a bias blob). Throws
/// InputError("file", "line N", ...) for a malformed blob line.
BcaffeLog parse_bcaffe_log(std::istream& in, const std::string& file, int ranks = 0);

/// Reads and parses a B-Caffe log (plain or gzip).
BcaffeLog read_bcaffe_log(const std::string& path, int ranks = 0);

/// Blobs whose gradients travelled in one allreduce.
struct BcaffeGroup {
  std::vector<int> blobs;  ///< blob ids, descending (backward order)
  long long elements = 0;  ///< summed sizes
  double allreduce_s = 0;  ///< the group's allreduce time
};

/// The allreduces of one iteration in backward order (highest blob id first): a blob with
/// allreduce time 0 was merged into the next blob in backward order that has one (trailing
/// zero blobs join the last group).
std::vector<BcaffeGroup> bcaffe_groups(const BcaffeLog& log);

/// The profile experiments/mgwfbp/bcaffe_profile.py writes: one layer per (weight, bias) blob
/// pair, parameters = both sizes, backward time = the pair's compute time (rounded to 1e-6 ms
/// like the script), forward 0, batch size 1.
Profile bcaffe_profile(const BcaffeLog& log);

/// A profile with one layer per allreduce group of `layout` (forward order), taking the
/// backward time of each (weight, bias) layer from `compute` and giving it to the group that
/// holds the layer's bias blob (the first of its blobs in backward order). Throws InputError
/// if the two logs do not have the same blobs.
Profile bcaffe_group_profile(const BcaffeLog& compute, const BcaffeLog& layout);

/// The log as a MeasuredTrace: one step whose compute_s is the summed backward time of the
/// layers, comm_s the summed allreduce times and time_s their sum (the log has no wall-clock
/// iteration time: this is the iteration without overlap), and one collective per group.
MeasuredTrace bcaffe_trace(const BcaffeLog& log);

}  // namespace sgdsim
