#pragma once
/// Runs a simulation in a forked child so that SimGrid dying during the run (xbt_die, a failed
/// xbt_assert, an uncaught exception, SIGSEGV) becomes one error line and exit code 2 instead
/// of a backtrace and a core: SimGrid 3.32 aborts the process on such errors, so only a
/// disposable process can run it.
#include <functional>
#include <string>

#include "sim/core/files.hpp"

namespace sgdsim {

/// What the parent names when the child dies.
struct IsolatedRun {
  std::string what;      ///< the input named in the error line (scenario, platform file)
  OutputFolder* folder;  ///< the run's output folder (its temporary and new files go)
  bool created_folder;   ///< the run created the folder: a crash removes it if empty
};

/// Forks; the child runs `body` (exit code = its return value, 2 after an InputError, 1 after
/// another exception, with the usual "sgdsim: error:" line) with stderr through a pipe the
/// parent forwards. If the child dies of a signal, the parent drops SimGrid's dying words,
/// removes the child's temporary files (and the new folder), prints one line
/// "sgdsim: error: WHAT: SimGrid failed during the run: MESSAGE" and returns 2. SIGINT,
/// SIGTERM and SIGHUP sent to the parent are passed on to the child; the child gets SIGTERM if
/// the parent dies. A body that returns 0 but could not write its standard output (a full
/// disk, /dev/full) exits 1 with one line saying so.
int run_isolated(const IsolatedRun& run, const std::function<int()>& body);

}  // namespace sgdsim
