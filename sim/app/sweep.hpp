#pragma once
/// Sweep files (DESIGN.md §8 "Sweep file"): expansion of grid x zip x list x repeat into named
/// runs with resolved scenarios and resume keys, and the results files (results.jsonl/.csv).
/// No SimGrid here: the runs themselves execute in `sgdsim run` child processes.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sgdsim {

/// One run of a sweep: its name, swept values, scenario and resume key.
struct SweepRun {
  std::string name;                      ///< unique, filesystem-safe, e.g. "workers.count=8"
  std::vector<std::string> param_paths;  ///< swept paths of this run, in sweep order
  nlohmann::json params;                 ///< {path: value} of this run (incl. "seed" on repeat)
  nlohmann::json scenario;               ///< resolved scenario (absolute paths); null if invalid
  std::string key;                       ///< 16 hex digits identifying the resolved scenario
  std::string error;                     ///< validation error of an invalid run, else empty
};

/// A validated, expanded sweep file.
struct Sweep {
  std::string file;                      ///< the sweep file, as given
  std::string description;               ///< free text
  std::vector<std::string> param_paths;  ///< every swept path, in sweep order (CSV columns)
  std::vector<SweepRun> runs;            ///< the runs, in sweep order
};

/// Reads, validates and expands a sweep file; bad input throws InputError naming the sweep
/// file and the JSON pointer. Runs whose values fail scenario validation are kept with their
/// `error` set (they are recorded as failed, the others still run).
Sweep load_sweep(const std::string& file, const std::vector<std::string>& simgrid_cfg = {});

/// FNV-1a 64-bit hash of `data`.
uint64_t fnv1a64(std::string_view data);

/// A run name made safe for a folder name: characters outside [A-Za-z0-9._+=,-] become '_',
/// and names longer than 160 characters are cut and suffixed with a hash of the whole name.
std::string sanitize_run_name(const std::string& name);

/// One unit of work sent to an executor (serializable for MPI ranks).
struct RunTask {
  size_t index = 0;         ///< position in the sweep
  std::string name;         ///< run name
  std::string key;          ///< resume key
  nlohmann::json params;    ///< swept values
  nlohmann::json scenario;  ///< resolved scenario
  std::string run_dir;      ///< absolute output folder of the run
};

/// The task of run `index` of `sweep`, writing into `out_dir`/runs/<name>.
RunTask make_task(const Sweep& sweep, size_t index, const std::filesystem::path& out_dir);
/// RunTask to JSON.
nlohmann::json task_to_json(const RunTask& task);
/// RunTask from JSON.
RunTask task_from_json(const nlohmann::json& j);

/// A results.jsonl line: the summary (if any) plus "run", "params", "status", "key" and, for
/// failed runs, "error".
nlohmann::json result_line(const std::string& run, const nlohmann::json& params,
                           const std::string& key, const nlohmann::json* summary,
                           const std::string& error);

/// The line of a run already completed in `run_dir` with the same key (summary.json and a
/// matching sweep-key file), or nothing.
std::optional<nlohmann::json> completed_line(const RunTask& task);

/// Writes results.jsonl and results.csv into `out_dir` atomically from the recorded lines
/// (one per run in sweep order; missing runs are left out).
void write_results(const std::filesystem::path& out_dir, const Sweep& sweep,
                   const std::vector<std::optional<nlohmann::json>>& lines);

/// The CSV text of result lines: columns run, status, error, key, params.<path> in sweep
/// order, then every other scalar field flattened with '.', sorted by name.
std::string results_csv(const std::vector<std::string>& param_paths,
                        const std::vector<nlohmann::json>& lines);

}  // namespace sgdsim
