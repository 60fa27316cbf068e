// An importer registered from outside sim/trace, as a user would add one: "latency-csv" reads
// a "# latency-csv" header and "bytes,time_us" lines of an allreduce benchmark, one collective
// per line, and takes part in detection, `sgdsim trace` and `sgdsim validate`. It leaves out
// everything but the average time per size.
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

  MeasuredTrace import(const std::string& path, const ImportOptions& o) const override {
    std::ifstream in(path);
    MeasuredTrace t;
    t.file = path;
    t.format = name();
    t.world_size = o.ranks;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.empty() || line[0] == '#') continue;
      MeasuredCollective c;
      char comma = 0;
      std::istringstream ss(line);
      if (!(ss >> c.bytes >> comma >> c.time_s) || comma != ',')
        throw InputError(path, "", "line " + std::to_string(n) + ": expected bytes,time_us");
      c.time_s *= 1e-6;
      c.name = "allreduce";
      c.index = static_cast<int>(t.collectives.size());
      c.group_size = o.ranks;
      t.collectives.push_back(c);
    }
    return t;
  }
};

const ImporterRegistration registration{std::make_unique<LatencyCsvImporter>()};

}  // namespace
}  // namespace sgdsim
