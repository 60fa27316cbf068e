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

Sweep load_sweep(const std::string& file, const std::vector<std::string>& simgrid_cfg) {
  Sweep sweep;
  sweep.file = file;
  const std::string text = read_file(file);
  const json raw = parse_json_text(text, file);
  if (!raw.is_object())
    throw InputError(file, "/",
                     "expected a sweep object {\"base\", \"grid\", ...}, got " + show_value(raw));
  const ordered_json ordered = ordered_json::parse(text);  // file order of the grid's paths
  std::string sweep_dir = fs::path(file).parent_path().string();
  if (sweep_dir.empty()) sweep_dir = ".";

  JsonObject root(raw, file, "");
  for (const char* k : {"base", "grid", "zip", "list", "repeat", "description"})
    if (root.has(k)) root.raw(k);
  root.finish();  // unknown keys first: "bse" is a typo, not a missing "base"

  // base: a scenario path (relative to the sweep file) or an inline scenario.
  if (!root.has("base"))
    throw InputError(file, "/base",
                     "required field is missing: expected a scenario path or an inline scenario "
                     "object");
  json base;
  std::string base_file;
  bool inline_base = false;
  {
    const json& b = root.raw("base");
    if (b.is_string() && !b.get<std::string>().empty()) {
      base_file = resolve_data_path(b.get<std::string>(), sweep_dir, file, "/base");
      base = parse_json_file(base_file);
      if (!base.is_object())
        throw InputError(base_file, "/", "expected a JSON object, got " + show_value(base));
    } else if (b.is_object()) {
      base = b;
      base_file = file;
      inline_base = true;
    } else {
      root.fail("base", "a scenario path or an inline scenario object");
    }
  }
  // sweep --cfg: every run's SimGrid options, after the base's (so they enter each run's key).
  if (!simgrid_cfg.empty()) {
    json& options = base["simgrid_cfg"];
    if (options.is_null()) options = json::array();
    if (options.is_array())
      for (const auto& o : simgrid_cfg) options.push_back(o);
  }
  if (root.has("description")) sweep.description = root.get_string("description", true);
  int64_t repeat = 1;
  if (root.has("repeat")) repeat = root.get_int("repeat", 1, 100000);

  // Axes, in file order.
  std::vector<Axis> grid, zip;
  std::map<std::string, std::string> owner;  // scenario pointer -> sweep pointer
  auto claim = [&](const std::string& path, const std::string& pointer) {
    check_path(path, file, pointer);
    std::string sp = scenario_pointer(path);
    for (const auto& [other, where] : owner)
      if (is_ancestor_or_self(other, sp) || is_ancestor_or_self(sp, other))
        throw InputError(file, pointer,
                         "\"" + path + "\" overlaps the path set at " + where +
                             " (a field may be swept in one place only)");
    owner.emplace(sp, pointer);
  };
  auto read_axes = [&](const char* section, std::vector<Axis>& axes) {
    if (!root.has(section)) return;
    JsonObject obj = root.get_object(section);
    if (ordered[section].empty())
      throw InputError(file, obj.pointer(),
                       "expected at least one path such as \"workers.count\": [2, 4], got {}");
    for (const auto& [path, _] : ordered[section].items()) {
      obj.has(path);
      claim(path, obj.pointer_of(path));
      axes.push_back({path, obj.pointer_of(path), read_values(obj, path)});
    }
    obj.finish();
  };
  read_axes("grid", grid);
  read_axes("zip", zip);
  size_t zip_len = zip.empty() ? 1 : zip.front().values.size();
  for (const auto& a : zip)
    if (a.values.size() != zip_len)
      throw InputError(file, a.pointer,
                       fmt::format("expected {} values like {} (zip pairs equal-length lists), "
                                   "got {}",
                                   zip_len, zip.front().pointer, a.values.size()));

  // list: explicit override sets.
  std::vector<std::vector<Override>> list;
  if (root.has("list")) {
    const json& l = root.raw("list");
    if (!l.is_array() || l.empty())
      root.fail("list", "a non-empty array of override objects such as [{\"workers.count\": 8}]");
    for (size_t i = 0; i < l.size(); ++i) {
      std::string ptr = fmt::format("/list/{}", i);
      if (!l[i].is_object())
        throw InputError(file, ptr,
                         "expected an object of overrides such as {\"workers.count\": 8}, got " +
                             show_value(l[i]));
      std::vector<Override> set;
      for (const auto& [path, _] : ordered["list"][i].items()) {
        std::string p = ptr + "/" + path;
        check_path(path, file, p);
        for (const auto& [other, where] : owner)
          if (is_ancestor_or_self(other, scenario_pointer(path)) ||
              is_ancestor_or_self(scenario_pointer(path), other))
            throw InputError(file, p,
                             "\"" + path + "\" overlaps the path set at " + where +
                                 " (a field may be swept in one place only)");
        set.push_back({path, p, l[i].at(path)});
      }
      list.push_back(std::move(set));
    }
  }

  if (repeat > 1)
    for (const auto& [sp, where] : owner)
      if (sp == "/seed")
        throw InputError(file, "/repeat",
                         "repeat > 1 varies \"seed\" (run r uses the base seed + r), so \"seed\" "
                         "may not also be swept (it is at " +
                             where + ")");
  if (repeat > 1)
    for (const auto& set : list)
      for (const auto& o : set)
        if (o.path == "seed")
          throw InputError(file, o.sweep_pointer,
                           "\"seed\" may not be swept when repeat > 1 (run r uses the base seed "
                           "+ r)");

  // Column order: grid, zip, list paths (first appearance), then seed.
  for (const auto& a : grid) sweep.param_paths.push_back(a.path);
  for (const auto& a : zip) sweep.param_paths.push_back(a.path);
  for (const auto& set : list)
    for (const auto& o : set)
      if (std::find(sweep.param_paths.begin(), sweep.param_paths.end(), o.path) ==
          sweep.param_paths.end())
        sweep.param_paths.push_back(o.path);
  if (repeat > 1) sweep.param_paths.push_back("seed");

  size_t total = 1;
  auto mul = [&](size_t n) {
    if (n != 0 && total > kMaxRuns / n)
      throw InputError(file, "", fmt::format("the sweep has more than {} runs", kMaxRuns));
    total *= n;
  };
  for (const auto& a : grid) mul(a.values.size());
  mul(zip_len);
  mul(list.empty() ? 1 : list.size());
  mul(static_cast<size_t>(repeat));

  uint64_t base_seed = scenario_defaults().at("seed").get<uint64_t>();
  if (base.contains("seed") && base["seed"].is_number_unsigned())
    base_seed = base["seed"].get<uint64_t>();
  else if (base.contains("seed") && base["seed"].is_number_integer() &&
           base["seed"].get<int64_t>() >= 0)
    base_seed = static_cast<uint64_t>(base["seed"].get<int64_t>());

  // Expansion: grid (first path slowest) x zip x list x repeat.
  std::map<std::string, std::string> file_hashes;
  std::map<std::string, std::string> unknown;  // path -> first "unknown key" error
  std::set<std::string> known_good;
  std::set<std::string> used_names;
  std::vector<size_t> odometer(grid.size(), 0);
  const size_t list_len = list.empty() ? 1 : list.size();
  sweep.runs.reserve(total);
  for (size_t g = 0; g < total / (zip_len * list_len * static_cast<size_t>(repeat)); ++g) {
    for (size_t z = 0; z < zip_len; ++z) {
      for (size_t li = 0; li < list_len; ++li) {
        for (int64_t r = 0; r < repeat; ++r) {
          std::vector<Override> overrides;
          for (size_t a = 0; a < grid.size(); ++a)
            overrides.push_back({grid[a].path, grid[a].pointer, grid[a].values[odometer[a]]});
          for (const auto& a : zip) overrides.push_back({a.path, a.pointer, a.values[z]});
          if (!list.empty())
            for (const auto& o : list[li]) overrides.push_back(o);
          if (repeat > 1)
            overrides.push_back({"seed", "/repeat", json(base_seed + static_cast<uint64_t>(r))});

          SweepRun run;
          run.params = json::object();
          std::string name;
          json scenario_raw = base;
          for (const auto& o : overrides) {
            run.param_paths.push_back(o.path);
            run.params[o.path] = o.value;
            if (!name.empty()) name += ",";
            name += sanitize_part(o.path) + "=" + sanitize_part(name_value(o.value));
            try {
              apply_override(scenario_raw, o.path + "=" + o.value.dump());
            } catch (const InputError& e) {
              throw InputError(file, o.sweep_pointer, bare_message(e));
            }
          }
          if (name.empty()) name = "base";
          name = shorten(name);
          run.name = name;
          for (int k = 2; !used_names.insert(run.name).second; ++k)
            run.name = fmt::format("{}~{}", name, k);

          try {
            Scenario s = parse_scenario(scenario_raw, base_file);
            json resolved = s.resolved;
            json key_doc = resolved;
            if (!s.model_path.empty()) {
              resolved["model"] = fs::absolute(s.model_path).lexically_normal().string();
              key_doc["model"] = content_ref(s.model_path, file_hashes);
            }
            if (!s.platform.file.empty()) {
              resolved["platform"]["file"] =
                  fs::absolute(s.platform.file).lexically_normal().string();
              key_doc["platform"]["file"] = content_ref(s.platform.file, file_hashes);
            }
            run.scenario = std::move(resolved);
            run.key =
                hex16(fnv1a64(std::string("sgdsim ") + SGDSIM_VERSION + "\n" + key_doc.dump()));
            for (const auto& o : overrides) known_good.insert(o.path);
          } catch (const InputError& e) {
            std::string msg = e.what();
            if (inline_base && e.file() == file)
              msg = InputError(file, "/base" + e.pointer(), bare_message(e)).what();
            for (const auto& o : overrides)
              if (e.file() == base_file &&
                  is_ancestor_or_self(scenario_pointer(o.path), e.pointer())) {
                msg += " (set by " + o.sweep_pointer + ")";
                break;
              }
            run.error = msg;
            run.key = hex16(fnv1a64(std::string("invalid\n") + scenario_raw.dump()));
            if (e.file() == base_file && bare_message(e).rfind("unknown key", 0) == 0)
              for (const auto& o : overrides)
                if (is_ancestor_or_self(e.pointer(), scenario_pointer(o.path)))
                  unknown.emplace(o.path, msg);
          }
          sweep.runs.push_back(std::move(run));
        }
      }
    }
    for (size_t a = grid.size(); a-- > 0;) {
      if (++odometer[a] < grid[a].values.size()) break;
      odometer[a] = 0;
    }
  }

  // A path no run accepts as a scenario field is an error in the sweep file itself.
  for (const auto& [path, msg] : unknown) {
    if (known_good.count(path) != 0) continue;
    std::string where;
    for (const auto& a : grid)
      if (a.path == path) where = a.pointer;
    for (const auto& a : zip)
      if (a.path == path) where = a.pointer;
    for (const auto& set : list)
      for (const auto& o : set)
        if (where.empty() && o.path == path) where = o.sweep_pointer;
    throw InputError(file, where, "\"" + path + "\" is not a scenario field: " + msg);
  }
  return sweep;
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
