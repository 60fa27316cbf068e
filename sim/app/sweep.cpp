// Sweep files: validation, expansion into named runs with resolved scenarios and resume keys,
// and the results files.
#include "sim/app/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace sgdsim {

namespace {

constexpr size_t kMaxRuns = 1000000;
constexpr size_t kMaxNameLength = 160;

/// One swept path with its values and where the sweep file sets it.
struct Axis {
  std::string path;
  std::string pointer;  // in the sweep file, e.g. "/grid/workers.count"
  std::vector<json> values;
};

/// One override of a run: path, value, and where the sweep file sets it.
struct Override {
  std::string path;
  std::string sweep_pointer;
  json value;
};

std::string hex16(uint64_t h) {
  return fmt::format("{:016x}", h);
}

/// The scenario JSON pointer of a dotted path ("workers.count" -> "/workers/count").
std::string scenario_pointer(const std::string& path) {
  std::string p = "/" + path;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

/// True if `a` is `b` or an ancestor of it (as JSON pointers).
bool is_ancestor_or_self(const std::string& a, const std::string& b) {
  return a == b || (b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '/');
}

void check_path(const std::string& path, const std::string& file, const std::string& pointer) {
  bool ok = !path.empty() && path.front() != '.' && path.back() != '.' &&
            path.find("..") == std::string::npos;
  for (char c : path)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok)
    throw InputError(file, pointer,
                     "expected a dotted path of scenario fields such as \"workers.count\" (as in "
                     "--set), got \"" +
                         path + "\"");
}

/// The message of an InputError without its "file: pointer: " prefix.
std::string bare_message(const InputError& e) {
  std::string m = e.what();
  std::string prefix;
  if (!e.file().empty()) prefix += e.file() + ": ";
  if (!e.pointer().empty()) prefix += e.pointer() + ": ";
  if (m.compare(0, prefix.size(), prefix) == 0) m = m.substr(prefix.size());
  return m;
}

/// A value as it appears in a run name: strings bare, everything else as compact JSON.
std::string name_value(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string sanitize_part(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' &&
        c != '-')
      c = '_';
  return out;
}

std::string shorten(const std::string& name) {
  if (name.size() <= kMaxNameLength) return name;
  return name.substr(0, kMaxNameLength - 17) + "~" + hex16(fnv1a64(name));
}

std::vector<json> read_values(JsonObject& section, const std::string& key) {
  const json& v = section.raw(key);
  if (!v.is_array() || v.empty())
    section.fail(key, "a non-empty array of values for \"" + key + "\"");
  return std::vector<json>(v.begin(), v.end());
}

/// Replaces a path-valued field by a hash of the file's contents (the key must not depend on
/// where the sweep folder sits, but must change when the profile or platform changes).
json content_ref(const std::string& path, std::map<std::string, std::string>& cache) {
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, hex16(fnv1a64(read_file(path)))).first;
  return json{{"content_fnv1a64", it->second}};
}

}  // namespace

uint64_t fnv1a64(std::string_view data) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string sanitize_run_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' &&
        c != '-' && c != '=' && c != ',')
      c = '_';
  if (out.empty() || out == "." || out == "..") out = "run" + out;
  return shorten(out);
}

namespace {

/// Reads a sweep file section by section, then expands its runs.
class SweepLoader {
 public:
  SweepLoader(const std::string& file, const std::vector<std::string>& simgrid_cfg)
      : file_(file),
        text_(read_file(file)),
        raw_(parse_json_text(text_, file)),
        ordered_(check_object(raw_, file) ? ordered_json::parse(text_) : ordered_json()),
        root_(raw_, file, "") {
    sweep_.file = file;
    sweep_dir_ = fs::path(file).parent_path().string();
    if (sweep_dir_.empty()) sweep_dir_ = ".";
    for (const char* k : {"base", "grid", "zip", "list", "repeat", "description"})
      if (root_.has(k)) root_.raw(k);
    root_.finish();  // unknown keys first: "bse" is a typo, not a missing "base"
    read_base(simgrid_cfg);
    if (root_.has("description")) sweep_.description = root_.get_string("description", true);
    if (root_.has("repeat")) repeat_ = root_.get_int("repeat", 1, 100000);
    read_axes("grid", grid_);
    read_axes("zip", zip_);
    check_zip();
    read_list();
    check_repeat();
  }

