// `sgdsim run`: simulates one scenario on SimGrid in a child process and writes its results
// (summary.json, iterations.csv, timeline.json, ...) into an output folder sgdsim owns.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/isolate.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/coupling/trainer.hpp"
#include "sim/report/recorder.hpp"
#include "sim/schemes/memory.hpp"
#include "sim/schemes/update_rule.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kRunHelpHead =
    R"(usage: sgdsim run SCENARIO.json [--out DIR] [--set PATH=VALUE]... [--cfg SIMGRID_OPT]... [--quiet]
                  [--time-limit SECONDS] [--force] [--overwrite]

Simulates the scenario on SimGrid and writes summary.json, iterations.csv, timeline.json and
scenario.resolved.json into DIR (default: results/<scenario name>). Prints a result table;
shows progress on stderr (see --progress).

)";

const std::vector<OptionSpec> kRunOptions = {
    {"--out", "DIR",
     "output folder (created if missing). sgdsim lists what it writes there in\n"
     ".sgdsim-manifest; a re-run replaces the previous run's files, and a\n"
     "folder holding other files is refused (exit 2)"},
    {"--overwrite", "", "write into a folder holding files sgdsim did not write (they are kept)"},
    {"--set", "PATH=VALUE",
     "override one scenario field before validation, e.g. --set workers.count=8\n"
     "(VALUE parsed as JSON, else taken as a string); repeatable"},
    {"--cfg", "NAME:VALUE",
     "pass a SimGrid option through, e.g. --cfg network/TCP-gamma:0; repeatable;\n"
     "added after the scenario's \"simgrid_cfg\" and recorded in\n"
     "scenario.resolved.json (which then reruns without --cfg)"},
    {"--quiet", "", "no result table on stdout"},
    {"--progress", "MODE",
     "auto (default): a refreshed line on a terminal, else one line every\n"
     "--progress-every of wall time (\"sgdsim: iteration i/N, simulated ...,\n"
     "wall ..., ETA ...\"); always: those lines even on a terminal; never"},
    {"--progress-every", "T", "wall time between progress lines off a terminal (default 10 s)"},
    {"--time-limit", "T",
     "stop after T seconds of wall-clock time (\"600\", \"10min\"): no result file\n"
     "is written, exit code 3"},
    {"--force", "",
     "run even when the estimate exceeds 1e9 SimGrid activities or the\n"
     "available memory (above 1e8 activities or half the memory: a warning)"},
};

/// Shows progress on stderr while a run proceeds: a refreshed "iteration i/N" line on a
/// terminal; elsewhere (batch logs, sweeps' sweep.log) one line every `every_s` of wall time
/// with the iteration, the simulated time and an ETA. `mode` is auto, always (lines even on a
/// terminal) or never.
class Progress : public TaskObserver {
 public:
  /// `start_line` (if not empty) is shown at once on a terminal or with "always": a long run
  /// says what it does before its first iteration ends.
  Progress(TaskObserver& inner, int iterations, const std::string& mode, double every_s,
           bool terminal, const std::string& start_line = "")
      : inner_(inner),
        iterations_(iterations),
        live_(mode == "auto" && terminal),
        lines_(mode == "always" || (mode == "auto" && !live_)),
        every_s_(every_s),
        start_(std::chrono::steady_clock::now()),
        last_(start_) {
    // On a terminal or with --progress always (a batch log's first line stays the first
    // progress line; there a line comes every every_s, inside long iterations too).
    if ((live_ || mode == "always") && !start_line.empty()) {
      std::fprintf(stderr, "%s\n", start_line.c_str());
      std::fflush(stderr);
    }
  }
  ~Progress() override {
    if (live_ && shown_) std::fputs("\r\033[K", stderr);  // cleared before any error line
  }
  void task_started(const Task& task, double start_s) override {
    inner_.task_started(task, start_s);
  }
  bool should_stop() const override { return inner_.should_stop(); }
  void prefetch(const Task& task) const override { inner_.prefetch(task); }
  void task_done(const Task& task, double start_s, double end_s) override {
    inner_.task_done(task, start_s, end_s);
    // Off a terminal, a line every every_s even inside an iteration (10^5 workers take long
    // for one): the clock is read every 4,096 tasks.
    const bool iteration_end = task.kind == TaskKind::update && task.worker == 0;
    if (!iteration_end) {
      if (lines_ && (++tasks_ & 4095) == 0) line(end_s);
      return;
    }
    done_ = task.iteration + 1;
    if (live_ && (done_ % std::max(1, iterations_ / 100) == 0 || done_ == iterations_)) {
      std::fprintf(stderr, "\r  iteration %d/%d, simulated %.3f s", done_, iterations_, end_s);
      shown_ = true;
    }
    if (lines_) line(end_s);
  }

