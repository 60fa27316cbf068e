// PipeDream profiler graphs (graph.txt: per-layer forward/backward times and sizes) as a
// measured format and as the profile they imply. Left out: PipeDream's stage partitioning.
#include <fmt/format.h>

#include "sim/trace/importer.hpp"
#include "sim/trace/pipedream.hpp"

namespace sgdsim {
namespace {

class PipeDreamImporter : public Importer {
 public:
  std::string name() const override { return "pipedream"; }
  std::string summary() const override {
    return "PipeDream profiler graph.txt (per-layer forward/backward times)";
  }
  int detect_order() const override { return 20; }
  bool detects(const FileHead& h) const override {
    return h.text.find(" -- forward_compute_time=") != std::string::npos;
  }
  std::vector<Param> params() const override {
    return {{.key = "batch_size",
             .type = ParamType::integer,
             .brief = "batch size when the graph has no Linear layer to derive it from",
             .default_text = "from the Linear layers",
             .min = 1}};
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    return pipedream_trace(read_pipedream_graph(path), int_option(o, "batch_size", 0));
  }
  bool derives_profile() const override { return true; }
  DerivedProfile to_profile(const MeasuredTrace& t, const ParamValues& o) const override {
    Profile p = pipedream_profile(read_pipedream_graph(t.file), int_option(o, "batch_size", 0));
    return {profile_json_text(
                p,
                "Converted from a PipeDream profiler graph by sgdsim trace: layers in forward "
                "order (Kahn topological sort, ties by node id), Input nodes and parameter-free "
                "zero-time nodes dropped, parameters = parameter_size / 4, batch size from the "
                "Linear layers' activation sizes."),
            fmt::format("PipeDream profile, {} layers, {} parameters, batch size {}",
                        p.layers.size(), p.total_parameters(), p.batch_size)};
  }
};

const ImporterRegistration pipedream_registration{std::make_unique<PipeDreamImporter>()};

}  // namespace
}  // namespace sgdsim
