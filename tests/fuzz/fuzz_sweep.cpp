// libFuzzer entry point of the "sweep" target (its body: sgdsim::fuzz::sweep in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::sweep(data, size);
  return 0;
}
