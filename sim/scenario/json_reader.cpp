#include "sim/scenario/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/units.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

/// A JSON pointer segment for an object key ("~" and "/" escaped, RFC 6901).
std::string pointer_segment(const std::string& key) {
  std::string out;
  for (char c : key)
    out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

/// Rejects duplicate keys while nlohmann::json parses (it keeps the last one silently).
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}
  bool operator()(int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      frames_.push_back({event == E::object_start, child_segment(), {}, {}, 0});
      if (frames_.size() > static_cast<size_t>(limits::kMaxJsonDepth)) too_deep();
    } else if (event == E::object_end || event == E::array_end) {
      frames_.pop_back();
    } else if (event == E::key) {
      Frame& f = frames_.back();
      f.key = parsed.get<std::string>();
      if (!f.keys.insert(f.key).second) {
        std::string pointer;
        for (size_t i = 1; i < frames_.size(); ++i) pointer += "/" + frames_[i].segment;
        throw InputError(
            file_, pointer + "/" + pointer_segment(f.key),
            "duplicate key \"" + f.key + "\" (each key may appear once in an object; remove one)");
      }
    } else if (event == E::value) {
      child_segment();
    }
    return true;
  }

 private:
  /// Values nested past the limit would overflow the stack of every recursive walk (copies,
  /// printing a value for a message): refused while parsing, which does not recurse.
  [[noreturn]] void too_deep() const {
    std::string pointer;
    for (size_t i = 1; i < frames_.size() && i <= 3; ++i) pointer += "/" + frames_[i].segment;
    throw InputError(file_, pointer + "/...",
                     fmt::format("JSON nested deeper than {} levels (the limit on JSON depth; "
                                 "expected a shallower value)",
                                 limits::kMaxJsonDepth));
  }
  struct Frame {
    bool object;
    std::string segment;  // this container's segment in its parent
    std::set<std::string> keys;
    std::string key;  // the key being read (objects)
    size_t count;     // elements so far (arrays)
  };
  std::string child_segment() {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    return f.object ? pointer_segment(f.key) : std::to_string(f.count++);
  }
  std::string file_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return json::parse(text, DuplicateKeyCheck(file));
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    throw InputError(file, "",
                     "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const json::out_of_range& e) {  // "1e400": a number beyond the range of a double
    std::string what = e.what();
    auto pos = what.find("] ");
    throw InputError(file, "",
                     "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)) +
                         " (beyond the range of a double)");
  }
}

std::optional<json> parse_json_value(const std::string& text, const std::string& what) {
  try {
    return json::parse(text, DuplicateKeyCheck(what));
  } catch (const json::exception&) {  // not JSON, or a number out of range ("1e999")
    return std::nullopt;
  }
}

json parse_json_file(const std::string& path) {
  return parse_json_text(read_file(path), path);
}

