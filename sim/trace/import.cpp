// The importer registry, format detection and dispatch: every format is an Importer in its own
// file (*_importer.cpp); this file names none of them.
#include "sim/trace/import.hpp"

#include <fmt/format.h>

#include <algorithm>

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

DerivedProfile Importer::to_profile(const MeasuredTrace& trace, int) const {
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
  MeasuredTrace t = importer.import(path, o);
  // Skipping every step would leave the statistics to the last one silently.
  if (o.warmup > 0 && !t.steps.empty() && o.warmup >= static_cast<int>(t.steps.size()))
    throw InputError(
        "--skip", "",
        fmt::format("{} steps to skip, but {} has {} step{}: expected at most {}", o.warmup, path,
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
