// Fault injection for tests (LD_PRELOAD): SimGrid dying in the middle of a run. Interposes
// simgrid::s4u::Engine::get_clock(), which the engine calls as each task starts and ends, and
// on call number SGDSIM_FAULT_AFTER (default 50) does what SGDSIM_FAULT says: "die" (SimGrid's
// own xbt_die: a critical log line, then abort), "assert" (a failed xbt_assert: the line and a
// backtrace), "segv" (a null write) or "terminate" (an exception nobody catches). Before that
// it returns SimGrid's clock. Not linked into sgdsim; it models nothing about SimGrid's errors
// beyond how the process dies.
#include <dlfcn.h>
#include <xbt/asserts.h>
#include <xbt/log.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

XBT_LOG_NEW_DEFAULT_CATEGORY(sgdsim_fault, "sgdsim fault injection");

namespace simgrid::s4u {
class Engine {
 public:
  static double get_clock();
};
}  // namespace simgrid::s4u

namespace {
// A real invalid store, unseen by UBSan's null check (which would stop the process first under
// make sanitize): the SIGSEGV path is what is tested.
__attribute__((no_sanitize("undefined", "address"))) void store_through_null() {
  volatile int* p = nullptr;
  *p = 1;
}
}  // namespace

double simgrid::s4u::Engine::get_clock() {
  using Clock = double (*)();
  static Clock real =
      reinterpret_cast<Clock>(dlsym(RTLD_NEXT, "_ZN7simgrid3s4u6Engine9get_clockEv"));
  static long calls = 0;
  static const long after =
      std::getenv("SGDSIM_FAULT_AFTER") ? std::atol(std::getenv("SGDSIM_FAULT_AFTER")) : 50;
  const char* fault = std::getenv("SGDSIM_FAULT");
  if (fault != nullptr && ++calls == after) {
    if (std::strcmp(fault, "die") == 0) xbt_die("fault injected after %ld clock reads", calls);
    if (std::strcmp(fault, "assert") == 0) xbt_assert(calls < 0, "injected assertion failure");
    if (std::strcmp(fault, "segv") == 0) store_through_null();
    if (std::strcmp(fault, "terminate") == 0) std::terminate();
  }
  return real();
}
