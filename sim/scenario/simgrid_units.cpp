#include "sim/scenario/simgrid_units.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace sgdsim::platform_xml {
namespace {

/// SimGrid's unit tables (xbt_parse_units.cpp): a unit and its prefixed forms.
bool known_unit(const std::string& u, const std::string& base, bool binary, bool long_prefixes) {
  static const std::vector<std::string> decimal = {"", "k", "M", "G", "T", "P", "E", "Z", "Y"};
  static const std::vector<std::string> bin = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
  static const std::vector<std::string> words = {"",     "kilo", "mega", "giga", "tera",
                                                 "peta", "exa",  "zeta", "yotta"};
  for (const auto& p : long_prefixes ? words : decimal)
    if (u == p + base) return true;
  if (binary)
    for (const auto& p : bin)
      if (u == p + base) return true;
  return false;
}

}  // namespace

std::optional<double> simgrid_quantity(const std::string& text, Quantity q) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  const std::string unit(end);
  if (unit.empty()) return v;
  bool ok = false;
  switch (q) {
    case Quantity::time:
      ok = unit == "w" || unit == "d" || unit == "h" || unit == "m" || unit == "s" ||
           unit == "ms" || unit == "us" || unit == "ns" || unit == "ps";
      break;
    case Quantity::bandwidth:
      ok = known_unit(unit, "Bps", true, false) || known_unit(unit, "bps", true, false);
      break;
    case Quantity::speed:
      ok = known_unit(unit, "f", false, false) || known_unit(unit, "flops", false, true);
      break;
  }
  if (!ok) return std::nullopt;
  return v;
}

}  // namespace sgdsim::platform_xml
