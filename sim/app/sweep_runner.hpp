#pragma once
/// Execution of sweep runs: `sgdsim run` child processes (one SimGrid engine per process),
/// executors that host them (this machine, or MPI ranks in sgdsim_mpi_sweep), and the driver
/// that hands out runs, skips completed ones, reports progress and writes the results files.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/app/sweep.hpp"

namespace sgdsim {

/// What an executor reports for a task that ended.
struct RunOutcome {
  size_t index = 0;     ///< position of the run in the sweep
  nlohmann::json line;  ///< the results.jsonl line (status "ok" or "failed")
  bool interrupted =
      false;          ///< stopped by SIGINT/SIGTERM/SIGHUP: not a result, runs again on resume
  double wall_s = 0;  ///< wall time of the child process
};

/// A place where runs execute: child processes here, or remote MPI ranks.
class Executor {
 public:
  virtual ~Executor() = default;
  /// How many more tasks may start now.
  virtual int free_slots() = 0;
  /// Starts a task (only when free_slots() > 0).
  virtual void start(const RunTask& task) = 0;
  /// The tasks that ended since the last call; never blocks.
  virtual std::vector<RunOutcome> poll() = 0;
  /// Tasks started and not yet reported by poll().
  virtual int running() const = 0;
  /// Stops every running task (SIGTERM to the children) and waits for them.
  virtual void abort() = 0;
};

/// Runs tasks as `sgdsim run` child processes of this process, at most `jobs` at once.
/// A run's folder holds sweep-scenario.json (its input), the run's outputs, sweep.log (the
/// child's stdout and stderr) and, after success, sweep-key (its resume key).
class LocalPool : public Executor {
 public:
  /// `sgdsim_binary` is the executable started as `sgdsim run ...`; `run_args` are added to
  /// every `sgdsim run` command line (e.g. `--time-limit 10min`).
  LocalPool(std::string sgdsim_binary, int jobs, std::vector<std::string> run_args = {});
  /// A command-line entry point (`dispatch` of sim/app/commands) called with
  /// {"run", SCENARIO, "--out", DIR, "--quiet", run_args...}.
  using RunFunction = std::function<int(const std::vector<std::string>&)>;
  /// Runs each task in a forked child of this process that calls `run` (the Python module:
  /// the interpreter is not an sgdsim binary). Logs, results and outcomes are as above.
  LocalPool(RunFunction run, int jobs, std::vector<std::string> run_args = {});
  /// Stops children still running.
  ~LocalPool() override;
  LocalPool(const LocalPool&) = delete;
  LocalPool& operator=(const LocalPool&) = delete;
  /// `jobs` minus the running children.
  int free_slots() override;
  /// Writes the run's scenario and starts `sgdsim run` on it.
  void start(const RunTask& task) override;
  /// Reaps children that ended and turns each into a result line.
  std::vector<RunOutcome> poll() override;
  /// Running children.
  int running() const override { return static_cast<int>(children_.size()); }
  /// SIGTERM to every child, SIGKILL after 5 s, and waits for all of them.
  void abort() override;

 private:
  struct Child {
    pid_t pid;
    RunTask task;
    double start_s;
  };
  /// Starts the child of `task` (spawned binary, or forked run_) and returns its pid.
  pid_t launch(const RunTask& task, const std::string& scenario, const std::string& log);
  std::string binary_;
  RunFunction run_;
  int jobs_;
  std::vector<std::string> run_args_;
  std::vector<Child> children_;
};

/// The signal (SIGINT, SIGTERM or SIGHUP) received since install_sweep_signal_handlers(), or 0.
int sweep_interrupt_signal();
/// Makes SIGINT, SIGTERM and SIGHUP only set a flag that sweep loops poll (replacing the
/// handlers of install_interrupt_cleanup(): result files are written atomically anyway).
void install_sweep_signal_handlers();
/// Sleeps about `ms` milliseconds (returns early on a signal).
void sweep_nap(int ms);

/// The path of the running executable (/proc/self/exe).
std::filesystem::path self_executable();

/// How a sweep is driven.
struct SweepOptions {
  std::filesystem::path out_dir;  ///< DIR: results.jsonl, results.csv, runs/<name>/
  bool quiet = false;             ///< no progress on stderr, no summary on stdout
  bool overwrite = false;         ///< write into folders holding files sgdsim did not write
};

/// Runs every run of `sweep` not already completed in out_dir (same name and key) on the
/// executors, records each result in sweep order, shows progress on stderr and keeps
/// results.jsonl / results.csv up to date (atomic rewrites, at least every 2 s and at the end
/// or on SIGINT/SIGTERM). Returns 0 if every run succeeded, 1 if some failed or were
/// interrupted, 128 + signal if the sweep itself was interrupted.
int drive_sweep(const Sweep& sweep, const SweepOptions& options,
                const std::vector<Executor*>& executors);

}  // namespace sgdsim
