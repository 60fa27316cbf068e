// libFuzzer entry point of the "scenario" target (its body: sgdsim::fuzz::scenario in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::scenario(data, size);
  return 0;
}
