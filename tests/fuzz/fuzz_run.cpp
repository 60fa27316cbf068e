// libFuzzer entry point of the "run" target (its body: sgdsim::fuzz::run in run_target.hpp).
#include <cstddef>
#include <cstdint>

#include "run_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::run(data, size);
  return 0;
}
