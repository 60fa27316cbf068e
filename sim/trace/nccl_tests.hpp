#pragma once
/// nccl-tests logs (all_reduce_perf and friends): per-size times, algorithm and bus bandwidth.
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/trace/measured.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

/// One message size of an nccl-tests run.
struct NcclTestsPoint {
  double size_bytes = 0;              ///< "size" column (bytes)
  long long count = 0;                ///< "count" column (elements)
  std::string type;                   ///< "type" column (float, ...)
  std::string redop;                  ///< "redop" column (sum, none, ...)
  double time_s = 0;                  ///< out-of-place time
  double algbw_GBps = 0;              ///< out-of-place algorithm bandwidth (GB/s)
  double busbw_GBps = 0;              ///< out-of-place bus bandwidth (GB/s)
  double in_place_time_s = kUnknown;  ///< in-place time (NaN if not printed)
};

/// A parsed nccl-tests log.
struct NcclTestsLog {
  std::string file;                     ///< where it was read from
  std::string collective;               ///< normalized name ("allreduce" if the log does not say)
  bool collective_from_log = false;     ///< the log names its test ("Collective test starting")
  int ranks = 0;                        ///< "# Rank N ..." lines (or the caller's value)
  int gpus_per_thread = 1;              ///< "nGpus" of the header: GPUs one thread launches
  std::string device;                   ///< device of rank 0, if listed
  std::vector<std::string> rank_hosts;  ///< host of each "# Rank" line ("on HOST device")
  double avg_busbw_GBps = kUnknown;     ///< "# Avg bus bandwidth" line
  std::string nccl_version;  ///< "NCCL version 2.4.8+cuda10.1" (NCCL_DEBUG=INFO output), if any
  /// NCCL_ALGO as NCCL reports it ("NCCL_ALGO set by environment to Ring"), lower case: "ring",
  /// "tree", or the list as given; empty when the log does not say.
  std::string nccl_algo;
  std::vector<NcclTestsPoint> points;  ///< sizes in file order
};

/// Parses an nccl-tests log: data lines "size count type redop [root] time algbw busbw #wrong
/// time algbw busbw #wrong" (times in us; "#wrong" may be N/A), '#' lines give the ranks
/// ("#  Rank  0 Group ... device  0 [...] NAME"), the test name ("# Collective test
/// starting: all_reduce_perf") and the average bus bandwidth. `ranks` (> 0) is used when the
/// log lists no ranks. Throws InputError("file", "line N", ...) for a malformed data line or
/// no data at all.
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file, int ranks = 0);

/// Reads and parses an nccl-tests log (plain or gzip).
NcclTestsLog read_nccl_tests_log(const std::string& path, int ranks = 0);

/// Distinct hosts of the rank lines (1 when the log lists none).
int nccl_nodes(const NcclTestsLog& log);
/// Ranks on the most populated host (all ranks when the log lists no hosts).
int nccl_gpus_per_node(const NcclTestsLog& log);

/// The log as a MeasuredTrace: one collective per size (out-of-place time).
MeasuredTrace nccl_tests_trace(const NcclTestsLog& log);

}  // namespace sgdsim
