// OSU micro-benchmark allreduce logs (osu_allreduce), or any plain "bytes latency" /
// "nodes,bytes latency" table, as a measured format: one allreduce per message size with its
// average latency. Left out: the min/max latency columns.
#include "sim/trace/import.hpp"
#include "sim/trace/importer.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {
namespace {

/// Whether the first non-comment line is two numbers (the size possibly after "nodes,").
bool starts_with_number_table(std::string_view head) {
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    std::string_view line = text::trim(
        head.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    if (line.empty() || line.front() == '#') continue;
    auto t = text::split_ws(line);
    double x = 0;
    std::string_view size = t.empty() ? std::string_view() : t[0];
    if (auto c = size.find(','); c != std::string_view::npos) size = size.substr(c + 1);
    return t.size() >= 2 && text::parse_double(size, x) && text::parse_double(t[1], x);
  }
  return false;
}

class OsuImporter : public Importer {
 public:
  std::string name() const override { return "osu"; }
  std::string summary() const override {
    return "OSU MPI allreduce latency log: latency per message size";
  }
  int detect_order() const override { return 50; }
  bool detects(const FileHead& h) const override {
    return h.text.find("OSU MPI") != std::string::npos || starts_with_number_table(h.text);
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    return osu_trace(read_osu_log(path, int_option(o, "ranks", 0)));
  }
  std::optional<CaseKind> case_kind() const override { return CaseKind::latency; }
};

const ImporterRegistration osu_registration{std::make_unique<OsuImporter>()};

}  // namespace
}  // namespace sgdsim
