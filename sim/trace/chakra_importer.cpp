// One rank's Chakra execution trace (.et, protobuf; ASTRA-sim's workload format) as a measured
// format. Told by its file name, since it is binary. Left out: what chakra.cpp leaves out.
#include "sim/trace/chakra.hpp"
#include "sim/trace/importer.hpp"

namespace sgdsim {
namespace {

class ChakraImporter : public Importer {
 public:
  std::string name() const override { return "chakra"; }
  std::string summary() const override {
    return "one rank's Chakra execution trace (.et, protobuf; ASTRA-sim's workload format)";
  }
  int detect_order() const override { return -1; }  // before the text formats peek at it
  bool detects(const FileHead& h) const override { return looks_like_chakra(h.path); }
  MeasuredTrace import(const std::string& path, const ParamValues&) const override {
    return chakra_trace(path);
  }
};

const ImporterRegistration chakra_registration{std::make_unique<ChakraImporter>()};

}  // namespace
}  // namespace sgdsim
