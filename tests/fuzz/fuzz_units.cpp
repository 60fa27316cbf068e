// libFuzzer entry point of the "units" target (its body: sgdsim::fuzz::units in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::units(data, size);
  return 0;
}
