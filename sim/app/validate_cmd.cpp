// sgdsim validate: for every target of every case, derive a scenario from the calibration
// source, simulate it in a child `sgdsim run` (one SimGrid engine per process), read back its
// summary.json and timeline.json, and compare with the measurements.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/cli.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/process.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/trace/sgdsim_timeline.hpp"
#include "sim/trace/validation.hpp"

namespace sgdsim {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kValidateHelpHead =
    R"(usage: sgdsim validate CASE.json... [--out DIR] [--quiet]

Simulates validation cases and compares them with the measurements. A case (JSON) names a
calibration source, the measured targets to predict, and optional scenario fields:

  {"name": "bcaffe-googlenet", "description": "...", "source": "where the data comes from",
   "calibration": {"file": "tmp2comm.log", "format": "bcaffe", "ranks": 2},
   "network": {"file": "allreduce2.log", "format": "osu"},        (optional)
   "algorithm": "ring", "min_bytes": "64KiB",                       (optional)
   "targets": [{"name": "4 nodes", "file": "tmp4comm.log", "format": "bcaffe", "ranks": 4}],
   "scenario": {"iterations": 5}}                                   (optional)

Paths are relative to the case file. Formats: @FORMATS@; all targets of a case are of one kind.
A source's "format" is detected when absent; its other keys are the options of its format
(declared by the formats, as the flags of `sgdsim trace`; a format refuses another's; "skip" is
0 unless given: every measured step is compared):
@OPTIONS@Calibration (the only source of tuning):
  network   alpha and beta of the algorithm's formula, fitted by relative least squares to
            the calibration source's collectives (sizes >= min_bytes; default 64KiB for
            latency benchmarks, else 0), or to "network" if given; simulated on a star with
            network_model "ideal" (node_link latency alpha/2, bandwidth 1/beta)
  compute   traces: one profile layer per DDP gradient bucket, backward time between bucket
            launches, forward = step start to first backward op, update = time after the last
            allreduce (medians over the calibration trace's steps); bcaffe: per-layer backward
            times of the calibration log, allreduce layout of the target; latency: none
For each target the derived scenario (scenario.json + profile.json, with the case's "scenario"
fields merged over it) is simulated with `sgdsim run` into DIR/<case>/<target>/, and compared:
iteration time (mean of measured steps vs simulated steady-state mean), communication per
iteration, and every measured collective against its simulated bucket.

Prints a Markdown table (case, metric, measured, simulated, error %) and writes
DIR/validation.json: {"cases": [{"name","case","target","metric","what","in_sample",
"measured_s","simulated_s","error"}], "median_abs_error" (iteration rows; all summary rows if
there is none), "median_abs_error_out_of_sample", "median_abs_error_by_metric", "targets",
"calibrations", "steps", "collectives"}.

)";

const std::vector<OptionSpec> kValidateOptions = {
    {"--out", "DIR", "output folder (default results/validation)"},
    {"--quiet", "", "no table on stdout"},
};

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "target" : out;
}

std::string self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot locate the sgdsim executable (/proc/self/exe)");
  return p.string();
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

/// Runs `sgdsim run SCENARIO --out OUT --quiet` in a child process, output to LOG.
void run_child(const fs::path& scenario, const fs::path& out, const fs::path& log,
               const std::string& what) {
  const std::string exe = self_exe();
  const pid_t pid =
      spawn_logged({exe, "run", scenario.string(), "--out", out.string(), "--quiet"}, log.string());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string msg;
  try {
    msg = last_line(read_file(log));
  } catch (const std::exception&) {
  }
  const std::string prefix = "sgdsim: error: ";
  if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
    throw InputError(what + ": the derived scenario was rejected: " + msg);
  throw std::runtime_error(what + ": simulation failed (" +
                           (WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status))) +
                           "): " + msg + " (log: " + log.string() + ")");
}

