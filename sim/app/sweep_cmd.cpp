// `sgdsim sweep`: expands a sweep file and runs its runs as parallel `sgdsim run` processes,
// resumably: exit 0 when every run is ok, 1 when some run failed, 2 for bad input, 128 + signal
// when interrupted.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "sim/app/cli.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/app/sweep.hpp"
#include "sim/app/sweep_options.hpp"
#include "sim/app/sweep_runner.hpp"
#include "sim/core/errors.hpp"

namespace fs = std::filesystem;

namespace sgdsim {
namespace {

int mpi_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

int list_runs(const Sweep& sweep, const fs::path& out) {
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    const SweepRun& r = sweep.runs[i];
    std::string state = !r.error.empty()                           ? "invalid: " + r.error
                        : completed_line(make_task(sweep, i, out)) ? "done"
                                                                   : "to run";
    std::cout << r.name << "\t" << state << "\n";
  }
  return 0;
}

/// `sgdsim sweep`; under mpirun with several ranks it execs sgdsim_mpi_sweep (next to sgdsim).
int cmd_sweep(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << sweep_help("sgdsim sweep"), 0;
  SweepCommand c = parse_sweep_command(argv);
  if (mpi_world_size() > 1 && !c.list) {
    // Under mpirun: the ranks share the runs through sgdsim_mpi_sweep.
    fs::path self = self_executable();
    fs::path mpi = self.parent_path() / "sgdsim_mpi_sweep";
    if (::access(mpi.c_str(), X_OK) != 0)
      throw InputError("usage: sgdsim sweep under mpirun needs " + mpi.string() +
                       " (built when Open MPI is installed: apt-get install libopenmpi-dev)");
    std::vector<std::string> args = {mpi.string()};
    args.insert(args.end(), argv.begin(), argv.end());
    if (c.sgdsim_binary.empty()) args.insert(args.end(), {"--sgdsim", self.string()});
    std::vector<char*> cargv;
    for (auto& s : args) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    ::execv(mpi.c_str(), cargv.data());
    throw std::runtime_error("cannot run " + mpi.string());
  }
  Sweep sweep = load_sweep(c.sweep_file, c.cfg);
  if (c.list) return list_runs(sweep, c.out_dir);
  install_sweep_signal_handlers();
  LocalPool pool(c.sgdsim_binary.empty() ? self_executable().string() : c.sgdsim_binary, c.jobs,
                 run_args(c));
  return drive_sweep(sweep, SweepOptions{c.out_dir, c.quiet, c.overwrite}, {&pool});
}

const RegisterSubcommand kSweep({"sweep", "sweep SWEEP.json",
                                 "run a grid/zip/list of scenario variants in parallel processes "
                                 "(resumable)",
                                 20, cmd_sweep});

}  // namespace

}  // namespace sgdsim
