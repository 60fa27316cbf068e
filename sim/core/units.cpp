#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

namespace sgdsim::units {

namespace {

using Table = std::vector<std::pair<std::string_view, double>>;

/// Splits "12.5GBps" into 12.5 and "GBps"; the suffix must be in the table (exact case).
std::optional<double> parse_with(std::string_view text, const Table& table) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || !std::isfinite(value)) return std::nullopt;
  std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  for (const auto& [name, factor] : table)
    if (suffix == name) {
      const double scaled = value * factor;  // "1e308Tbps" overflows here
      return std::isfinite(scaled) ? std::optional<double>(scaled) : std::nullopt;
    }
  return std::nullopt;
}

const Table& bandwidth_table() {
  static const Table t = {{"Bps", 1.0},      {"kBps", 1e3},        {"KBps", 1e3},
                          {"MBps", 1e6},     {"GBps", 1e9},        {"TBps", 1e12},
                          {"KiBps", 1024.0}, {"MiBps", 1048576.0}, {"GiBps", 1073741824.0},
                          {"bps", 1.0 / 8},  {"kbps", 1e3 / 8},    {"Kbps", 1e3 / 8},
                          {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},    {"Tbps", 1e12 / 8}};
  return t;
}
const Table& time_table() {
  static const Table t = {{"s", 1.0},    {"ms", 1e-3},  {"us", 1e-6}, {"ns", 1e-9},
                          {"ps", 1e-12}, {"min", 60.0}, {"h", 3600.0}};
  return t;
}
const Table& size_table() {
  static const Table t = {{"B", 1.0},
                          {"kB", 1e3},
                          {"KB", 1e3},
                          {"MB", 1e6},
                          {"GB", 1e9},
                          {"TB", 1e12},
                          {"KiB", 1024.0},
                          {"MiB", 1048576.0},
                          {"GiB", 1073741824.0},
                          {"TiB", 1099511627776.0}};
  return t;
}
const Table& speed_table() {
  static const Table t = {{"f", 1.0},      {"kf", 1e3},     {"Mf", 1e6},      {"Gf", 1e9},
                          {"Tf", 1e12},    {"Pf", 1e15},    {"flops", 1.0},   {"kFlops", 1e3},
                          {"MFlops", 1e6}, {"GFlops", 1e9}, {"TFlops", 1e12}, {"PFlops", 1e15}};
  return t;
}

}  // namespace

std::optional<double> parse_bandwidth_Bps(std::string_view text) {
  return parse_with(text, bandwidth_table());
}
std::optional<double> parse_time_s(std::string_view text) {
  return parse_with(text, time_table());
}
std::optional<double> parse_size_bytes(std::string_view text) {
  return parse_with(text, size_table());
}
std::optional<double> parse_speed_flops(std::string_view text) {
  return parse_with(text, speed_table());
}

std::string format_bandwidth_Bps(double bytes_per_s) {
  return fmt::format("{}Bps", bytes_per_s);
}
std::string format_time_s(double seconds) {
  return fmt::format("{}s", seconds);
}
std::string format_speed_flops(double flops) {
  return fmt::format("{}f", flops);
}

}  // namespace sgdsim::units
