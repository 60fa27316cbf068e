// libFuzzer entry point of the "platform" target (its body: sgdsim::fuzz::platform in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::platform(data, size);
  return 0;
}