 private:
  /// One progress line if every_s has passed since the last.
  void line(double simulated_s) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() < every_s_) return;
    last_ = now;
    const double wall = std::chrono::duration<double>(now - start_).count();
    std::string eta = "?";
    if (done_ > 0) eta = fmt::format("{:.0f} s", wall / done_ * (iterations_ - done_));
    std::fprintf(stderr, "sgdsim: iteration %d/%d, simulated %.6f s, wall %.1f s, ETA %s\n", done_,
                 iterations_, simulated_s, wall, eta.c_str());
    std::fflush(stderr);
  }

  TaskObserver& inner_;
  int iterations_;
  int done_ = 0;        // iterations worker 0 has finished
  uint64_t tasks_ = 0;  // tasks seen since the start
  bool live_;           // the refreshed line on a terminal
  bool lines_;          // one line every every_s_
  double every_s_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
};

/// `sgdsim run`'s options beyond the scenario.
struct RunOptions {
  std::optional<double> time_limit_s;  ///< --time-limit
  std::string progress_mode = "auto";  ///< --progress
  double progress_every_s = 10;        ///< --progress-every
  bool terminal = false;               ///< stderr is a terminal (asked before the run forks)
};

/// The options of `run` beyond the scenario, read and checked before the scenario is.
RunOptions read_run_options(const Args& a) {
  RunOptions o;
  o.terminal = ::isatty(2) != 0;  // in the parent: the simulating child's stderr is a pipe
  check_cfg_options(a.all("--cfg"));
  if (auto v = a.get("--time-limit")) o.time_limit_s = parse_time_limit(*v);
  o.progress_mode = a.get("--progress").value_or("auto");
  if (o.progress_mode != "auto" && o.progress_mode != "always" && o.progress_mode != "never")
    throw InputError("usage: --progress: expected auto, always or never, got \"" + o.progress_mode +
                     "\"");
  if (auto v = a.get("--progress-every"))
    o.progress_every_s = parse_time_option("--progress-every", *v, "10", "1min");
  return o;
}

/// The line a run estimated at 10 s or more prints before it starts (empty below).
std::string start_line(const Scenario& sc, const RunEstimate& e) {
  if (e.time_low_s < 10) return "";
  // The estimate is SimGrid's rate; messages alone on their routes cost far less in closed form.
  const bool closes =
      sc.fidelity == Fidelity::flow && sc.flow_closed_form_private_routes &&
      sc.flow_symmetry == FlowSymmetry::none &&
      (sc.network_model == NetworkModel::links || sc.network_model == NetworkModel::ideal);
  const char* note = closes ? " on SimGrid (less for messages on private routes)" : "";
  return fmt::format(
      "sgdsim: starting {} workers x {} iterations at {} fidelity: about {:.2g} activities, "
      "estimated {:.0f} s to {:.0f} s{}",
      sc.workers, sc.iterations, fidelity_name(sc.fidelity), e.activities, e.time_low_s,
      e.time_high_s, note);
}

/// A run whose peak memory per GPU exceeds device.memory stops here (memory_overflow "error").
void check_memory(const Scenario& sc, const Workload& w) {
  if (sc.device.memory_bytes <= 0 || sc.device.memory_overflow != "error") return;
  const MemoryBreakdown m = scheme_memory(sc, w);
  if (m.peak_bytes() <= sc.device.memory_bytes) return;
  const auto gb = [](double b) { return fmt::format("{:.3f} GB", b / 1e9); };
  throw InputError(
      sc.source_file, "/device/memory",
      fmt::format("{} per GPU does not hold scheme \"{}\"'s peak of {} (parameters {}, gradients "
                  "{}, optimizer state {}, gathered units {}, communication buffers {}; "
                  "activations not counted); expected at least {} (or memory_overflow \"flag\")",
                  gb(sc.device.memory_bytes), sc.scheme.type, gb(m.peak_bytes()),
                  gb(m.parameters_bytes), gb(m.gradients_bytes), gb(m.optimizer_bytes),
                  gb(m.gathered_bytes), gb(m.buffers_bytes), gb(m.peak_bytes())));
}

