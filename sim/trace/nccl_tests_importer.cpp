// nccl-tests output (all_reduce_perf & co.) as a measured format: one collective per message
// size with its out-of-place time. Left out: in-place columns and per-rank device lines
// beyond what nccl_tests.cpp reads.
#include "sim/trace/importer.hpp"
#include "sim/trace/nccl_tests.hpp"

namespace sgdsim {
namespace {

class NcclTestsImporter : public Importer {
 public:
  std::string name() const override { return "nccl-tests"; }
  std::string summary() const override {
    return "all_reduce_perf & co. output: time per message size";
  }
  int detect_order() const override { return 30; }
  bool detects(const FileHead& h) const override {
    return h.text.find("nThread") != std::string::npos ||
           h.text.find("busbw") != std::string::npos ||
           h.text.find("out-of-place") != std::string::npos;
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    return nccl_tests_trace(read_nccl_tests_log(path, int_option(o, "ranks", 0)));
  }
  std::optional<CaseKind> case_kind() const override { return CaseKind::latency; }
};

const ImporterRegistration nccl_tests_registration{std::make_unique<NcclTestsImporter>()};

}  // namespace
}  // namespace sgdsim
