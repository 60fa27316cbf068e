// Format detection and dispatch to the importers.
#include "sim/trace/import.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/errors.hpp"
#include "sim/trace/bcaffe.hpp"
#include "sim/trace/chakra.hpp"
#include "sim/trace/input_file.hpp"
#include "sim/trace/kineto.hpp"
#include "sim/trace/nccl_tests.hpp"
#include "sim/trace/pipedream.hpp"
#include "sim/trace/sgdsim_timeline.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {

const std::vector<std::string>& measured_formats() {
  static const std::vector<std::string> f = {"kineto", "chrome", "sgdsim",    "nccl-tests",
                                             "osu",    "bcaffe", "pipedream", "chakra"};
  return f;
}

std::string detect_format(const std::string& path) {
  if (looks_like_chakra(path)) return "chakra";  // binary protobuf: told by its .et name
  const std::string head = peek_text_maybe_gzip(path, 16384);
  std::string_view h = text::trim(head);
  while (!h.empty() &&
         (h.front() == '\n' || h.front() == ' ' || h.front() == '\t' || h.front() == '\r'))
    h.remove_prefix(1);
  if (h.empty())
    throw InputError(path, "",
                     "empty file: expected a trace or log (one of " +
                         fmt::format("{}", fmt::join(measured_formats(), ", ")) + ")");
  if (h.front() == '{' || h.front() == '[') return "json";
  if (head.find(" -- forward_compute_time=") != std::string::npos) return "pipedream";
  if (head.find("nThread") != std::string::npos || head.find("busbw") != std::string::npos ||
      head.find("out-of-place") != std::string::npos)
    return "nccl-tests";
  if (head.find("OSU MPI") != std::string::npos) return "osu";
  if (head.find("distributed.cpp") != std::string::npos) return "bcaffe";
  // A plain "bytes latency" or "nodes,bytes latency" table is an OSU log.
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    std::string_view line = text::trim(
        std::string_view(head).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    pos = nl == std::string::npos ? head.size() : nl + 1;
    if (line.empty() || line.front() == '#') continue;
    auto t = text::split_ws(line);
    double x = 0;
    std::string_view size = t.empty() ? std::string_view() : t[0];
    if (auto c = size.find(','); c != std::string_view::npos) size = size.substr(c + 1);
    if (t.size() >= 2 && text::parse_double(size, x) && text::parse_double(t[1], x)) return "osu";
    break;
  }
  throw InputError(path, "",
                   "cannot tell the format from the first lines: give --format (one of " +
                       fmt::format("{}", fmt::join(measured_formats(), ", ")) + ")");
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
  std::string format = o.format.empty() ? detect_format(path) : o.format;
  if (std::find(measured_formats().begin(), measured_formats().end(), format) ==
          measured_formats().end() &&
      format != "json")
    throw InputError("usage: --format: expected one of " +
                     fmt::format("{}", fmt::join(measured_formats(), ", ")) + ", got \"" + format +
                     "\"");
  MeasuredTrace t;
  if (format == "json" || format == "kineto" || format == "chrome" || format == "sgdsim") {
    TraceEventFile ev = read_trace_events(path);
    const bool sgdsim = is_sgdsim_timeline(ev);
    if (format == "sgdsim" && !sgdsim)
      throw InputError(path, "/otherData/time_unit",
                       "expected an sgdsim timeline (otherData.time_unit \"us of simulated "
                       "time\"); this looks like another trace: use --format kineto");
    if (sgdsim && format != "kineto" && format != "chrome") {
      t = sgdsim_timeline_trace(ev, o.warmup >= 0 ? o.warmup : std::max(0, warmup_beside(path)));
    } else {
      t = kineto_trace(ev);
      if (format == "chrome") t.format = "chrome";
      t.warmup_steps = std::max(0, o.warmup);
    }
  } else if (format == "chakra") {
    t = chakra_trace(path);
  } else if (format == "osu") {
    t = osu_trace(read_osu_log(path, o.ranks));
  } else if (format == "nccl-tests") {
    t = nccl_tests_trace(read_nccl_tests_log(path, o.ranks));
  } else if (format == "bcaffe") {
    t = bcaffe_trace(read_bcaffe_log(path, o.ranks));
  } else {
    t = pipedream_trace(read_pipedream_graph(path), o.batch_size);
  }
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
