#include "sim/core/numbers.hpp"

#include <charconv>
#include <cmath>

namespace sgdsim {

std::optional<int64_t> parse_integer(std::string_view text) {
  int64_t x = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return x;
}

std::optional<double> parse_plain_number(std::string_view text) {
  double x = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(x)) return std::nullopt;
  return x;
}

}  // namespace sgdsim
