// The options and help of `sgdsim sweep`, shared with sgdsim_mpi_sweep.
#include "sim/app/sweep_options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "sim/app/cli.hpp"
#include "sim/app/sweep.hpp"
#include "sim/app/sweep_runner.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace fs = std::filesystem;

namespace sgdsim {

std::string sweep_help(const std::string& program) {
  return fmt::format(
      R"(usage: {} SWEEP.json [--out DIR] [-j N] [--quiet] [--list]

Runs every run of a sweep file, each as its own `sgdsim run` process (one SimGrid engine per
process), N at a time. A sweep file is
  {{"base": "scenario.json" or {{...inline scenario...}},
   "grid": {{"workers.count": [2, 4, 8], "scheme.type": ["sync", "pseudo_sync"]}},
   "zip":  {{"platform.generate.nodes": [2, 4], "workers.count": [8, 16]}},
   "list": [{{"scheme.type": "async", "scheme.servers": 4}}, {{}}],
   "repeat": 1, "description": "..."}}
with dotted paths as in --set; runs are grid (cartesian, first path slowest) x zip (equal-length
lists taken together) x list (explicit override sets) x repeat; paths relative to the sweep
file. With "repeat": R > 1, repetition r (0-based) runs with seed = base seed + r. Each run is
named by its values, e.g. "workers.count=8,scheme.type=sync" (characters outside
[A-Za-z0-9._+-] become '_'; "base" for no override; ",seed=S" with repeat).

Writes DIR/runs/<name>/ (the run's outputs, sweep-scenario.json, sweep.log, sweep-key) and
DIR/results.jsonl (one line per run in sweep order: its summary.json plus "run", "params",
"status" ok|failed, "key" and "error") and DIR/results.csv (one row per run: run, status,
error, key, params.<path>..., then the summary's scalar fields flattened with '.'), both
rewritten atomically as runs finish. A run whose folder holds summary.json and a sweep-key
equal to its key (a hash of its resolved scenario and profile/platform contents) is not run
again: re-running an interrupted or partly failed sweep runs only what is missing or failed.
SIGINT/SIGTERM/SIGHUP stop the running children and leave the finished results in place;
the children end with the sweep even when it is killed (SIGKILL).

  --out DIR     output folder (default results/<sweep file name>)
  -j, --jobs N  runs at once (default: number of processors)
  --quiet       no progress on stderr, no summary line on stdout
  --cfg NAME:VALUE  a SimGrid option for every run (repeatable; added to each run's
                "simgrid_cfg", so it is part of the run's key and its scenario.resolved.json)
  --run-time-limit T  each run's wall-clock limit (`sgdsim run --time-limit T`: "600",
                "10min"); a run over it is recorded as failed, the others go on
  --list        print each run's name and state (done, to run, invalid: ...) and exit
  --overwrite   write into DIR and run folders that hold files sgdsim did not write (every
                folder lists what sgdsim wrote in .sgdsim-manifest; others are refused)

exit codes: 0 every run ok, 1 some run failed (see results.jsonl), 2 bad sweep file or
options, 128 + signal when interrupted.
Under mpirun (Open MPI) `sgdsim sweep` hands over to sgdsim_mpi_sweep: rank 0 hands out the
runs, every rank runs N of them at a time (the output folder must be shared).
)",
      program);
}

SweepCommand parse_sweep_command(const std::vector<std::string>& argv) {
  Args a = parse_args(argv, {"--out", "-j", "--jobs", "--sgdsim", "--cfg", "--run-time-limit"},
                      {"--quiet", "--list", "--overwrite"});
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim sweep SWEEP.json [--out DIR] [-j N] (see --help)");
  SweepCommand c;
  c.sweep_file = a.positional[0];
  c.out_dir =
      a.get("--out").value_or((fs::path("results") / fs::path(c.sweep_file).stem()).string());
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  c.jobs = cpus > 0 ? static_cast<int>(cpus) : 1;
  for (const char* opt : {"-j", "--jobs"})
    c.jobs = static_cast<int>(int_option(a, opt, c.jobs, 1, 4096, "an integer between 1 and 4096"));
  c.quiet = a.has("--quiet");
  c.list = a.has("--list");
  c.overwrite = a.has("--overwrite");
  c.sgdsim_binary = a.get("--sgdsim").value_or("");
  c.cfg = a.all("--cfg");
  if (auto v = a.get("--run-time-limit")) {
    // Checked here so a bad value fails the sweep, not each run.
    (void)parse_time_option("--run-time-limit", *v);
    c.run_time_limit = *v;
  }
  check_cfg_options(c.cfg);
  return c;
}

std::vector<std::string> run_args(const SweepCommand& c) {
  std::vector<std::string> args;
  if (!c.run_time_limit.empty()) args = {"--time-limit", c.run_time_limit};
  if (c.overwrite) args.push_back("--overwrite");
  return args;
}

}  // namespace sgdsim
