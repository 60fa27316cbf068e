// nccl-tests output -> per-size collective times.
#include "sim/trace/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/trace/input_file.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {

using namespace text;

namespace {
/// Removes mpirun --tag-output tags ("[1,0]<stdout>:"), also where ranks' output interleaved.
void strip_mpi_tags(std::string& line) {
  for (size_t tag = line.find("]<stdout>:"); tag != std::string::npos;
       tag = line.find("]<stdout>:")) {
    const size_t open = line.rfind('[', tag);
    if (open == std::string::npos) break;
    line.erase(open, tag + 10 - open);
  }
}
/// NCCL's own lines that say what it ran with (NCCL_DEBUG=INFO): its version and NCCL_ALGO.
void read_nccl_info(std::string_view line, NcclTestsLog& log) {
  auto after = [&](std::string_view key) -> std::string {
    const size_t at = line.find(key);
    if (at == std::string_view::npos) return "";
    const auto words = split_ws(line.substr(at + key.size()));
    return words.empty() ? "" : std::string(words[0]);
  };
  if (std::string v = after("NCCL version "); !v.empty() && log.nccl_version.empty())
    log.nccl_version = v;
  if (std::string a = after("NCCL_ALGO set by environment to "); !a.empty()) {
    for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    log.nccl_algo = a;
  }
}
/// A '#' line: a rank ("# Rank N ... on HOST device D [...] NAME"), the header's GPUs per
/// thread ("# nThread 1 nGpus 8 ..."), the test's name or the average bus bandwidth.
void read_comment_line(std::string_view line, NcclTestsLog& log, int& listed) {
  auto words = split_ws(line.substr(1));
  if (words.size() >= 2 && words[0] == "Rank") {
    ++listed;
    for (size_t w = 1; w + 1 < words.size(); ++w)
      if (words[w] == "on") log.rank_hosts.emplace_back(words[w + 1]);
    if (listed == 1) {
      auto bracket = line.find(']');
      if (bracket != std::string_view::npos)
        log.device = std::string(trim(line.substr(bracket + 1)));
    }
  } else if (words.size() >= 4 && words[0] == "nThread" && words[2] == "nGpus") {
    long long g = 0;
    if (parse_int(words[3], g) && g >= 1 && g <= 4096) log.gpus_per_thread = static_cast<int>(g);
  } else if (line.find("Collective test starting:") != std::string_view::npos) {
    std::string name(trim(line.substr(line.find(':') + 1)));
    if (auto p = name.find("_perf"); p != std::string::npos) name = name.substr(0, p);
    log.collective = normalize_collective_name(name);
    log.collective_from_log = true;
  } else if (line.find("Avg bus bandwidth") != std::string_view::npos) {
    auto colon = line.find(':');
    double v = 0;
    if (colon != std::string_view::npos && parse_double(trim(line.substr(colon + 1)), v))
      log.avg_busbw_GBps = v;
  }
}
}  // namespace

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file, int ranks) {
  NcclTestsLog log;
  log.file = file;
  log.collective = "allreduce";
  int listed = 0;
  std::string raw;
  size_t lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    strip_mpi_tags(raw);
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      read_comment_line(line, log, listed);
      continue;
    }
    read_nccl_info(line, log);
    auto t = split_ws(line);
    auto bad = [&](const std::string& what) {
      return InputError(file, line_ref(lineno),
                        "expected an nccl-tests data line \"size count type redop [root] time "
                        "algbw busbw #wrong time algbw busbw #wrong\"" +
                            (what.empty() ? "" : " (" + what + ")") + ", got " + quote(line));
    };
    // Lines without a leading number (NCCL INFO/WARN output, banners) are not data.
    long long size = 0;
    const bool digits =
        !t.empty() && t[0].find_first_not_of("0123456789") == std::string_view::npos;
    if (t.empty() || (!parse_int(t[0], size) && !digits)) continue;
    if (!parse_int(t[0], size) || static_cast<double>(size) > limits::kMaxMessageBytes)
      throw bad(fmt::format("a size of at most {:.0f} bytes, the limit on message sizes",
                            limits::kMaxMessageBytes));
    if (t.size() != 12 && t.size() != 13) throw bad(fmt::format("{} columns", t.size()));
    const size_t o = t.size() == 13 ? 5 : 4;  // first time column
    NcclTestsPoint p;
    p.size_bytes = static_cast<double>(size);
    double us = 0, in_place_us = 0;
    if (size < 0 || !parse_int(t[1], p.count) || p.count < 0) throw bad("size and count");
    p.type = std::string(t[2]);
    p.redop = std::string(t[3]);
    if (!parse_double(t[o], us) || us <= 0) throw bad("out-of-place time in us");
    if (!parse_double(t[o + 1], p.algbw_GBps) || !parse_double(t[o + 2], p.busbw_GBps))
      throw bad("bandwidths in GB/s");
    if (!parse_double(t[o + 4], in_place_us) || in_place_us <= 0) throw bad("in-place time in us");
    p.time_s = us * 1e-6;
    p.in_place_time_s = in_place_us * 1e-6;
    log.points.push_back(p);
  }
  if (log.points.empty())
    throw InputError(file, "",
                     "no measurements: expected nccl-tests data lines \"size count type redop "
                     "[root] time algbw busbw #wrong time algbw busbw #wrong\"");
  log.ranks = listed > 0 ? listed : std::max(ranks, 0);
  if (listed > 0 && ranks > 0 && listed != ranks)
    throw InputError(file, "",
                     fmt::format("the log lists {} ranks but {} were given", listed, ranks));
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::string& path, int ranks) {
  std::istringstream in(read_text_maybe_gzip(path));
  return parse_nccl_tests_log(in, path, ranks);
}

int nccl_nodes(const NcclTestsLog& log) {
  std::set<std::string> hosts(log.rank_hosts.begin(), log.rank_hosts.end());
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

int nccl_gpus_per_node(const NcclTestsLog& log) {
  std::map<std::string, int> per_host;
  int most = 0;
  for (const auto& h : log.rank_hosts) most = std::max(most, ++per_host[h]);
  return most > 0 ? most : log.ranks;
}

MeasuredTrace nccl_tests_trace(const NcclTestsLog& log) {
  MeasuredTrace t;
  t.file = log.file;
  t.format = "nccl-tests";
  t.world_size = log.ranks;
  t.device = log.device;
  int i = 0;
  for (const auto& p : log.points) {
    MeasuredCollective c;
    c.index = i++;
    c.name = log.collective;
    c.bytes = p.size_bytes;
    c.time_s = p.time_s;
    c.group_size = log.ranks;
    c.detail = fmt::format("{} {} algbw {} GB/s busbw {} GB/s", p.type, p.redop, p.algbw_GBps,
                           p.busbw_GBps);
    t.collectives.push_back(c);
  }
  t.notes.push_back("nccl-tests: one collective per message size, out-of-place time");
  if (!log.collective_from_log)
    t.notes.push_back("the log does not name its test: assumed allreduce");
  return t;
}

}  // namespace sgdsim
