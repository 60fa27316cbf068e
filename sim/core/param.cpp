#include "sim/core/param.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "sim/core/numbers.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {

std::string Param::unit() const {
  switch (type) {
    case ParamType::size:
      return "bytes";
    case ParamType::time:
      return "s";
    case ParamType::bandwidth:
      return "B/s";
    default:
      return "";
  }
}

std::string Param::expected() const {
  std::string words;
  for (const std::string& c : choices) words += "\"" + c + "\" or ";
  switch (type) {
    case ParamType::integer:
      return max < 1e300 ? fmt::format("an integer in [{}, {}]", min, max)
                         : fmt::format("an integer >= {}", min);
    case ParamType::number:
      return words + (max < 1e300 ? fmt::format("a number {} {} and <= {}",
                                                min_exclusive ? ">" : ">=", min, max)
                                  : fmt::format("a number {} {}", min_exclusive ? ">" : ">=", min));
    case ParamType::size:
      return (min > 0 ? fmt::format("a size of at least {} bytes", min) : std::string("a size")) +
             " such as \"512KiB\" or a byte count";
    case ParamType::time:
      return words +
             (min > 0 ? fmt::format("a time of at least {} s", min) : std::string("a time")) +
             " such as \"1.5us\"";
    case ParamType::bandwidth:
      return (zero_off ? "0 or " : "") + std::string("a bandwidth such as \"25Gbps\"");
    case ParamType::choice:
      return fmt::format("{}", fmt::join(choices, ", "));
    case ParamType::text:
      return "a non-empty string";
    case ParamType::boolean:
      return "true or false";
  }
  return "";
}

std::string Param::default_markdown() const {
  return default_text.empty() ? fmt::format("`{}`", default_value.dump()) : default_text;
}

std::string Param::flag() const {
  std::string f = "--" + key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::optional<ParamValue> parse_param_text(const Param& p, const std::string& text) {
  ParamValue v;
  const bool word = std::find(p.choices.begin(), p.choices.end(), text) != p.choices.end();
  switch (p.type) {
    case ParamType::integer: {
      const auto x = parse_plain_number(text);
      if (!x || std::floor(*x) != *x || *x < p.min || *x > p.max) return std::nullopt;
      v.number = *x;
      return v;
    }
    case ParamType::number: {
      if (word) {
        v.text = text;
        return v;
      }
      const auto x = parse_plain_number(text);
      if (!x || *x < p.min || (p.min_exclusive && *x == p.min) || *x > p.max) return std::nullopt;
      v.number = *x;
      return v;
    }
    case ParamType::boolean:
      if (text != "true" && text != "false") return std::nullopt;
      v.number = text == "true" ? 1 : 0;
      return v;
    case ParamType::choice:
    case ParamType::text:
      if ((p.type == ParamType::choice && !word) || text.empty()) return std::nullopt;
      v.text = text;
      return v;
    case ParamType::size:
    case ParamType::time:
    case ParamType::bandwidth: {
      if (word) {
        v.text = text;
        return v;
      }
      std::optional<double> x = p.type == ParamType::size   ? units::parse_size_bytes(text)
                                : p.type == ParamType::time ? units::parse_time_s(text)
                                                            : units::parse_bandwidth_Bps(text);
      if (!x && (p.type == ParamType::size || (p.zero_off && text == "0")))
        x = parse_plain_number(text);
      if (!x || *x < std::max(0.0, p.min) ||
          (p.type == ParamType::bandwidth && *x == 0 && !p.zero_off))
        return std::nullopt;
      v.number = *x;
      return v;
    }
  }
  return std::nullopt;
}

std::optional<ParamValue> default_param_value(const Param& p) {
  if (p.default_value.is_null()) return std::nullopt;
  return parse_param_text(
      p, p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump());
}

}  // namespace sgdsim