/// Simulates the run (with the math when the scenario trains) and writes its outputs into
/// `out`; returns summary.json.
json simulate_run(const Setup& setup, const RunOptions& o, const fs::path& out,
                  const std::string& first_line, std::chrono::steady_clock::time_point wall_start) {
  const Scenario& sc = setup.scenario;
  RunRecorder recorder(sc, setup.workload, out, update_lag(scheme_update_rule(sc)));
  std::unique_ptr<Trainer> trainer;
  if (sc.training.enabled)
    trainer = std::make_unique<Trainer>(sc, static_cast<int>(setup.workload.buckets.size()),
                                        recorder, scheme_ps_keys(sc, setup.workload));
  TaskObserver& observer = trainer ? static_cast<TaskObserver&>(*trainer) : recorder;
  EngineResult r;
  {
    Progress progress(observer, sc.iterations, o.progress_mode, o.progress_every_s, o.terminal,
                      first_line);
    r = run_training(setup.engine, *setup.scheme, sc.iterations, *setup.collective, progress);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  json extra = json::object();
  if (trainer) {
    write_convergence(out, trainer->convergence());
    extra["training"] = trainer->summary();
  }
  if (sc.device.memory_bytes > 0 || scheme_traits(sc).memory)
    extra["memory"] = memory_summary(scheme_memory(sc, setup.workload), sc);
  return recorder.finish(r, wall, extra);
}

/// The result table of `run` (unless --quiet).
void print_run_summary(const Setup& setup, const json& summary, const fs::path& out) {
  const Scenario& sc = setup.scenario;
  const auto& it = summary["iteration_time_s"];
  const std::string micro = sc.scheme.accumulation_steps > 1
                                ? fmt::format(" x {} micro-batches", sc.scheme.accumulation_steps)
                                : "";
  std::cout << fmt::format(
      "sgdsim run: {} — {} SGD, {} workers x batch {}{}, model {}, {} allreduce, {} fidelity, "
      "network {}\n",
      sc.name, sc.scheme.type, sc.workers, sc.batch_size, micro, setup.workload.model_name,
      sc.collective, fidelity_name(sc.fidelity), network_model_name(sc.network_model));
  auto row = [](const char* name, const std::string& value) {
    std::cout << fmt::format("  {:<28}{:>16}\n", name, value);
  };
  row("iteration time (mean)", fmt_time(it["mean"]));
  row("iteration time (p50 / p99)", fmt_time(it["p50"]) + " / " + fmt_time(it["p99"]));
  std::cout << fmt::format("  {:<28}{:>16.1f} samples/s\n", "throughput",
                           summary["throughput_samples_per_s"].get<double>());
  row("compute per iteration", fmt_time(summary["compute_s_per_iter"]));
  row("allreduce per iteration", fmt_time(summary["comm_s_per_iter"]));
  row("exposed communication", fmt_time(summary["exposed_comm_s_per_iter"]));
  row("simulated time", fmt_time(summary["simulated_time_s"]));
  std::cout << fmt::format("  {:<28}{:>16}   ({} activities)\n", "wall time",
                           fmt_time(summary["wall_time_s"]), summary["activities"].get<uint64_t>());
  std::cout << "  results in " << out.string() << "\n";
}

int cmd_run(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kRunHelpHead << options_help(kRunOptions, 23), 0;
  Args a = parse_args(argv, kRunOptions);
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim run SCENARIO.json [options] (see --help)");
  auto wall_start = std::chrono::steady_clock::now();
  const RunOptions options = read_run_options(a);
  auto setup = make_setup(a.positional[0], a.all("--set"), a.all("--cfg"));
  const Scenario& sc = setup->scenario;
  const RunEstimate estimate = estimate_run(sc, setup->workload);
  if (estimate.activities >= kHugePageActivities) restart_with_huge_pages();  // before any output
  for (const auto& w : setup->warnings) std::cerr << "sgdsim: warning: " << w << "\n";
  check_memory(sc, setup->workload);
  const std::string warning =
      check_run_resources(sc, estimate, default_guard_limits(), a.has("--force"));
  if (!warning.empty()) std::cerr << "sgdsim: warning: " << warning << "\n";
  fs::path out = a.get("--out").value_or((fs::path("results") / sc.name).string());
  // One writer at a time: a second run into the folder is refused while this one holds it.
  const FolderLock lock(out, "--out");
  const bool created = lock.created();
  // A folder with files no sgdsim manifest lists is refused (unless --overwrite); the run's
  // files are declared in the manifest before they are written, so a crash leaves them known.
  std::optional<OutputFolder> opened;
  try {
    opened.emplace(out, "run", a.has("--overwrite"), "--out");
    for (const char* name : {"iterations.csv", "scenario.resolved.json", "summary.json"})
      opened->will_write(name);
    if (sc.output_timeline) opened->will_write("timeline.json");
    if (sc.training.enabled) opened->will_write("convergence.csv");
  } catch (const InputError&) {
    std::error_code ec;
    if (created) fs::remove(out, ec);
    throw;
  }
  OutputFolder& folder = *opened;
  // The simulation runs in a child process: SimGrid dying in it becomes one line and exit 2.
  // That child ends once the outputs are written: SimGrid's platform is left to its exit.
  setup->engine.keep_platform_at_exit = true;
  std::string what =
      sc.source_file + (sc.platform.file.empty() ? "" : " (platform " + sc.platform.file + ")");
  if (!setup->engine.cfg.empty())  // an option may be what made SimGrid die
    what += fmt::format(" (SimGrid options {})", fmt::join(setup->engine.cfg, ", "));
  return run_isolated({what, &folder, created}, [&]() -> int {
    json summary;
    try {
      folder.declare();
      if (options.time_limit_s)
        arm_time_limit(*options.time_limit_s, wall_start, created ? out.string() : "");
      summary = simulate_run(*setup, options, out, start_line(sc, estimate), wall_start);
      // A reused folder keeps no output of an earlier run beside this one's (a plotted old
      // timeline would pass for this run's): the previous run's files this run did not write go,
      // and so do sgdsim run's optional outputs in a folder that has no manifest yet.
      folder.commit({"timeline.json", "convergence.csv"});
    } catch (...) {
      folder.discard(created);
      throw;
    }
    if (!a.has("--quiet")) print_run_summary(*setup, summary, out);
    return 0;
  });
}

const RegisterSubcommand kRun({"run", "run SCENARIO.json",
                               "simulate a scenario on SimGrid and write results", 10, cmd_run});

}  // namespace
}  // namespace sgdsim