/// A time in the validation table ("-" when not measured).
std::string table_time(double s) {
  if (!std::isfinite(s)) return "-";
  if (s >= 1.0) return fmt::format("{:.4f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

std::string pct(double e) {
  return std::isfinite(e) ? fmt::format("{:+.1f} %", 100 * e) : "-";
}

json number_or_null(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

struct TargetRecord {
  std::string case_name, target, file, dir;
  int ranks = 0;
  bool in_sample = false;
  TargetComparison cmp;
};

}  // namespace

/// What validation.json records of a case's calibration.
json calibration_json(const ValidationCase& c, const CaseCalibration& cal) {
  return {{"case", c.name},
          {"file", cal.network_file},
          {"algorithm", cal.network.algorithm},
          {"ranks", cal.network.ranks},
          {"min_bytes", cal.network.min_bytes},
          {"points", cal.network.points},
          {"alpha_s", cal.network.alpha_s},
          {"beta_s_per_byte", cal.network.beta_s_per_byte},
          {"bandwidth_Bps", 1.0 / cal.network.beta_s_per_byte},
          {"alpha_clamped", cal.network.alpha_clamped},
          {"fit_median_abs_rel_error", cal.network.median_abs_rel_error},
          {"compute_file", c.calibration.file},
          {"update_s", cal.update_s}};
}

/// Simulates every target of `c` in its own `sgdsim run` process under `out`.
void simulate_targets(const ValidationCase& c, const CaseCalibration& cal, const fs::path& out,
                      bool tty, std::vector<TargetRecord>& records) {
  std::vector<std::string> used_dirs;
  for (const auto& target : c.targets) {
    PreparedTarget t = prepare_target(c, cal, target);
    std::string name = slug(target.name);
    while (std::find(used_dirs.begin(), used_dirs.end(), name) != used_dirs.end()) name += "_";
    used_dirs.push_back(name);
    const fs::path dir = out / slug(c.name) / name;
    const std::string what = "case " + c.name + ", target " + target.name;
    json summary;
    MeasuredTrace simulated;
    try {
      fs::create_directories(dir);
      write_file_atomic(dir / "profile.json", t.profile_text);
      write_file_atomic(dir / "scenario.json", t.scenario.dump(2) + "\n");
      if (tty) std::cerr << "\r\033[K  simulating " << what << std::flush;
      run_child(dir / "scenario.json", dir / "run", dir / "run.log", what);
      summary = parse_json_file((dir / "run" / "summary.json").string());
      simulated = read_sgdsim_timeline((dir / "run" / "timeline.json").string());
    } catch (const InputError&) {
      // A rejected target leaves none of its files (the error says what was wrong); an internal
      // failure keeps them beside the log its message names.
      std::error_code ec;
      for (const char* f : {"profile.json", "scenario.json", "run.log"}) fs::remove(dir / f, ec);
      fs::remove(dir, ec);  // only if empty
      fs::remove(dir.parent_path(), ec);
      throw;
    }
    TargetRecord r;
    r.case_name = c.name;
    r.target = target.name;
    r.file = target.file;
    r.dir = dir.string();
    r.ranks = t.ranks;
    r.in_sample = t.in_sample;
    r.cmp = compare_target(c, t, summary, simulated);
    records.push_back(std::move(r));
  }
}

/// The rows of every target, by kind, and their medians.
struct ValidationSummary {
  std::vector<ValidationRow> summary_rows, step_rows, coll_rows;
  double med_iter = 0, med_iter_oos = 0, med_comm = 0, med_coll = 0, headline = 0;
};

ValidationSummary summarize(const std::vector<TargetRecord>& records) {
  ValidationSummary v;
  auto& summary_rows = v.summary_rows;
  auto& step_rows = v.step_rows;
  auto& coll_rows = v.coll_rows;
  for (const auto& r : records) {
    summary_rows.insert(summary_rows.end(), r.cmp.summary.begin(), r.cmp.summary.end());
    step_rows.insert(step_rows.end(), r.cmp.steps.begin(), r.cmp.steps.end());
    coll_rows.insert(coll_rows.end(), r.cmp.collectives.begin(), r.cmp.collectives.end());
  }
  v.med_iter = median_abs_error(summary_rows, "iteration");
  v.med_iter_oos = median_abs_error(summary_rows, "iteration", true);
  v.med_comm = median_abs_error(summary_rows, "comm");
  v.med_coll = median_abs_error(coll_rows, "collective");
  v.headline = std::isfinite(v.med_iter) ? v.med_iter : median_abs_error(summary_rows, "");
  return v;
}

/// validation.json: cases, medians, targets, calibrations, steps and collectives.
json validation_json(const ValidationSummary& v, const std::vector<TargetRecord>& records,
                     const json& calibrations, const std::vector<std::string>& case_files) {
  const auto& [summary_rows, step_rows, coll_rows, med_iter, med_iter_oos, med_comm, med_coll,
               headline] = v;
  json j;
  j["cases"] = json::array();
  for (const auto& r : summary_rows) j["cases"].push_back(row_to_json(r));
  j["median_abs_error"] = number_or_null(headline);
  j["median_abs_error_metric"] = std::isfinite(med_iter) ? "iteration" : "all";
  j["median_abs_error_out_of_sample"] = number_or_null(med_iter_oos);
  j["median_abs_error_by_metric"] = {{"iteration", number_or_null(med_iter)},
                                     {"comm", number_or_null(med_comm)},
                                     {"collective", number_or_null(med_coll)}};
  j["targets"] = json::array();
  for (const auto& r : records)
    j["targets"].push_back(
        {{"case", r.case_name},
         {"target", r.target},
         {"file", r.file},
         {"ranks", r.ranks},
         {"in_sample", r.in_sample},
         {"dir", r.dir},
         {"collectives", r.cmp.collectives.size()},
         {"collective_median_abs_error", number_or_null(r.cmp.collective_median_abs_error)}});
  j["calibrations"] = calibrations;
  j["case_files"] = case_files;
  j["steps"] = json::array();
  for (const auto& r : step_rows) j["steps"].push_back(row_to_json(r));
  j["collectives"] = json::array();
  for (const auto& r : coll_rows) j["collectives"].push_back(row_to_json(r));
  j["sgdsim_version"] = SGDSIM_VERSION;
  return j;
}

/// The Markdown table and the medians on stdout.
void print_validation(const ValidationSummary& v, const std::vector<TargetRecord>& records,
                      const fs::path& out) {
  const auto& [summary_rows, step_rows, coll_rows, med_iter, med_iter_oos, med_comm, med_coll,
               headline] = v;
  std::cout << "| case | metric | measured | simulated | error % |\n|---|---|---|---|---|\n";
  for (const auto& r : records) {
    const std::string label = r.case_name + ", " + r.target + (r.in_sample ? " (calibration)" : "");
    for (const auto& row : r.cmp.summary)
      std::cout << fmt::format("| {} | {} ({}) | {} | {} | {} |\n", label, row.metric, row.what,
                               table_time(row.measured_s), table_time(row.simulated_s),
                               pct(row.error));
    if (!r.cmp.collectives.empty())
      std::cout << fmt::format(
          "| {} | per collective, median abs error over {} | | | {} |\n", label,
          r.cmp.collectives.size(),
          std::isfinite(r.cmp.collective_median_abs_error)
              ? fmt::format("{:.1f} %", 100 * r.cmp.collective_median_abs_error)
              : "-");
  }
  auto count = [&](const std::string& metric, bool oos) {
    size_t n = 0;
    // v.summary_rows, not the binding: clang 14 cannot capture structured bindings.
    for (const auto& r : v.summary_rows) n += r.metric == metric && !(oos && r.in_sample);
    return n;
  };
  auto p = [](double x) { return std::isfinite(x) ? fmt::format("{:.1f} %", 100 * x) : "-"; };
  std::cout << fmt::format(
      "\nmedian abs error, iteration time: {} over {} targets (predicted scales only: {} over "
      "{})\n",
      p(med_iter), count("iteration", false), p(med_iter_oos), count("iteration", true));
  std::cout << fmt::format("median abs error, communication per iteration: {} over {} targets\n",
                           p(med_comm), count("comm", false));
  std::cout << fmt::format("median abs error, per collective: {} over {} collectives\n",
                           p(med_coll), coll_rows.size());
  std::cout << "results in " << (out / "validation.json").string() << "\n";
}

namespace {

int cmd_validate(const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    std::string help = std::string(kValidateHelpHead) + options_help(kValidateOptions, 14);
    help.replace(help.find("@FORMATS@"), 9, case_formats_help());
    help.replace(help.find("@OPTIONS@"), 9, import_options_help(true));
    return std::cout << help, 0;
  }
  Args a = parse_args(argv, kValidateOptions);
  if (a.positional.empty())
    throw InputError("usage: sgdsim validate CASE.json... [--out DIR] (see --help)");
  std::vector<ValidationCase> cases;
  for (const auto& f : a.positional) cases.push_back(load_validation_case(f));
  for (size_t i = 0; i < cases.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (cases[i].name == cases[k].name)
        throw InputError(cases[i].file, "/name",
                         "two cases are named \"" + cases[i].name + "\" (" + cases[k].file + ")");
  const fs::path out = a.get("--out").value_or("results/validation");
  std::error_code exists_ec;
  const bool created = !fs::exists(out, exists_ec);
  try {
    fs::create_directories(out);
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out", "",
                     "cannot create output folder \"" + out.string() + "\": " + e.code().message());
  }
  const bool tty = ::isatty(2) != 0;
  std::vector<TargetRecord> records;
  json calibrations = json::array();
  try {
    for (const auto& c : cases) {
      CaseCalibration cal = calibrate_case(c);
      calibrations.push_back(calibration_json(c, cal));
      simulate_targets(c, cal, out, tty, records);
    }
  } catch (const InputError&) {
    std::error_code ec;
    if (created) fs::remove(out, ec);  // only if empty
    throw;
  }
  if (tty) std::cerr << "\r\033[K";
  const ValidationSummary v = summarize(records);
  write_file_atomic(out / "validation.json",
                    validation_json(v, records, calibrations, a.positional).dump(2) + "\n");
  if (!a.has("--quiet")) print_validation(v, records, out);
  return 0;
}

const RegisterSubcommand kValidate({"validate", "validate CASE.json...",
                                    "simulate validation cases and compare with the measurements",
                                    110, cmd_validate});

}  // namespace

}  // namespace sgdsim
