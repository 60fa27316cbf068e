// The importer registry, format detection and dispatch: every format is an Importer in its own
// file (*_importer.cpp); this file names none of them.
#include "sim/trace/import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <sstream>
#include <stdexcept>

#include "sim/core/errors.hpp"
#include "sim/core/registry.hpp"
#include "sim/trace/input_file.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {

namespace {
// Built on first use: registrations run during static initialization, in any order.
Registry<Importer>& registry() {
  static Registry<Importer> r;
  return r;
}

std::string format_list() {
  return fmt::format("{}", fmt::join(measured_formats(), ", "));
}
}  // namespace

ImporterRegistration::ImporterRegistration(std::unique_ptr<Importer> importer) {
  registry().add(std::move(importer));
}

const Importer* find_importer(const std::string& format) {
  return registry().find(format);
}

const Importer& importer_named(const std::string& format) {
  if (const Importer* i = find_importer(format)) return *i;
  throw InputError("usage: --format: expected one of " + format_list() + ", got \"" + format +
                   "\"");
}

std::vector<const Importer*> importers() {
  return registry().all();
}

std::vector<std::string> measured_formats() {
  return registry().names();
}

std::string importer_help() {
  std::string out;
  for (const Importer* i : importers()) {
    std::string text = i->summary(), indent = "  " + std::string(12, ' ');
    for (size_t p = text.find('\n'); p != std::string::npos; p = text.find('\n', p + 1))
      text.insert(p + 1, indent), p += indent.size();
    out += fmt::format("  {:<12}{}\n", i->name(), text);
  }
  return out;
}

DdpProfile Importer::ddp_profile(const MeasuredTrace& trace) const {
  return ddp_profile_from_trace(trace);
}

std::vector<Param> common_import_params() {
  return {{.key = "ranks",
           .type = ParamType::integer,
           .brief =
               "ranks of the run when the file does not say (latency benchmarks, B-Caffe logs; "
               "validate: the workers simulated)",
           .default_text = "from the file",
           .min = 1,
           .max = 1 << 24}};
}

std::vector<Param> import_params_of(const Importer& importer) {
  std::vector<Param> out = common_import_params();
  for (Param& p : importer.params()) out.push_back(std::move(p));
  return out;
}

namespace {
/// A declaration's help text: its brief and its default (an option without one: its brief).
std::string param_text(const Param& p) {
  if (p.default_value.is_null() && p.default_text.empty()) return p.brief;
  const std::string def = !p.default_text.empty()       ? p.default_text
                          : p.default_value.is_string() ? p.default_value.get<std::string>()
                                                        : p.default_value.dump();
  return p.brief + " (default: " + def + ")";
}

void add_declaration(std::vector<DeclaredImportParam>& out, const Param& p,
                     const std::string& format) {
  auto it = std::find_if(out.begin(), out.end(),
                         [&](const DeclaredImportParam& d) { return d.param.key == p.key; });
  if (it == out.end()) {
    out.push_back({p, {format}, {{{format}, param_text(p)}}});
    return;
  }
  if (it->formats.empty() || it->param.type != p.type || it->param.min != p.min ||
      it->param.max != p.max || it->param.choices != p.choices)
    throw std::logic_error("import option \"" + p.key + "\" declared twice with different types");
  it->formats.push_back(format);
  const std::string text = param_text(p);
  auto t = std::find_if(it->texts.begin(), it->texts.end(),
                        [&](const auto& x) { return x.second == text; });
  if (t == it->texts.end())
    it->texts.push_back({{format}, text});
  else
    t->first.push_back(format);
}

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

/// `text` wrapped at 95 columns after `name`, continuation lines indented to `column`.
std::string wrapped(const std::string& name, const std::string& text, size_t column) {
  std::string line = name.size() < column ? name + std::string(column - name.size(), ' ')
                                          : name + "\n" + std::string(column, ' ');
  size_t col = column;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (col > column && col + 1 + w.size() > 95) {
      line += "\n" + std::string(column, ' ');
      col = column;
    }
    if (col > column) line += " ", ++col;
    line += w;
    col += w.size();
  }
  return line + "\n";
}

/// "chrome, kineto: text; sgdsim: text" (a common option: its text alone).
std::string owners_text(const DeclaredImportParam& d) {
  if (d.formats.empty()) return d.texts.front().second;
  std::string out;
  for (const auto& [formats, text] : d.texts)
    out += (out.empty() ? "" : "; ") + joined(formats) + ": " + text;
  return out;
}
}  // namespace

std::vector<DeclaredImportParam> import_params() {
  std::vector<DeclaredImportParam> out;
  for (const Param& p : common_import_params()) out.push_back({p, {}, {{{}, param_text(p)}}});
  for (const Importer* i : importers())
    for (const Param& p : i->params()) add_declaration(out, p, i->name());
  return out;
}

int int_option(const ParamValues& options, const std::string& key, int absent) {
  if (!options.has(key)) return absent;
  return static_cast<int>(std::min<double>(options.number(key), INT_MAX));
}

std::string import_options_help(bool json_keys) {
  std::string out;
  for (const DeclaredImportParam& d : import_params()) {
    const Param& p = d.param;
    const std::string value = p.type == ParamType::integer     ? " N"
                              : p.type == ParamType::size      ? " B"
                              : p.type == ParamType::time      ? " T"
                              : p.type == ParamType::bandwidth ? " R"
                                                               : " X";
    const std::string name = json_keys ? "  \"" + p.key + "\"" : "  " + p.flag() + value;
    std::string text = owners_text(d);
    if (p.type == ParamType::choice) text += " (one of " + joined(p.choices) + ")";
    out += wrapped(name, text, 19);
  }
  return out;
}

