// libFuzzer entry point of the "sgdsim_timeline" target (its body: sgdsim::fuzz::sgdsim_timeline in
// targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::sgdsim_timeline(data, size);
  return 0;
}
