// libFuzzer entry point of the "nccl_tests" target (its body: sgdsim::fuzz::nccl_tests in
// targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::nccl_tests(data, size);
  return 0;
}
