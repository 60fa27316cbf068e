// B-Caffe per-parameter-blob logs (shyhuai/B-Caffe logdata/tmp*comm.log) as a measured format:
// per-layer backward and communication times, and the profile they imply. Left out: forward
// times, which the logs do not hold.
#include <fmt/format.h>

#include "sim/trace/bcaffe.hpp"
#include "sim/trace/importer.hpp"

namespace sgdsim {
namespace {

class BcaffeImporter : public Importer {
 public:
  std::string name() const override { return "bcaffe"; }
  std::string summary() const override {
    return "B-Caffe per-parameter-blob log (shyhuai/B-Caffe logdata/tmp*comm.log)";
  }
  int detect_order() const override { return 40; }
  bool detects(const FileHead& h) const override {
    return h.text.find("distributed.cpp") != std::string::npos;
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    return bcaffe_trace(read_bcaffe_log(path, int_option(o, "ranks", 0)));
  }
  std::optional<CaseKind> case_kind() const override { return CaseKind::per_layer; }
  bool derives_profile() const override { return true; }
  DerivedProfile to_profile(const MeasuredTrace& t, const ParamValues&) const override {
    Profile p = bcaffe_profile(read_bcaffe_log(t.file, t.world_size));
    return {profile_json_text(p,
                              "Backward time per layer measured on a K80; forward times are not "
                              "in the log (0 here). Parameter counts include B-Caffe's padding "
                              "to multiples of 64."),
            fmt::format("B-Caffe profile, {} layers, {} parameters", p.layers.size(),
                        p.total_parameters())};
  }
};

const ImporterRegistration bcaffe_registration{std::make_unique<BcaffeImporter>()};

}  // namespace
}  // namespace sgdsim
