#pragma once
/// SimGrid 3.32's quantities in platform files (xbt_parse_units.cpp): what the platform check
/// accepts where SimGrid reads a time, a bandwidth or a speed.
#include <optional>
#include <string>

namespace sgdsim::platform_xml {

/// The kind of quantity an attribute holds (each has its own unit table).
enum class Quantity { time, bandwidth, speed };

/// The value of a SimGrid quantity ("25Gbps", "1us", "1.5Gf"; a bare number is SimGrid's
/// default unit), or nullopt when SimGrid would refuse it.
std::optional<double> simgrid_quantity(const std::string& text, Quantity q);

}  // namespace sgdsim::platform_xml
