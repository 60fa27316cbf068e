#pragma once
/// Strict reading of JSON input: typed getters that name the file and JSON pointer on error,
/// take defaults from one table, reject unknown keys, and record the resolved values.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/param.hpp"

namespace sgdsim {

/// Parses JSON text; a syntax error becomes an InputError naming `file` and the byte offset.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);
/// `text` as JSON if it is JSON (nullopt if not); a value nested deeper than
/// limits::kMaxJsonDepth or with a duplicate key is an InputError naming `what`.
std::optional<nlohmann::json> parse_json_value(const std::string& text, const std::string& what);
/// Parses a JSON file; missing file or bad syntax become InputErrors.
nlohmann::json parse_json_file(const std::string& path);
/// Renders a JSON value for an error message, shortened if long.
std::string show_value(const nlohmann::json& value);

/// A view of one JSON object that is read field by field; `finish()` rejects unread keys.
class JsonObject {
 public:
  /// Wraps `value` at `pointer` of `file`; throws InputError unless it is an object.
  /// `defaults` (may be null) is the defaults table; `resolved` (may be null) receives values.
  JsonObject(const nlohmann::json& value, std::string file, std::string pointer,
             const nlohmann::json* defaults = nullptr, nlohmann::json* resolved = nullptr);

  /// True if the key is present in the input; also makes `key` a known key for suggestions.
  bool has(const std::string& key) const;
  /// The JSON pointer of a key of this object.
  std::string pointer_of(const std::string& key) const { return pointer_ + "/" + key; }
  /// The JSON pointer of this object.
  const std::string& pointer() const { return pointer_; }
  /// The file this object was read from.
  const std::string& file() const { return file_; }

  /// An integer in [min, max]; the default table supplies it when absent.
  int64_t get_int(const std::string& key, int64_t min, int64_t max = INT64_MAX);
  /// A number in [min, max] (inclusive unless `min_exclusive`).
  double get_number(const std::string& key, double min, double max, bool min_exclusive = false);
  /// A boolean.
  bool get_bool(const std::string& key);
  /// A string, non-empty unless `allow_empty`.
  std::string get_string(const std::string& key, bool allow_empty = false);
  /// A string from a fixed set of choices; `planned` names values that are part of the
  /// contract but not implemented yet (they get their own message).
  std::string get_choice(const std::string& key, const std::vector<std::string>& choices,
                         const std::vector<std::string>& planned = {});
  /// An array of non-empty strings (may be empty).
  std::vector<std::string> get_string_list(const std::string& key);
  /// A bandwidth string ("25Gbps", "12GBps") in bytes/s, > 0.
  double get_bandwidth_Bps(const std::string& key);
  /// A time string ("1.5us") in seconds, >= 0 (or > 0 if `positive`).
  double get_time_s(const std::string& key, bool positive = false);
  /// A size string ("25MB") or integer byte count, >= 0.
  double get_size_bytes(const std::string& key);
  /// A speed string ("15Tf") in FLOP/s, > 0.
  double get_speed_flops(const std::string& key);
  /// A nested object (its defaults come from the same table).
  JsonObject get_object(const std::string& key);
  /// The raw value of a key (must be present); marks it as read.
  const nlohmann::json& raw(const std::string& key);
  /// Throws InputError if the input has a key that was not read (suggesting a close match).
  void finish() const;

  /// Records a value the input left out (a derived default) in the resolved scenario.
  void record(const std::string& key, const nlohmann::json& value);
  /// Drops a recorded value (`key` may be a path below this object, "a/b") from the resolved
  /// scenario: a default that another field replaces and that must not be given with it.
  void unrecord(const std::string& key);
  /// Throws InputError for `key` with "expected ..., got <value>".
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::json& value_or_default(const std::string& key);

  const nlohmann::json& value_;
  std::string file_;
  std::string pointer_;
  const nlohmann::json* defaults_;
  nlohmann::json* resolved_;
  std::set<std::string> read_;
  mutable std::set<std::string> known_;
};

/// Reads the declared parameter `param` of `object` (its default from the defaults table),
/// with the getter of its type and that getter's messages; records it in the resolved
/// scenario, except a word ("auto") a quantity accepts, and a 0 (off) that a bandwidth
/// accepts is recorded as 0.
ParamValue read_param(JsonObject& object, const Param& param);

}  // namespace sgdsim