std::string show_value(const json& value) {
  std::string s = value.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The accepted spelling closest to `got`: the same up to case, "_" and "-" ("Ring",
/// "pseudosync"), else within one or two edits; empty when nothing is close.
std::string nearest_choice(const std::string& got, const std::vector<std::string>& choices) {
  auto squash = [](const std::string& s) {
    std::string out;
    for (char c : lower(s))
      if (c != '_' && c != '-' && c != ' ') out += c;
    return out;
  };
  for (const auto& c : choices)
    if (squash(c) == squash(got)) return c;
  // Short words are a guess too far ("bsp" is not "ssp"): one edit from 4 letters, two from 6.
  const size_t allowed = got.size() >= 6 ? 2 : got.size() >= 4 ? 1 : 0;
  std::string best;
  size_t best_d = allowed + 1;
  for (const auto& c : choices) {
    const size_t d = edit_distance(lower(got), c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

/// Converts "/a/b" into the defaults-table pointer (array indices are not part of it).
json::json_pointer table_pointer(const std::string& pointer) {
  return json::json_pointer(pointer);
}

}  // namespace

JsonObject::JsonObject(const json& value, std::string file, std::string pointer,
                       const json* defaults, json* resolved)
    : value_(value),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      defaults_(defaults),
      resolved_(resolved) {
  if (!value_.is_object())
    throw InputError(file_, pointer_.empty() ? "/" : pointer_,
                     "expected an object, got " + show_value(value_));
}

bool JsonObject::has(const std::string& key) const {
  known_.insert(key);
  return value_.contains(key);
}

const json& JsonObject::raw(const std::string& key) {
  read_.insert(key);
  return value_.at(key);
}

void JsonObject::fail(const std::string& key, const std::string& expected) const {
  std::string got = has(key) ? show_value(value_.at(key)) : "nothing (the field is required)";
  throw InputError(file_, pointer_of(key), "expected " + expected + ", got " + got);
}

const json& JsonObject::value_or_default(const std::string& key) {
  read_.insert(key);
  if (has(key)) return value_.at(key);
  if (defaults_ != nullptr) {
    auto ptr = table_pointer(pointer_of(key));
    if (defaults_->contains(ptr)) return defaults_->at(ptr);
  }
  throw InputError(file_, pointer_of(key), "required field is missing");
}

void JsonObject::record(const std::string& key, const json& value) {
  if (resolved_ != nullptr) (*resolved_)[json::json_pointer(pointer_of(key))] = value;
}

void JsonObject::unrecord(const std::string& key) {
  if (resolved_ == nullptr) return;
  const json::json_pointer ptr(pointer_of(key));
  if (resolved_->contains(ptr)) resolved_->at(ptr.parent_pointer()).erase(ptr.back());
}

int64_t JsonObject::get_int(const std::string& key, int64_t min, int64_t max) {
  const json& v = value_or_default(key);
  // Name the bound that was crossed; wide safety caps stay out of ordinary messages.
  std::string expected = fmt::format("an integer >= {}", min);
  if (v.is_number() && v.get<double>() > static_cast<double>(max))
    expected = fmt::format("an integer <= {}", max);
  if (!v.is_number_integer() && !v.is_number_unsigned()) {
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::floor(d) != d) fail(key, expected);
    } else {
      fail(key, expected);
    }
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(key, expected);
  // 2^63 itself passes `> double(INT64_MAX)` (the same double) but does not fit an int64.
  if (v.is_number_float() &&
      (v.get<double>() < static_cast<double>(min) || v.get<double>() > static_cast<double>(max) ||
       v.get<double>() >= 9223372036854775808.0))
    fail(key, expected);
  int64_t x = v.is_number_float() ? static_cast<int64_t>(v.get<double>()) : v.get<int64_t>();
  if (x < min || x > max) fail(key, expected);
  record(key, x);
  return x;
}

double JsonObject::get_number(const std::string& key, double min, double max, bool min_exclusive) {
  const json& v = value_or_default(key);
  std::string expected = fmt::format("a number {} {}{}", min_exclusive ? ">" : ">=", min,
                                     std::isinf(max) ? "" : fmt::format(" and <= {}", max));
  if (!v.is_number()) fail(key, expected);
  double x = v.get<double>();
  if (!std::isfinite(x) || x > max || (min_exclusive ? x <= min : x < min)) fail(key, expected);
  record(key, v);
  return x;
}

bool JsonObject::get_bool(const std::string& key) {
  const json& v = value_or_default(key);
  if (!v.is_boolean()) fail(key, "true or false");
  record(key, v);
  return v.get<bool>();
}

std::string JsonObject::get_string(const std::string& key, bool allow_empty) {
  const json& v = value_or_default(key);
  if (!v.is_string() || (!allow_empty && v.get<std::string>().empty()))
    fail(key, allow_empty ? "a string" : "a non-empty string");
  record(key, v);
  return v.get<std::string>();
}

std::vector<std::string> JsonObject::get_string_list(const std::string& key) {
  const json& v = value_or_default(key);
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& e : v)
      if (e.is_string() && !e.get<std::string>().empty()) out.push_back(e.get<std::string>());
  if (!v.is_array() || out.size() != v.size()) fail(key, "an array of non-empty strings");
  record(key, v);
  return out;
}

std::string JsonObject::get_choice(const std::string& key, const std::vector<std::string>& choices,
                                   const std::vector<std::string>& planned) {
  const json& v = value_or_default(key);
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + ("\"" + choices[i] + "\"");
  if (v.is_string() &&
      std::find(planned.begin(), planned.end(), v.get<std::string>()) != planned.end())
    throw InputError(file_, pointer_of(key),
                     "\"" + v.get<std::string>() +
                         "\" is not implemented yet in this version; expected one of " + list);
  if (!v.is_string()) fail(key, "one of " + list);
  if (std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end()) {
    const std::string best = nearest_choice(v.get<std::string>(), choices);
    fail(key, "one of " + list + (best.empty() ? "" : " (did you mean \"" + best + "\"?)"));
  }
  record(key, v);
  return v.get<std::string>();
}

namespace {
/// The accepted spelling of a mistyped quantity, found by undoing the usual slips one after
/// another: a space before the unit ("25 Gbps"), a micro sign ("1µs"), "/s" for "ps"
/// ("25Gb/s"), a lower-case prefix ("25gbps"); empty when none of them makes it parse.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// Undoes one usual slip in a quantity: 0 a space before the unit ("25 Gbps"), 1 a micro
/// sign ("1µs"), 2 "/s" for "ps" ("25Gb/s"), 3 a lower-case prefix ("25gbps").
std::string undo_slip(int slip, std::string s) {
  switch (slip) {
    case 0:
      return replace_all(replace_all(s, " ", ""), "\t", "");
    case 1:
      return replace_all(replace_all(s, "\u00b5", "u"), "\u03bc", "u");  // micro, Greek mu
    case 2:
      return replace_all(s, "/s", "ps");
    default: {
      const size_t at = s.find_first_not_of("0123456789.eE+-");
      if (at != std::string::npos && at + 1 < s.size() &&
          std::string("kmgtp").find(s[at]) != std::string::npos)
        s[at] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[at])));
      return s;
    }
  }
}

