// libFuzzer entry point of the "bcaffe" target (its body: sgdsim::fuzz::bcaffe in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::bcaffe(data, size);
  return 0;
}
