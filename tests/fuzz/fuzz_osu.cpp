// libFuzzer entry point of the "osu" target (its body: sgdsim::fuzz::osu in targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::osu(data, size);
  return 0;
}
