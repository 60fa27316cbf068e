// libFuzzer entry point of the "pipedream" target (its body: sgdsim::fuzz::pipedream in
// targets.hpp).
#include <cstddef>
#include <cstdint>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sgdsim::fuzz::pipedream(data, size);
  return 0;
}
