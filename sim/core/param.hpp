#pragma once
/// A parameter a registered component declares for itself (in the style of ns-3's
/// AddAttribute): key, type, default, range or choices, and its documentation. The scenario
/// parser reads and checks it, `sgdsim schema`, docs/fields.md and the command-line flags are
/// made from it, so a component's option is written once, in the component's own file.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sgdsim {

/// What a parameter's value is; quantities are read with their units (sim/core/units).
enum class ParamType {
  integer,    ///< a whole number in [min, max]
  number,     ///< a number in [min, max] (or one of `choices`, words such as "auto")
  size,       ///< bytes: "25MB", "64KiB" or a byte count
  time,       ///< seconds: "1.5us"
  bandwidth,  ///< bytes/s: "25Gbps" (bits/s) or "12GBps" (bytes/s)
  choice,     ///< one of `choices`
  text,       ///< a non-empty string
  boolean,    ///< true or false (number 1 or 0)
};

/// One declared parameter.
struct Param {
  std::string key{};  ///< JSON key of the component's section, e.g. "partition_bytes"
  ParamType type = ParamType::number;  ///< what its value is
  nlohmann::json default_value{};      ///< the default as a scenario writes it ("8.4us", 4096000)
  std::string brief{};                 ///< one line for --help
  std::string doc{};                   ///< the field reference's meaning column (empty: `brief`)
  std::string default_text{};  ///< the default as the docs show it (empty: the JSON default)
  double min = 0;              ///< integer, number, size, time: smallest value
  bool min_exclusive = false;  ///< number: `min` itself is refused (a value > min)
  double max = 1e300;          ///< integer, number: largest value
  std::vector<std::string> choices{};  ///< choice: the values; number, time: words accepted
  bool zero_off = false;               ///< bandwidth: 0 is accepted too and means "not modelled"
  /// Only its component accepts a value other than the default (others refuse it by name).
  bool exclusive = false;

  /// The value's unit as the docs name it ("bytes", "s", "B/s"; "" for others).
  std::string unit() const;
  /// What a value must look like, for "expected ..." messages.
  std::string expected() const;
  /// The meaning for the field reference: `doc`, else `brief`.
  const std::string& meaning() const { return doc.empty() ? brief : doc; }
  /// The default for the field reference: `default_text`, else the JSON default in backticks.
  std::string default_markdown() const;
  /// Its command-line flag: "--" and the key with '-' for '_'.
  std::string flag() const;
};

/// A parameter's value: a quantity in SI units (bytes, s, B/s) or a number, or a word.
struct ParamValue {
  double number = 0;   ///< integer, number and quantities (0 for words)
  std::string text{};  ///< choice, text, or the word given for a quantity ("auto"); else ""
};

/// Parses a command-line value of `param` ("512KiB", "ring"); nullopt if it is not one.
std::optional<ParamValue> parse_param_text(const Param& param, const std::string& text);

/// The value of `param`'s default (nullopt if it has none or the default is not a value of it).
std::optional<ParamValue> default_param_value(const Param& param);

/// Values of declared parameters by key (components read their own with number()/text()).
class ParamValues {
 public:
  /// Sets the value of `key`.
  void set(const std::string& key, ParamValue value) { values_[key] = std::move(value); }
  /// Whether `key` has a value.
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  /// The number of `key`; throws std::out_of_range if it has none.
  double number(const std::string& key) const { return values_.at(key).number; }
  /// The text of `key`; throws std::out_of_range if it has none.
  const std::string& text(const std::string& key) const { return values_.at(key).text; }
  /// The keys that have a value, sorted.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, _] : values_) out.push_back(k);
    return out;
  }

 private:
  std::map<std::string, ParamValue> values_;
};

}  // namespace sgdsim
