// An importer registered from outside sim/trace, as a user would add one: "latency-csv" reads
// a "# latency-csv" header and "bytes,time" lines of an allreduce benchmark, one collective
// per line, and takes part in detection, `sgdsim trace` and `sgdsim validate`. Its own option
// `time_unit` (declared here, nowhere else: `--time-unit` of `sgdsim trace`, "time_unit" of a
// validation case's source) says what the time column counts in. It leaves out everything but
// the average time per size.
#include <fstream>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/trace/importer.hpp"

namespace sgdsim {
namespace {

class LatencyCsvImporter final : public Importer {
 public:
  std::string name() const override { return "latency-csv"; }
  std::string summary() const override { return "\"# latency-csv\" then bytes,time_us lines"; }
  int detect_order() const override { return 5; }
  bool detects(const FileHead& h) const override { return h.body.rfind("# latency-csv", 0) == 0; }
  std::optional<CaseKind> case_kind() const override { return CaseKind::latency; }
  std::vector<Param> params() const override {
    return {{.key = "time_unit",
             .type = ParamType::choice,
             .default_value = "us",
             .brief = "what the time column counts in",
             .choices = {"us", "ms", "s"}}};
  }

  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    std::ifstream in(path);
    MeasuredTrace t;
    t.file = path;
    t.format = name();
    t.world_size = int_option(o, "ranks", 0);
    const std::string& unit = o.text("time_unit");  // its default when not given
    const double seconds = unit == "s" ? 1 : unit == "ms" ? 1e-3 : 1e-6;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.empty() || line[0] == '#') continue;
      MeasuredCollective c;
      char comma = 0;
      std::istringstream ss(line);
      if (!(ss >> c.bytes >> comma >> c.time_s) || comma != ',')
        throw InputError(path, "", "line " + std::to_string(n) + ": expected bytes,time");
      c.time_s *= seconds;
      c.name = "allreduce";
      c.index = static_cast<int>(t.collectives.size());
      c.group_size = t.world_size;
      t.collectives.push_back(c);
    }
    return t;
  }
};

const ImporterRegistration registration{std::make_unique<LatencyCsvImporter>()};

}  // namespace
}  // namespace sgdsim