  /// The runs, grid (first path slowest) x zip x list x repeat.
  Sweep expand() {
    set_columns();
    const size_t total = count_runs();
    const uint64_t seed = base_seed();
    std::vector<size_t> odometer(grid_.size(), 0);
    const size_t list_len = list_.empty() ? 1 : list_.size();
    sweep_.runs.reserve(total);
    for (size_t g = 0; g < total / (zip_len_ * list_len * static_cast<size_t>(repeat_)); ++g) {
      for (size_t z = 0; z < zip_len_; ++z)
        for (size_t li = 0; li < list_len; ++li)
          for (int64_t r = 0; r < repeat_; ++r) {
            std::vector<Override> overrides;
            for (size_t a = 0; a < grid_.size(); ++a)
              overrides.push_back({grid_[a].path, grid_[a].pointer, grid_[a].values[odometer[a]]});
            for (const auto& a : zip_) overrides.push_back({a.path, a.pointer, a.values[z]});
            if (!list_.empty())
              for (const auto& o : list_[li]) overrides.push_back(o);
            if (repeat_ > 1)
              overrides.push_back({"seed", "/repeat", json(seed + static_cast<uint64_t>(r))});
            sweep_.runs.push_back(make_run(overrides));
          }
      for (size_t a = grid_.size(); a-- > 0;) {
        if (++odometer[a] < grid_[a].values.size()) break;
        odometer[a] = 0;
      }
    }
    check_unknown_paths();
    return std::move(sweep_);
  }

 private:
  static bool check_object(const json& raw, const std::string& file) {
    if (!raw.is_object())
      throw InputError(file, "/",
                       "expected a sweep object {\"base\", \"grid\", ...}, got " + show_value(raw));
    return true;
  }

  /// base: a scenario path (relative to the sweep file) or an inline scenario; sweep --cfg
  /// adds every run's SimGrid options after the base's (so they enter each run's key).
  void read_base(const std::vector<std::string>& simgrid_cfg) {
    if (!root_.has("base"))
      throw InputError(file_, "/base",
                       "required field is missing: expected a scenario path or an inline "
                       "scenario object");
    const json& b = root_.raw("base");
    if (b.is_string() && !b.get<std::string>().empty()) {
      base_file_ = resolve_data_path(b.get<std::string>(), sweep_dir_, file_, "/base");
      base_ = parse_json_file(base_file_);
      if (!base_.is_object())
        throw InputError(base_file_, "/", "expected a JSON object, got " + show_value(base_));
    } else if (b.is_object()) {
      base_ = b;
      base_file_ = file_;
      inline_base_ = true;
    } else {
      root_.fail("base", "a scenario path or an inline scenario object");
    }
    if (!simgrid_cfg.empty()) {
      json& options = base_["simgrid_cfg"];
      if (options.is_null()) options = json::array();
      if (options.is_array())
        for (const auto& o : simgrid_cfg) options.push_back(o);
    }
  }

  /// A swept path may be set in one place only.
  void check_overlap(const std::string& path, const std::string& pointer) const {
    const std::string sp = scenario_pointer(path);
    for (const auto& [other, where] : owner_)
      if (is_ancestor_or_self(other, sp) || is_ancestor_or_self(sp, other))
        throw InputError(file_, pointer,
                         "\"" + path + "\" overlaps the path set at " + where +
                             " (a field may be swept in one place only)");
  }

  /// grid or zip: paths with their values, in file order.
  void read_axes(const char* section, std::vector<Axis>& axes) {
    if (!root_.has(section)) return;
    JsonObject obj = root_.get_object(section);
    if (ordered_[section].empty())
      throw InputError(file_, obj.pointer(),
                       "expected at least one path such as \"workers.count\": [2, 4], got {}");
    for (const auto& [path, _] : ordered_[section].items()) {
      obj.has(path);
      check_path(path, file_, obj.pointer_of(path));
      check_overlap(path, obj.pointer_of(path));
      owner_.emplace(scenario_pointer(path), obj.pointer_of(path));
      axes.push_back({path, obj.pointer_of(path), read_values(obj, path)});
    }
    obj.finish();
  }

