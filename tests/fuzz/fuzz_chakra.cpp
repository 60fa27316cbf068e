// libFuzzer entry point of the "chakra" target (its body: sgdsim::fuzz::chakra in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::chakra(data, size);
  return 0;
}
