// B-Caffe per-blob logs -> profile, allreduce groups, measured iteration.
#include "sim/trace/bcaffe.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/trace/input_file.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {

using namespace text;

BcaffeLog parse_bcaffe_log(std::istream& in, const std::string& file, int ranks) {
  BcaffeLog log;
  log.file = file;
  log.ranks = ranks;
  std::vector<BcaffeBlob> block;
  std::vector<size_t> block_lines;
  std::string raw;
  size_t lineno = 0;
  size_t last_start_line = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    std::string_view line = trim(raw);
    if (line.empty() || line.back() != ']') continue;
    auto open = line.rfind('[');
    if (open == std::string_view::npos || open == 0) continue;
    std::string_view before = trim(line.substr(0, open));
    if (before.empty() || before.back() != ']') continue;  // not "...] [..]"
    std::string_view body = line.substr(open + 1, line.size() - open - 2);
    std::vector<std::string_view> fields;
    size_t start = 0;
    while (start <= body.size()) {
      size_t comma = body.find(',', start);
      fields.push_back(trim(body.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    auto bad = [&]() {
      return InputError(file, line_ref(lineno),
                        "expected a blob line ending in \"[param_id, size_elements, compute_us, "
                        "allreduce_us(, merged_us)]\", got " +
                            quote(line));
    };
    if (fields.size() != 4 && fields.size() != 5) throw bad();
    long long id = 0;
    BcaffeBlob b;
    double compute_us = 0, allreduce_us = 0;
    if (!parse_int(fields[0], id) || id < 0 || id > 1000000) throw bad();
    // At most 1e12 elements a blob: sums over the (at most 1e6) blobs stay far from overflow.
    if (!parse_int(fields[1], b.elements) || b.elements < 0 || b.elements > 1'000'000'000'000LL)
      throw bad();
    if (!parse_double(fields[2], compute_us) || compute_us < 0) throw bad();
    if (!parse_double(fields[3], allreduce_us) || allreduce_us < 0) throw bad();
    if (fields.size() == 5) {
      double merged_us = 0;
      if (!parse_double(fields[4], merged_us) || merged_us < 0) throw bad();
      b.merged_s = merged_us * 1e-6;
    }
    b.id = static_cast<int>(id);
    b.backward_s = compute_us * 1e-6;
    b.allreduce_s = allreduce_us * 1e-6;
    if (b.id == 0) {
      block.clear();
      block_lines.clear();
      ++log.blocks;
      last_start_line = lineno;
    }
    block.push_back(b);
    block_lines.push_back(lineno);
  }
  if (block.empty())
    throw InputError(file, "",
                     "no blob lines: expected lines ending in \"[param_id, size_elements, "
                     "compute_us, allreduce_us(, merged_us)]\" (B-Caffe distributed.cpp output)");
  for (size_t i = 0; i < block.size(); ++i)
    if (block[i].id != static_cast<int>(i))
      throw InputError(file, line_ref(block_lines[i]),
                       fmt::format("expected blob {} (the block starting at line {} must number "
                                   "its blobs 0, 1, 2, ...), got blob {}",
                                   i, last_start_line, block[i].id));
  if (block.size() % 2 != 0)
    throw InputError(file, line_ref(block_lines.back()),
                     fmt::format("expected an even number of blobs (a weight and a bias blob per "
                                 "layer), got {}",
                                 block.size()));
  log.blobs = std::move(block);
  return log;
}

BcaffeLog read_bcaffe_log(const std::string& path, int ranks) {
  std::istringstream in(read_text_maybe_gzip(path));
  return parse_bcaffe_log(in, path, ranks);
}

std::vector<BcaffeGroup> bcaffe_groups(const BcaffeLog& log) {
  std::vector<BcaffeGroup> groups;
  BcaffeGroup open;
  for (size_t i = log.blobs.size(); i-- > 0;) {
    const BcaffeBlob& b = log.blobs[i];
    open.blobs.push_back(b.id);
    open.elements += b.elements;
    if (b.allreduce_s > 0) {
      open.allreduce_s = b.allreduce_s;
      groups.push_back(open);
      open = BcaffeGroup{};
    }
  }
  if (!open.blobs.empty()) {
    if (groups.empty()) {
      groups.push_back(open);  // no allreduce at all (a warm-up block)
    } else {
      auto& g = groups.back();
      g.blobs.insert(g.blobs.end(), open.blobs.begin(), open.blobs.end());
      g.elements += open.elements;
    }
  }
  return groups;
}

namespace {

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

constexpr fmt::string_view kSource =
    "B-Caffe log {} (shyhuai/B-Caffe logdata/, commit 1e8a70d8, BSD-2-Clause)";

}  // namespace

Profile bcaffe_profile(const BcaffeLog& log) {
  Profile p;
  p.name = "googlenet-bcaffe";
  p.source = fmt::format(fmt::runtime(kSource), base_name(log.file));
  p.measured = true;
  p.batch_size = 1;
  p.bytes_per_parameter = 4;
  for (size_t i = 0; i + 1 < log.blobs.size(); i += 2) {
    const BcaffeBlob& w = log.blobs[i];
    const BcaffeBlob& b = log.blobs[i + 1];
    ProfileLayer l;
    l.name = fmt::format("layer{} (blobs {},{})", i / 2, w.id, b.id);
    l.parameters = w.elements + b.elements;
    // bcaffe_profile.py: round(compute_us / 1000, 6) milliseconds.
    l.backward_s = std::round(w.backward_s * 1e3 * 1e6) / 1e6 * 1e-3;
    p.layers.push_back(l);
  }
  return p;
}

Profile bcaffe_group_profile(const BcaffeLog& compute, const BcaffeLog& layout) {
  if (compute.blobs.size() != layout.blobs.size())
    throw InputError(layout.file, "",
                     fmt::format("expected the same blobs as {} ({} blobs), got {}", compute.file,
                                 compute.blobs.size(), layout.blobs.size()));
  for (size_t i = 0; i < compute.blobs.size(); ++i)
    if (compute.blobs[i].elements != layout.blobs[i].elements)
      throw InputError(
          layout.file, "",
          fmt::format("blob {} has {} elements, {} has {}: not the same model", i,
                      layout.blobs[i].elements, compute.file, compute.blobs[i].elements));
  auto groups = bcaffe_groups(layout);
  Profile p;
  p.name = "googlenet-bcaffe-allreduces";
  p.source = "backward times: " + fmt::format(fmt::runtime(kSource), base_name(compute.file)) +
             "; allreduce layout: " + base_name(layout.file);
  p.measured = true;
  p.batch_size = 1;
  p.bytes_per_parameter = 4;
  for (size_t g = groups.size(); g-- > 0;) {  // forward order: lowest blob ids first
    const BcaffeGroup& grp = groups[g];
    ProfileLayer l;
    l.name = grp.blobs.size() == 1
                 ? fmt::format("blob {}", grp.blobs[0])
                 : fmt::format("blobs {}-{}", grp.blobs.back(), grp.blobs.front());
    l.parameters = grp.elements;
    for (int id : grp.blobs)
      if (id % 2 == 1) l.backward_s += compute.blobs[static_cast<size_t>(id)].backward_s;
    p.layers.push_back(l);
  }
  return p;
}

MeasuredTrace bcaffe_trace(const BcaffeLog& log) {
  MeasuredTrace t;
  t.file = log.file;
  t.format = "bcaffe";
  t.world_size = log.ranks;
  t.device = "Tesla K80 (B-Caffe cluster, 10 GbE)";
  MeasuredStep st;
  for (size_t i = 0; i + 1 < log.blobs.size(); i += 2) st.compute_s += log.blobs[i].backward_s;
  auto groups = bcaffe_groups(log);
  int index = 0;
  for (const auto& g : groups) {
    MeasuredCollective c;
    c.step = 0;
    c.index = index++;
    c.name = "allreduce";
    c.bytes = static_cast<double>(g.elements) * 4;
    c.time_s = g.allreduce_s;
    c.group_size = log.ranks;
    c.detail = g.blobs.size() == 1 ? fmt::format("blob {}", g.blobs[0])
                                   : fmt::format("blobs {}-{}", g.blobs.back(), g.blobs.front());
    st.comm_s += c.time_s;
    t.collectives.push_back(c);
  }
  st.time_s = st.compute_s + st.comm_s;
  t.steps.push_back(st);
  t.notes.push_back(
      "B-Caffe log: no wall-clock iteration time; the one step is composed of measured parts: "
      "compute_s = summed backward time of the layers (each layer's time once, not per blob), "
      "comm_s = summed allreduce times (each measured alone), time_s = their sum (backward "
      "and allreduces without overlap); forward times are not in the log");
  t.notes.push_back(
      "a blob with allreduce time 0 was sent with the next blob in backward order (merged)");
  return t;
}

}  // namespace sgdsim
