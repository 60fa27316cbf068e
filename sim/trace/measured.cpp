// Common shape of imported measurements: statistics, JSON rendering, profile writing.
#include "sim/trace/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "sim/trace/osu.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

json number_or_null(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

/// `s` as a JSON string literal; bytes that are not UTF-8 (binary junk in a log) become U+FFFD
/// instead of making dump() throw.
std::string quoted(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// `s` as a JSON string value that dumps in any mode (see quoted).
json json_text(const std::string& s) {
  return json::parse(quoted(s));
}

}  // namespace

TraceStats trace_stats(const MeasuredTrace& t) {
  TraceStats s;
  std::vector<double> times;
  double compute = 0, comm = 0;
  int64_t first_step = 0;
  bool any = false;
  for (size_t i = static_cast<size_t>(std::max(0, t.warmup_steps)); i < t.steps.size(); ++i) {
    const auto& st = t.steps[i];
    if (!any) first_step = st.step, any = true;
    times.push_back(st.time_s);
    compute += st.compute_s;
    comm += st.comm_s;
  }
  s.steps = static_cast<int>(times.size());
  if (!times.empty()) {
    double sum = 0;
    for (double x : times) sum += x;
    const double n = static_cast<double>(times.size());
    s.step_mean_s = sum / n;
    s.step_median_s = median(times);
    s.step_min_s = *std::min_element(times.begin(), times.end());
    s.step_max_s = *std::max_element(times.begin(), times.end());
    s.compute_mean_s = compute / n;
    s.comm_mean_s = comm / n;
  }
  for (const auto& c : t.collectives) {
    if (!t.steps.empty() && (c.step < 0 || !any || c.step < first_step)) continue;
    ++s.collectives;
    if (std::isfinite(c.bytes)) s.collective_bytes += c.bytes;
    s.collective_time_s += c.time_s;
  }
  return s;
}

json trace_to_json(const MeasuredTrace& t) {
  TraceStats s = trace_stats(t);
  json j;
  j["file"] = json_text(t.file);
  j["format"] = t.format;
  j["rank"] = t.rank >= 0 ? json(t.rank) : json(nullptr);
  j["world_size"] = t.world_size > 0 ? json(t.world_size) : json(nullptr);
  j["device"] = t.device.empty() ? json(nullptr) : json_text(t.device);
  j["warmup_steps"] = t.warmup_steps;
  j["stats"] = {{"steps", s.steps},
                {"step_mean_s", number_or_null(s.step_mean_s)},
                {"step_median_s", number_or_null(s.step_median_s)},
                {"step_min_s", number_or_null(s.step_min_s)},
                {"step_max_s", number_or_null(s.step_max_s)},
                {"compute_mean_s", number_or_null(s.compute_mean_s)},
                {"comm_mean_s", number_or_null(s.comm_mean_s)},
                {"collectives", s.collectives},
                {"collective_bytes", s.collective_bytes},
                {"collective_time_s", s.collective_time_s}};
  json steps = json::array();
  for (const auto& st : t.steps)
    steps.push_back({{"step", st.step},
                     {"time_s", st.time_s},
                     {"compute_s", st.compute_s},
                     {"comm_s", st.comm_s}});
  j["steps"] = std::move(steps);
  json colls = json::array();
  for (const auto& c : t.collectives) {
    json e = {{"step", c.step >= 0 ? json(c.step) : json(nullptr)},
              {"index", c.index},
              {"name", json_text(c.name)},
              {"bytes", number_or_null(c.bytes)},
              {"time_s", c.time_s}};
    if (std::isfinite(c.start_s)) e["start_s"] = c.start_s;
    if (c.group_size > 0) e["group_size"] = c.group_size;
    colls.push_back(std::move(e));
  }
  j["collectives"] = std::move(colls);
  j["notes"] = json::array();
  for (const auto& n : t.notes) j["notes"].push_back(json_text(n));
  return j;
}

int dtype_bytes(const std::string& dtype) {
  static const std::vector<std::pair<std::string, int>> table = {
      {"float", 4},   {"float32", 4},  {"double", 8}, {"float64", 8}, {"half", 2},
      {"float16", 2}, {"bfloat16", 2}, {"long", 8},   {"int64", 8},   {"int", 4},
      {"int32", 4},   {"short", 2},    {"int16", 2},  {"char", 1},    {"byte", 1},
      {"int8", 1},    {"uint8", 1},    {"bool", 1},   {"float8", 1}};
  std::string d;
  for (char c : dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [name, bytes] : table)
    if (d == name) return bytes;
  return 0;
}

std::string normalize_collective_name(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string profile_json_text(const Profile& p, const std::string& notes) {
  std::string s = "{\n";
  s += "  \"name\": " + quoted(p.name) + ",\n";
  s += "  \"source\": " + quoted(p.source) + ",\n";
  s += "  \"notes\": " + quoted(notes) + ",\n";
  s += std::string("  \"kind\": ") + (p.measured ? "\"measured\"" : "\"flops\"") + ",\n";
  if (p.measured) s += fmt::format("  \"batch_size\": {},\n", p.batch_size);
  s += fmt::format("  \"bytes_per_parameter\": {},\n", p.bytes_per_parameter);
  s += "  \"layers\": [\n";
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    s += "    {\"name\": " + quoted(l.name) + ", \"parameters\": " + std::to_string(l.parameters);
    if (p.measured)
      s += fmt::format(", \"forward_ms\": {:.12g}, \"backward_ms\": {:.12g}", l.forward_s * 1e3,
                       l.backward_s * 1e3);
    else
      s += fmt::format(", \"forward_flops\": {:.17g}, \"backward_flops\": {:.17g}", l.forward_flops,
                       l.backward_flops);
    s += std::string("}") + (i + 1 < p.layers.size() ? "," : "") + "\n";
  }
  s += "  ]\n}\n";
  return s;
}

std::string human_time(double s) {
  if (!std::isfinite(s)) return "-";
  if (s >= 1.0) return fmt::format("{:.4f} s", s);
  if (s >= 1e-3) return fmt::format("{:.4f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

}  // namespace sgdsim
