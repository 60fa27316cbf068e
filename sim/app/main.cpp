// sgdsim command-line interface: runs a subcommand (sim/app/commands) and maps errors to exit
// codes (0 ok, 2 bad input, 1 internal error or lost standard output).
#include <iostream>
#include <string>
#include <vector>

#include "sim/app/commands.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/process.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  sgdsim::install_interrupt_cleanup();
  sgdsim::keep_freed_memory();
  try {
    const int rc = sgdsim::dispatch(args);
    // What was printed must have arrived (`sgdsim schema > /dev/full` is no success).
    if (!sgdsim::stdout_written()) {
      std::cerr << "sgdsim: error: " << sgdsim::stdout_error() << "\n";
      return rc == 0 ? 1 : rc;
    }
    return rc;
  } catch (const sgdsim::InputError& e) {
    std::cerr << "sgdsim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sgdsim: internal error: " << e.what() << "\n";
    return 1;
  }
}
