#pragma once
/// Parsing of quantities with units ("25Gbps", "1.5us", "100MB", "15Tf"); only input code calls it.
/// Every parser returns nullopt for malformed text and for values that are not finite once
/// converted ("1e308Tbps").
#include <optional>
#include <string>
#include <string_view>

namespace sgdsim::units {

/// Bandwidth in bytes per second from "25Gbps" (bits) or "12GBps" (bytes); nullopt if malformed.
std::optional<double> parse_bandwidth_Bps(std::string_view text);
/// Time in seconds from "1.5us", "2ms", "3s", "10ns", "1min"; nullopt if malformed.
std::optional<double> parse_time_s(std::string_view text);
/// Size in bytes from "100MB" (SI), "64KiB" (binary), "8B"; nullopt if malformed.
std::optional<double> parse_size_bytes(std::string_view text);
/// Compute speed in FLOP/s from "15Tf", "2.2Gf", "211.2GFlops"; nullopt if malformed.
std::optional<double> parse_speed_flops(std::string_view text);

/// Renders bytes/s the way SimGrid XML reads it ("1.25e+10Bps").
std::string format_bandwidth_Bps(double bytes_per_s);
/// Renders seconds the way SimGrid XML reads it ("2e-06s").
std::string format_time_s(double seconds);
/// Renders FLOP/s the way SimGrid XML reads it ("1.5e+13f").
std::string format_speed_flops(double flops);

}  // namespace sgdsim::units