std::string import_options_markdown() {
  std::string out = "| option | formats | default | meaning |\n|---|---|---|---|\n";
  for (const DeclaredImportParam& d : import_params())
    for (const auto& [formats, _] : d.texts) {
      const Importer* first = formats.empty() ? nullptr : find_importer(formats.front());
      Param p = d.param;
      if (first)
        for (const Param& q : first->params())
          if (q.key == p.key) p = q;
      out += fmt::format("| `{}` (`\"{}\"`) | {} | {} | {} |\n", p.flag(), p.key,
                         formats.empty() ? "every format" : joined(formats),
                         p.default_value.is_null() && p.default_text.empty() ? std::string("none")
                                                                             : p.default_markdown(),
                         p.meaning());
    }
  return out;
}

void check_import_options(const Importer& importer, const ParamValues& options) {
  const std::vector<Param> mine = import_params_of(importer);
  for (const std::string& key : options.keys()) {
    if (std::any_of(mine.begin(), mine.end(), [&](const Param& p) { return p.key == key; }))
      continue;
    for (const DeclaredImportParam& d : import_params())
      if (d.param.key == key)
        throw InputError("usage: " + d.param.flag() + ": only for formats " + joined(d.formats) +
                         ", not \"" + importer.name() + "\"");
    throw std::logic_error("import option \"" + key + "\" is declared by no format");
  }
}

DerivedProfile Importer::to_profile(const MeasuredTrace& trace, const ParamValues&) const {
  std::vector<std::string> can;
  for (const Importer* i : importers())
    if (i->derives_profile()) can.push_back(i->name());
  throw InputError("usage: --out: no model profile can be derived from a " + trace.format +
                   " file (profiles come from " + fmt::format("{}", fmt::join(can, ", ")) +
                   " files)");
}

const Importer& detect_importer(const std::string& path) {
  FileHead head{path, "", {}};
  // Binary formats are told by their name; peeking at them as text would be wasted.
  std::vector<const Importer*> order = importers();
  std::stable_sort(order.begin(), order.end(), [](const Importer* a, const Importer* b) {
    return a->detect_order() < b->detect_order();
  });
  bool peeked = false;
  for (const Importer* i : order) {
    if (!peeked && i->detect_order() >= 0) {
      head.text = peek_text_maybe_gzip(path, 16384);
      std::string_view h = head.text;
      while (!h.empty() &&
             (h.front() == '\n' || h.front() == ' ' || h.front() == '\t' || h.front() == '\r'))
        h.remove_prefix(1);
      head.body = h;
      peeked = true;
      if (h.empty())
        throw InputError(path, "",
                         "empty file: expected a trace or log (one of " + format_list() + ")");
    }
    if (i->detects(head)) return *i;
  }
  throw InputError(
      path, "",
      "cannot tell the format from the first lines: give --format (one of " + format_list() + ")");
}

std::string detect_format(const std::string& path) {
  return detect_importer(path).name();
}

MeasuredTrace osu_trace(const OsuLog& log) {
  MeasuredTrace t;
  t.file = log.file;
  t.format = "osu";
  t.world_size = log.ranks;
  int i = 0;
  for (const auto& p : log.points) {
    MeasuredCollective c;
    c.index = i++;
    c.name = "allreduce";
    c.bytes = p.size_bytes;
    c.time_s = p.latency_s;
    c.group_size = log.ranks;
    t.collectives.push_back(c);
  }
  t.notes.push_back("OSU allreduce latency log: one collective per message size (average latency)");
  if (log.ranks == 0) t.notes.push_back("the log has no nodes column and no --ranks was given");
  return t;
}

MeasuredTrace import_measured(const std::string& path, const ImportOptions& o) {
  const Importer& importer = o.format.empty() ? detect_importer(path) : importer_named(o.format);
  check_import_options(importer, o.values);
  ParamValues values = o.values;
  for (const Param& p : import_params_of(importer))
    if (!values.has(p.key))
      if (std::optional<ParamValue> v = default_param_value(p)) values.set(p.key, *v);
  MeasuredTrace t =
      o.format.empty() ? importer.import_detected(path, values) : importer.import(path, values);
  // Skipping every step would leave the statistics to the last one silently.
  const int skip = int_option(values, "skip", 0);
  if (skip > 0 && !t.steps.empty() && skip >= static_cast<int>(t.steps.size()))
    throw InputError(
        "--skip", "",
        fmt::format("{} steps to skip, but {} has {} step{}: expected at most {}", skip, path,
                    t.steps.size(), t.steps.size() == 1 ? "" : "s", t.steps.size() - 1));
  if (t.warmup_steps >= static_cast<int>(t.steps.size()) && !t.steps.empty())
    t.warmup_steps = static_cast<int>(t.steps.size()) - 1;
  return t;
}

OsuLog latency_log(const MeasuredTrace& t, int ranks, const std::string& collective) {
  OsuLog log;
  log.file = t.file;
  log.ranks = ranks;
  for (const auto& c : t.collectives)
    if (c.name == collective && std::isfinite(c.bytes) && c.time_s > 0)
      log.points.push_back({c.bytes, c.time_s});
  if (log.points.empty())
    throw InputError(t.file, "",
                     "expected " + collective + " collectives of known size to fit alpha and beta");
  return log;
}

}  // namespace sgdsim