  void check_zip() {
    zip_len_ = zip_.empty() ? 1 : zip_.front().values.size();
    for (const auto& a : zip_)
      if (a.values.size() != zip_len_)
        throw InputError(file_, a.pointer,
                         fmt::format("expected {} values like {} (zip pairs equal-length "
                                     "lists), got {}",
                                     zip_len_, zip_.front().pointer, a.values.size()));
  }

  /// list: explicit override sets.
  void read_list() {
    if (!root_.has("list")) return;
    const json& l = root_.raw("list");
    if (!l.is_array() || l.empty())
      root_.fail("list", "a non-empty array of override objects such as [{\"workers.count\": 8}]");
    for (size_t i = 0; i < l.size(); ++i) {
      std::string ptr = fmt::format("/list/{}", i);
      if (!l[i].is_object())
        throw InputError(file_, ptr,
                         "expected an object of overrides such as {\"workers.count\": 8}, got " +
                             show_value(l[i]));
      std::vector<Override> set;
      for (const auto& [path, _] : ordered_["list"][i].items()) {
        std::string p = ptr + "/" + path;
        check_path(path, file_, p);
        check_overlap(path, p);
        set.push_back({path, p, l[i].at(path)});
      }
      list_.push_back(std::move(set));
    }
  }

  /// repeat > 1 varies the seed (run r uses the base seed + r): the seed may not be swept.
  void check_repeat() const {
    if (repeat_ <= 1) return;
    for (const auto& [sp, where] : owner_)
      if (sp == "/seed")
        throw InputError(file_, "/repeat",
                         "repeat > 1 varies \"seed\" (run r uses the base seed + r), so \"seed\" "
                         "may not also be swept (it is at " +
                             where + ")");
    for (const auto& set : list_)
      for (const auto& o : set)
        if (o.path == "seed")
          throw InputError(file_, o.sweep_pointer,
                           "\"seed\" may not be swept when repeat > 1 (run r uses the base seed "
                           "+ r)");
  }

  /// Column order: grid, zip, list paths (first appearance), then seed.
  void set_columns() {
    for (const auto& a : grid_) sweep_.param_paths.push_back(a.path);
    for (const auto& a : zip_) sweep_.param_paths.push_back(a.path);
    for (const auto& set : list_)
      for (const auto& o : set)
        if (std::find(sweep_.param_paths.begin(), sweep_.param_paths.end(), o.path) ==
            sweep_.param_paths.end())
          sweep_.param_paths.push_back(o.path);
    if (repeat_ > 1) sweep_.param_paths.push_back("seed");
  }

  size_t count_runs() const {
    size_t total = 1;
    auto mul = [&](size_t n) {
      if (n != 0 && total > kMaxRuns / n)
        throw InputError(file_, "", fmt::format("the sweep has more than {} runs", kMaxRuns));
      total *= n;
    };
    for (const auto& a : grid_) mul(a.values.size());
    mul(zip_len_);
    mul(list_.empty() ? 1 : list_.size());
    mul(static_cast<size_t>(repeat_));
    return total;
  }

  uint64_t base_seed() const {
    uint64_t seed = scenario_defaults().at("seed").get<uint64_t>();
    if (base_.contains("seed") && base_["seed"].is_number_unsigned())
      seed = base_["seed"].get<uint64_t>();
    else if (base_.contains("seed") && base_["seed"].is_number_integer() &&
             base_["seed"].get<int64_t>() >= 0)
      seed = static_cast<uint64_t>(base_["seed"].get<int64_t>());
    return seed;
  }

