// libFuzzer entry point of the "kineto" target (its body: sgdsim::fuzz::kineto in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::kineto(data, size);
  return 0;
}
