// libFuzzer entry point of the "profile" target (its body: sgdsim::fuzz::profile in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::profile(data, size);
  return 0;
}