  /// One run: the base with `overrides`, its name, and its resolved scenario or its error.
  SweepRun make_run(const std::vector<Override>& overrides) {
    SweepRun run;
    run.params = json::object();
    std::string name;
    json scenario_raw = base_;
    for (const auto& o : overrides) {
      run.param_paths.push_back(o.path);
      run.params[o.path] = o.value;
      if (!name.empty()) name += ",";
      name += sanitize_part(o.path) + "=" + sanitize_part(name_value(o.value));
      try {
        apply_override(scenario_raw, o.path + "=" + o.value.dump());
      } catch (const InputError& e) {
        throw InputError(file_, o.sweep_pointer, bare_message(e));
      }
    }
    if (name.empty()) name = "base";
    name = shorten(name);
    run.name = name;
    for (int k = 2; !used_names_.insert(run.name).second; ++k)
      run.name = fmt::format("{}~{}", name, k);
    try {
      resolve(run, scenario_raw);
      for (const auto& o : overrides) known_good_.insert(o.path);
    } catch (const InputError& e) {
      record_error(run, e, overrides, scenario_raw);
    }
    return run;
  }

  /// The run's resolved scenario (files by absolute path) and its key (files by content).
  void resolve(SweepRun& run, const json& scenario_raw) {
    Scenario s = parse_scenario(scenario_raw, base_file_);
    json resolved = s.resolved;
    json key_doc = resolved;
    if (!s.model_path.empty()) {
      resolved["model"] = fs::absolute(s.model_path).lexically_normal().string();
      key_doc["model"] = content_ref(s.model_path, file_hashes_);
    }
    if (!s.platform.file.empty()) {
      resolved["platform"]["file"] = fs::absolute(s.platform.file).lexically_normal().string();
      key_doc["platform"]["file"] = content_ref(s.platform.file, file_hashes_);
    }
    run.scenario = std::move(resolved);
    run.key = hex16(fnv1a64(std::string("sgdsim ") + SGDSIM_VERSION + "\n" + key_doc.dump()));
  }

  /// An invalid run keeps its error, naming the sweep path that set the bad field.
  void record_error(SweepRun& run, const InputError& e, const std::vector<Override>& overrides,
                    const json& scenario_raw) {
    std::string msg = e.what();
    if (inline_base_ && e.file() == file_)
      msg = InputError(file_, "/base" + e.pointer(), bare_message(e)).what();
    for (const auto& o : overrides)
      if (e.file() == base_file_ && is_ancestor_or_self(scenario_pointer(o.path), e.pointer())) {
        msg += " (set by " + o.sweep_pointer + ")";
        break;
      }
    run.error = msg;
    run.key = hex16(fnv1a64(std::string("invalid\n") + scenario_raw.dump()));
    if (e.file() == base_file_ && bare_message(e).rfind("unknown key", 0) == 0)
      for (const auto& o : overrides)
        if (is_ancestor_or_self(e.pointer(), scenario_pointer(o.path)))
          unknown_.emplace(o.path, msg);
  }

  /// A path no run accepts as a scenario field is an error in the sweep file itself.
  void check_unknown_paths() const {
    for (const auto& [path, msg] : unknown_) {
      if (known_good_.count(path) != 0) continue;
      std::string where;
      for (const auto& a : grid_)
        if (a.path == path) where = a.pointer;
      for (const auto& a : zip_)
        if (a.path == path) where = a.pointer;
      for (const auto& set : list_)
        for (const auto& o : set)
          if (where.empty() && o.path == path) where = o.sweep_pointer;
      throw InputError(file_, where, "\"" + path + "\" is not a scenario field: " + msg);
    }
  }

  std::string file_, text_;
  json raw_;
  ordered_json ordered_;  // file order of the grid's paths
  JsonObject root_;
  std::string sweep_dir_;
  Sweep sweep_;
  json base_;
  std::string base_file_;
  bool inline_base_ = false;
  int64_t repeat_ = 1;
  std::vector<Axis> grid_, zip_;
  size_t zip_len_ = 1;
  std::vector<std::vector<Override>> list_;
  std::map<std::string, std::string> owner_;  // scenario pointer -> sweep pointer
  std::map<std::string, std::string> file_hashes_;
  std::map<std::string, std::string> unknown_;  // path -> first "unknown key" error
  std::set<std::string> known_good_;
  std::set<std::string> used_names_;
};

}  // namespace

Sweep load_sweep(const std::string& file, const std::vector<std::string>& simgrid_cfg) {
  return SweepLoader(file, simgrid_cfg).expand();
}

