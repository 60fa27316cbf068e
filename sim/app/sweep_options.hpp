#pragma once
/// The options of `sgdsim sweep` and `sgdsim_mpi_sweep`: parsed, checked, and their help.
#include <filesystem>
#include <string>
#include <vector>

namespace sgdsim {

/// Options of `sgdsim sweep` and `sgdsim_mpi_sweep`.
struct SweepCommand {
  std::string sweep_file;         ///< the sweep file
  std::filesystem::path out_dir;  ///< --out (default results/<sweep file stem>)
  int jobs = 1;                   ///< -j: child processes at once (per rank under MPI)
  bool quiet = false;             ///< --quiet
  bool list = false;              ///< --list: print the runs and exit
  std::string sgdsim_binary;      ///< --sgdsim: executable run as `sgdsim run` (or empty)
  std::vector<std::string> cfg;   ///< --cfg: SimGrid options added to every run's simgrid_cfg
  std::string run_time_limit;     ///< --run-time-limit: each run's --time-limit (or empty)
  bool overwrite = false;         ///< --overwrite: write into folders holding foreign files
};

/// The options every `sgdsim run` of the sweep gets (`--time-limit T` from --run-time-limit,
/// `--overwrite`).
std::vector<std::string> run_args(const SweepCommand& c);

/// The help text of `sgdsim sweep` (`program` names the executable in the usage line).
std::string sweep_help(const std::string& program);

/// Parses the arguments after "sweep" (or of sgdsim_mpi_sweep); throws InputError on misuse.
SweepCommand parse_sweep_command(const std::vector<std::string>& argv);

}  // namespace sgdsim
