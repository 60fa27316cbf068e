#pragma once
/// The guarded limits on what a user gives sgdsim, in one place. Past each one the input is
/// refused (exit 2, one line naming the file or flag, the JSON pointer and the limit) before
/// anything reads it further, so no input can exhaust the stack, the memory or a number's
/// exact range. docs/hardening.md's table of limits is generated from the `///` lines below
/// (tests/repo/limits_table.py); a limit's line says its value and why.
#include <cstddef>
#include <cstdint>

namespace sgdsim::limits {

/// Simulated activities of a run (or a collective), estimated before it starts: 10^9, refused
/// unless --force. SimGrid runs 1.5 to 4.5 x 10^5 a second here: 10^9 take 37 minutes to 2 hours.
inline constexpr double kMaxActivities = 1e9;
/// Simulated activities past which a run prints a warning first: 10^8 (4 to 11 minutes).
inline constexpr double kWarnActivities = 1e8;

/// Hosts of a platform file: 10^6. SimGrid itself takes minutes to build more; the largest
/// generated platform sgdsim has run has 262,144 hosts.
inline constexpr size_t kMaxPlatformHosts = 1000000;

/// Parameters of a model profile (per layer and in total): 10^15, a 4 PB fp32 gradient,
/// 1,000 times a 10^12-parameter model.
inline constexpr int64_t kMaxParameters = 1000000000000000;

/// JSON nesting depth: 1,000 levels. The shipped scenarios, profiles and sweeps nest 5 deep, the
/// traces of data/validation 6; Python's json module stops near 1,000 (its recursion limit);
/// printing a value for a message ("got ...") recurses once per level.
inline constexpr int kMaxJsonDepth = 1000;

/// Decompressed bytes of a gzip input: 4 GiB, 270 times the largest PyTorch profiler trace of
/// data/validation (15 MB unpacked); the log importers keep a file's whole text in memory.
inline constexpr uint64_t kMaxDecompressedBytes = uint64_t{4} << 30;

/// Gzip expansion ratio: 250 once 64 MiB are unpacked (kGzipRatioAfterBytes). The traces of
/// data/validation unpack 13 to 14 times; a bomb of zeros reaches deflate's 1,032.
inline constexpr double kMaxGzipRatio = 250;
/// Decompressed bytes before the gzip ratio is checked: 64 MiB, so that a small file with long
/// runs of one byte is not taken for a bomb.
inline constexpr uint64_t kGzipRatioAfterBytes = uint64_t{64} << 20;

/// Message size (a collective's payload, a bucket, a Chakra comm_size): 2^48 bytes (256 TiB).
/// The engine gives SimGrid payloads in 1/16,384 byte as 64-bit integers (2^50 bytes at
/// most); a 10^12-parameter model's fp32 gradient is 4 TB (2^42).
inline constexpr double kMaxMessageBytes = 281474976710656.0;

/// Input times (latencies, compute, I/O and Chakra durations): 10^9 s (31.7 years). A training
/// step's costs are microseconds to hours; at 10^9 s a double still resolves 0.2 us.
inline constexpr double kMaxTime_s = 1e9;

/// Slowest bandwidth: 1 byte/s, so that a largest message takes a finite 2^48 s (a 56 kbps
/// modem is 7,000 B/s).
inline constexpr double kMinBandwidth_Bps = 1.0;

/// Slowest device speed: 1 FLOP/s, so that a largest layer (10^15 parameters) takes a finite
/// time.
inline constexpr double kMinSpeed_flops = 1.0;

/// Routing table of a Full or Floyd zone: 2 GiB. SimGrid 3.32 allocates it before it reads a
/// route: 8 bytes per ordered pair of the zone's members (Full), 24 (Floyd); 2 GiB is 16,384
/// members in a Full zone, whose file would need 2.7 x 10^8 route elements to be complete.
inline constexpr double kMaxRoutingTableBytes = 2147483648.0;

/// SimGrid's precisions (--cfg or simgrid_cfg maxmin/precision, surf/precision): below 1.
/// SimGrid 3.32 hangs at surf/precision <= 0 and crashes at maxmin/precision -1 or >= 1
/// (measured); its defaults are 1e-5 (relative) and 1e-9 s, sgdsim runs with 1e-12 s.
inline constexpr double kMaxSimGridPrecision = 1.0;

}  // namespace sgdsim::limits