/// The accepted spelling of a mistyped quantity: the slips undone one after another until it
/// parses; empty when it never does.
template <typename Parser>
std::string unit_suggestion(const std::string& text, Parser parse) {
  std::string c = text;
  for (int slip = 0; slip < 4; ++slip) {
    c = undo_slip(slip, c);
    if (c == text) continue;
    auto x = parse(c);
    if (x && *x > 0) return c;
  }
  return "";
}

template <typename Parser>
double get_unit(JsonObject& o, const json& v, const std::string& key, Parser parse,
                const std::string& expected, bool allow_zero) {
  if (!v.is_string()) o.fail(key, expected);
  auto x = parse(v.get<std::string>());
  if (!x) {
    const std::string hint = unit_suggestion(v.get<std::string>(), parse);
    if (!hint.empty()) o.fail(key, expected + " (did you mean \"" + hint + "\"?)");
  }
  if (!x || *x < 0 || (!allow_zero && *x == 0)) o.fail(key, expected);
  return *x;
}
}  // namespace

double JsonObject::get_bandwidth_Bps(const std::string& key) {
  const json& v = value_or_default(key);
  double x = get_unit(*this, v, key, units::parse_bandwidth_Bps,
                      "a positive bandwidth string such as \"25Gbps\" or \"12GBps\"", false);
  if (x < limits::kMinBandwidth_Bps)
    fail(key, "a bandwidth of at least 1Bps (the limit on slow bandwidths)");
  record(key, v);
  return x;
}

double JsonObject::get_time_s(const std::string& key, bool positive) {
  const json& v = value_or_default(key);
  double x = get_unit(*this, v, key, units::parse_time_s,
                      positive ? "a positive time string such as \"1.5us\" or \"250ms\""
                               : "a time string >= 0 such as \"1.5us\" or \"0s\"",
                      !positive);
  if (x > limits::kMaxTime_s)
    fail(key,
         fmt::format("a time of at most {:.0e}s (the limit on input times)", limits::kMaxTime_s));
  record(key, v);
  return x;
}

double JsonObject::get_size_bytes(const std::string& key) {
  const json& v = value_or_default(key);
  const std::string expected = "a size >= 0: a string such as \"25MB\" or an integer byte count";
  double x = 0;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_integer() && v.get<int64_t>() < 0) fail(key, expected);
    x = v.get<double>();
  } else {
    x = get_unit(*this, v, key, units::parse_size_bytes, expected, true);
  }
  record(key, v);
  return x;
}