RunTask make_task(const Sweep& sweep, size_t index, const fs::path& out_dir) {
  const SweepRun& run = sweep.runs.at(index);
  RunTask t;
  t.index = index;
  t.name = run.name;
  t.key = run.key;
  t.params = run.params;
  t.scenario = run.scenario;
  t.run_dir = (fs::absolute(out_dir) / "runs" / run.name).lexically_normal().string();
  return t;
}

json task_to_json(const RunTask& task) {
  return json{{"index", task.index},   {"name", task.name},         {"key", task.key},
              {"params", task.params}, {"scenario", task.scenario}, {"run_dir", task.run_dir}};
}

RunTask task_from_json(const json& j) {
  RunTask t;
  t.index = j.at("index").get<size_t>();
  t.name = j.at("name").get<std::string>();
  t.key = j.at("key").get<std::string>();
  t.params = j.at("params");
  t.scenario = j.at("scenario");
  t.run_dir = j.at("run_dir").get<std::string>();
  return t;
}

json result_line(const std::string& run, const json& params, const std::string& key,
                 const json* summary, const std::string& error) {
  json line = summary != nullptr && summary->is_object() ? *summary : json::object();
  line["run"] = run;
  line["params"] = params;
  line["status"] = error.empty() ? "ok" : "failed";
  line["key"] = key;
  if (!error.empty()) line["error"] = error;
  return line;
}

std::optional<json> completed_line(const RunTask& task) {
  const fs::path dir(task.run_dir);
  std::error_code ec;
  if (!fs::is_regular_file(dir / "summary.json", ec) || !fs::is_regular_file(dir / "sweep-key", ec))
    return std::nullopt;
  try {
    std::string key = read_file(dir / "sweep-key");
    while (!key.empty() && (key.back() == '\n' || key.back() == ' ')) key.pop_back();
    if (key != task.key) return std::nullopt;
    json summary = json::parse(read_file(dir / "summary.json"));
    if (!summary.is_object()) return std::nullopt;
    return result_line(task.name, task.params, task.key, &summary, "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

std::string csv_cell(const json& v) {
  std::string s;
  if (v.is_null())
    return "";
  else if (v.is_string())
    s = v.get<std::string>();
  else
    s = v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void flatten(const json& v, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (const auto& [k, x] : v.items()) {
    std::string name = prefix.empty() ? k : prefix + "." + k;
    if (x.is_object())
      flatten(x, name, out);
    else if (!x.is_array())
      out[name] = csv_cell(x);
  }
}

}  // namespace

std::string results_csv(const std::vector<std::string>& param_paths,
                        const std::vector<json>& lines) {
  std::vector<std::string> columns = {"run", "status", "error", "key"};
  for (const auto& p : param_paths) columns.push_back("params." + p);
  std::vector<std::map<std::string, std::string>> rows;
  std::set<std::string> others;
  for (const auto& line : lines) {
    std::map<std::string, std::string> row;
    json rest = line;
    for (const char* k : {"run", "status", "error", "key", "params"}) rest.erase(k);
    flatten(rest, "", row);
    for (const auto& [k, _] : row) others.insert(k);
    for (const char* k : {"run", "status", "error", "key"})
      if (line.contains(k)) row[k] = csv_cell(line[k]);
    if (line.contains("params"))
      for (const auto& [p, v] : line["params"].items())
        row["params." + p] = v.is_structured() ? csv_cell(v.dump()) : csv_cell(v);
    rows.push_back(std::move(row));
  }
  for (const auto& o : others)
    if (std::find(columns.begin(), columns.end(), o) == columns.end()) columns.push_back(o);
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + csv_cell(columns[c]);
  out += "\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ",";
      auto it = row.find(columns[c]);
      if (it != row.end()) out += it->second;
    }
    out += "\n";
  }
  return out;
}

void write_results(const fs::path& out_dir, const Sweep& sweep,
                   const std::vector<std::optional<json>>& lines) {
  std::vector<json> present;
  std::string jsonl;
  for (const auto& l : lines)
    if (l) {
      jsonl += l->dump() + "\n";
      present.push_back(*l);
    }
  write_file_atomic(out_dir / "results.jsonl", jsonl);
  write_file_atomic(out_dir / "results.csv", results_csv(sweep.param_paths, present));
}

}  // namespace sgdsim