double JsonObject::get_speed_flops(const std::string& key) {
  const json& v = value_or_default(key);
  double x = get_unit(*this, v, key, units::parse_speed_flops,
                      "a positive speed string such as \"15Tf\" or \"2.2Gf\"", false);
  if (x < limits::kMinSpeed_flops) fail(key, "a speed of at least 1f (the limit on slow devices)");
  record(key, v);
  return x;
}

JsonObject JsonObject::get_object(const std::string& key) {
  const json& v = value_or_default(key);
  if (!v.is_object()) fail(key, "an object");
  if (resolved_ != nullptr) {
    auto ptr = json::json_pointer(pointer_of(key));
    if (!resolved_->contains(ptr)) (*resolved_)[ptr] = json::object();
  }
  return JsonObject(v, file_, pointer_of(key), defaults_, resolved_);
}

void JsonObject::finish() const {
  for (const auto& [key, _] : value_.items()) {
    if (read_.count(key) != 0) continue;
    std::string best;
    size_t best_d = 3;
    std::vector<std::string> known(read_.begin(), read_.end());
    known.insert(known.end(), known_.begin(), known_.end());
    if (defaults_ != nullptr) {
      auto ptr = json::json_pointer(pointer_.empty() ? "" : pointer_);
      if (defaults_->contains(ptr) && defaults_->at(ptr).is_object())
        for (const auto& [k, _2] : defaults_->at(ptr).items()) known.push_back(k);
    }
    for (const auto& k : known) {
      size_t d = edit_distance(key, k);
      if (d < best_d) best_d = d, best = k;
    }
    // "fusion" for "fusion_bytes": a prefix is a good guess too.
    for (const auto& k : known)
      if (best.empty() && key.size() >= 3 && k.rfind(key, 0) == 0) best = k;
    std::string msg = "unknown key \"" + key + "\"";
    if (!best.empty()) msg += " (did you mean \"" + best + "\"?)";
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    if (best.empty() && !known.empty()) {
      msg += "; expected one of:";
      for (const auto& k : known) msg += " " + k;
    }
    throw InputError(file_, pointer_of(key), msg);
  }
}

ParamValue read_param(JsonObject& o, const Param& p) {
  ParamValue v;
  const std::string& k = p.key;
  switch (p.type) {
    case ParamType::integer:
      v.number = static_cast<double>(o.get_int(
          k, static_cast<int64_t>(p.min), p.max < 9e18 ? static_cast<int64_t>(p.max) : INT64_MAX));
      break;
    case ParamType::number: {
      const json& given = o.has(k) ? o.raw(k) : p.default_value;
      if (given.is_string() && std::find(p.choices.begin(), p.choices.end(),
                                         given.get<std::string>()) != p.choices.end()) {
        v.text = o.get_choice(k, p.choices);
        break;
      }
      if (!given.is_number() && !p.choices.empty()) o.fail(k, p.expected());
      v.number = o.get_number(k, p.min, p.max, p.min_exclusive);
      break;
    }
    case ParamType::size:
      v.number = o.get_size_bytes(k);
      if (v.number < p.min) o.fail(k, p.expected());
      break;
    case ParamType::time: {
      const json& given = o.has(k) ? o.raw(k) : p.default_value;
      if (given.is_string() && std::find(p.choices.begin(), p.choices.end(),
                                         given.get<std::string>()) != p.choices.end()) {
        v.text = given.get<std::string>();
        break;
      }
      v.number = o.get_time_s(k);
      if (v.number < p.min) o.fail(k, p.expected());
      break;
    }
    case ParamType::bandwidth:
      if (p.zero_off && !(o.has(k) && o.raw(k) != json(0))) {
        o.record(k, 0);
        break;
      }
      v.number = o.get_bandwidth_Bps(k);
      break;
    case ParamType::choice:
      v.text = o.get_choice(k, p.choices);
      break;
    case ParamType::text:
      v.text = o.get_string(k);
      break;
    case ParamType::boolean:
      v.number = o.get_bool(k) ? 1 : 0;
      break;
  }
  return v;
}

}  // namespace sgdsim
