// sgdsim's subcommands: maps a command line to the library (shared by the sgdsim executable and
// the Python module, which calls dispatch() in a forked child of the interpreter).
#include "sim/app/commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/app/calibrate_cmd.hpp"
#include "sim/app/chakra_export.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/fabric_cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/isolate.hpp"
#include "sim/app/schema_cmd.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/sweep_cmd.hpp"
#include "sim/app/trace_cmd.hpp"
#include "sim/app/validate_cmd.hpp"
#include "sim/collectives/byteps.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/units.hpp"
#include "sim/report/recorder.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/platform_check.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kMainHelp =
    R"(sgdsim — discrete-event simulator of distributed SGD training (SimGrid 3.32)

usage: sgdsim <command> [options]     (sgdsim <command> --help for details)

commands:
  run SCENARIO.json        simulate a scenario on SimGrid and write results
  sweep SWEEP.json         run a grid/zip/list of scenario variants in parallel processes (resumable)
  predict SCENARIO.json    contention-free analytic iteration time (critical path, no SimGrid)
  dag SCENARIO.json        print the task graph of the first iterations (DOT or JSON)
  collective               time one allreduce, like OSU / nccl-tests
  platform                 write a generated platform as SimGrid XML
  calibrate osu LOG        fit alpha and beta of a platform to an OSU allreduce latency log
  trace FILE               summarize a measured trace or log (Kineto, nccl-tests, OSU, ...)
  profiles                 list the model profiles that ship (name, layers, parameters, source)
  schema                   print the scenario format as a JSON Schema (or a README field table)
  validate CASE.json...    simulate validation cases and compare with the measurements
  version                  print the version

exit codes: 0 ok, 2 bad input, 1 internal error, 3 --time-limit reached
)";

constexpr const char* kRunHelp =
    R"(usage: sgdsim run SCENARIO.json [--out DIR] [--set PATH=VALUE]... [--cfg SIMGRID_OPT]... [--quiet]
                  [--time-limit SECONDS] [--force] [--overwrite]

Simulates the scenario on SimGrid and writes summary.json, iterations.csv, timeline.json and
scenario.resolved.json into DIR (default: results/<scenario name>). Prints a result table;
shows progress on stderr (see --progress).

  --out DIR            output folder (created if missing). sgdsim lists what it writes there in
                       .sgdsim-manifest; a re-run replaces the previous run's files, and a
                       folder holding other files is refused (exit 2)
  --overwrite          write into a folder holding files sgdsim did not write (they are kept)
  --set PATH=VALUE     override one scenario field before validation, e.g. --set workers.count=8
                       (VALUE parsed as JSON, else taken as a string); repeatable
  --cfg NAME:VALUE     pass a SimGrid option through, e.g. --cfg network/TCP-gamma:0; repeatable;
                       added after the scenario's "simgrid_cfg" and recorded in
                       scenario.resolved.json (which then reruns without --cfg)
  --quiet              no result table on stdout
  --progress MODE      auto (default): a refreshed line on a terminal, else one line every
                       --progress-every of wall time ("sgdsim: iteration i/N, simulated ...,
                       wall ..., ETA ..."); always: those lines even on a terminal; never
  --progress-every T   wall time between progress lines off a terminal (default 10 s)
  --time-limit T       stop after T seconds of wall-clock time ("600", "10min"): no result file
                       is written, exit code 3
  --force              run even when the estimate exceeds 1e9 SimGrid activities or the
                       available memory (above 1e8 activities or half the memory: a warning)
)";

constexpr const char* kPredictHelp =
    R"(usage: sgdsim predict SCENARIO.json [--set PATH=VALUE]... [--json] [--time-limit T] [--force]

Contention-free analytic model of the scenario (the DAG papers' model): the longest path
through the task graph of all iterations, collectives timed by their schedule with each
message costing route latency + size / route bandwidth. No SimGrid simulation. With
network_model "default", SimGrid's LV08 factors are applied (latency x13.01, bandwidth x0.97).
Needs a generated platform.

  --set PATH=VALUE     override one scenario field; repeatable
  --json               print {"iteration_time_s", "throughput_samples_per_s", "compute_s",
                       "comm_s", "iteration_end_s"} instead of a table
  --time-limit T       stop after T of wall time ("600", "10min"): exit 3, nothing printed
  --force              predict even when the task graph exceeds run's activity limit at
                       fidelity analytic (1e9)
)";

constexpr const char* kDagHelp =
    R"(usage: sgdsim dag SCENARIO.json [--iterations K] [--format dot|json] [--set PATH=VALUE]...
       sgdsim dag SCENARIO.json --format chakra --out PREFIX [--set PATH=VALUE]...
                  [--time-limit T] [--force]

Prints the task graph of the first K iterations (default 2) of the scenario.

  --iterations K       how many iterations to include (default 2)
  --format dot|json    Graphviz DOT (default) or JSON {"tasks": [...], "edges": [[from, to]...]}
  --format chakra      write iteration 0 as per-rank Chakra ET files PREFIX.0.et ..
                       PREFIX.<P-1>.et (ASTRA-sim's workload format; README, Chakra)
  --out PREFIX         where --format chakra writes
  --set PATH=VALUE     override one scenario field; repeatable
  --time-limit T       stop after T of wall time ("600", "10min"): exit 3, nothing printed
                       or written
  --force              build the graph even when its K iterations exceed run's activity limit
                       at fidelity analytic (1e9)
)";

constexpr const char* kCollectiveHelp =
    R"(usage: sgdsim collective --algorithm A --ranks P --bytes N
                         [--platform FILE | --bandwidth B --latency L
                          [--devices-per-node D --intra-bandwidth B --intra-latency L]
                          [--node PRESET]]
                         [--servers S] [--chunk-bytes B] [--channels C]
                         [--reduction-speed R] [--operation allreduce|allgather|reduce_scatter]
                         [ALGORITHM OPTIONS]
                         [--network-model default|ideal|smpi|links] [--fidelity flow|analytic]
                         [--technology T] [--intra-technology T] [--sockets LIB]
                         [--topology fat_tree --nodes-per-leaf K [--oversubscription R]
                          [--spines S --ecmp-seed E [--ecmp-connections N]] [--nodes N]]
                         [--placement block|cyclic|random [--seed N]]
                         [--json] [--cfg OPT]... [--time-limit T] [--force]

Simulates one allreduce (or --operation) of N bytes over P ranks on SimGrid and prints its time beside the
algorithm's closed-form cost. Without --platform, ranks sit on a generated star whose
host-to-host routes have exactly latency L and bandwidth B between nodes (and the intra-node
latency and bandwidth between devices of one node, with --devices-per-node D > 1; ranks are
numbered node-major). With --platform, the collective runs on the first P hosts in the
file's declaration order (formula_s is then null).

  --algorithm A        ring, recursive_halving_doubling (rhd), recursive_doubling, tree,
                       hierarchical, ps, byteps, auto, double_binary_tree, nccl (default ring)
  --operation O        allreduce (default), allgather (N bytes gathered in all, N/P from each
                       rank) or reduce_scatter (N bytes on each rank, N/P of the sum left on
                       each): ring, recursive_halving_doubling (powers of two), hierarchical
                       (binomial, full nodes), auto, nccl (the ring)
  --ranks P            number of ranks (>= 1)
  --bytes N            message size: "100MB", "1GiB" or a byte count
  --bandwidth B        bandwidth between nodes, e.g. "10Gbps" (default "10Gbps")
  --latency L          latency between nodes, e.g. "1us" (default "1us")
  --devices-per-node D ranks per node (default 1)
  --intra-bandwidth B  bandwidth between devices of a node (default "16GBps")
  --intra-latency L    latency between devices of a node (default "1us")
  --node PRESET        the node's host path as NCCL picks it sets the intra-node bandwidth
                       and caps --bandwidth at its NICs' rate: dgx-a100, dgx1-v100,
                       p3dn.24xlarge, p4d.24xlarge, pcie-4gpu-1nic or
                       pcie-8gpu-2socket-gen5 (docs/host-path.md)
  --servers S          ps: server shards on the first S ranks (default 0 = one per rank);
                       byteps with dedicated servers: server hosts (default 0 = one per node)
  --chunk-bytes B      NCCL-style pipelining chunk, e.g. "512KiB" (default 0 = messages whole);
                       ring, double_binary_tree, hierarchical, nccl
  --channels C         NCCL channels: C concurrent copies on N/C bytes each (default 1)
  --reduction-speed R  reduction throughput, e.g. "50GBps" (default: reductions take no time)
  --network-model M    "default" (SimGrid LV08), "ideal" (formula-exact), "smpi"
                       (SimGrid's SMPI-calibrated factors) or "links" (each link's
                       technology sets what a message pays); default "default"
  --technology T       links: technology of the links between nodes (and of --platform
                       links without a technology property): tcp, rdma, nvlink, pcie or
                       custom (default tcp)
  --intra-technology T links: technology of the links inside a node (default pcie)
  --sockets LIB        links, tcp: messages between nodes go over LIB's TCP streams, at most
                       channels x streams x min(10 Gb/s, flow cap): nccl (2 x 1 stream),
                       nccl-aws (2 x 16 streams, 10 Gb/s per flow), nccl-gcp (2 x 4), gloo
                       or mpi (1 stream); docs/nccl-sockets.md
  --topology fat_tree  nodes under leaf switches of --nodes-per-leaf K nodes (default 16),
                       uplinks of K x bandwidth / --oversubscription R; --spines S > 1 splits
                       each uplink into S spine links and ECMP picks one per host pair by a hash
                       seeded with --ecmp-seed E (default 1; flow fidelity only);
                       --ecmp-connections N hashes each of N connections per ordered host
                       pair by itself (NCCL's sockets or QPs); --nodes N: the cluster's nodes
                       (default: the ranks'); docs/scale.md
  --placement P        ranks on nodes: block (default), cyclic (round robin over the nodes) or
                       random (a seeded random choice and order of the --nodes, --seed N)
  --fidelity F         "flow" (every message simulated) or "analytic" (one timed activity
                       lasting the formula, with alpha-beta from the platform's routes)
  --json               print {"algorithm","ranks","bytes","time_s","formula_s","activities",
                       "fidelity","network_model"}, "chosen" (what auto, nccl or
                       nccl_tuner ran) and "operation" (when not allreduce)
  --time-limit T       stop after T of wall time ("600", "10min"): exit 3, nothing printed
  --force              run even when the estimate (messages, memory) exceeds the limits
)";

/// The ALGORITHM OPTIONS part of `collective --help`: every option a registered algorithm
/// declares (Collective::params), as the scenario's `collective` keys of the same names.
std::string algorithm_options_help() {
  std::string out =
      "\nALGORITHM OPTIONS (declared by each algorithm; the scenario's `collective` keys of the\n"
      "same names, with '_' for '-'):\n";
  for (const DeclaredCollectiveParam& d : collective_params()) {
    const Param& p = d.param.param;
    const std::string value = p.type == ParamType::integer     ? "N"
                              : p.type == ParamType::size      ? "B"
                              : p.type == ParamType::time      ? "T"
                              : p.type == ParamType::bandwidth ? "R"
                                                               : "X";
    std::string text = d.owner + ": " + p.brief;
    // The choices, unless the brief names them.
    if (p.type == ParamType::choice &&
        std::none_of(p.choices.begin(), p.choices.end(),
                     [&](const std::string& c) { return p.brief.find(c) != std::string::npos; }))
      text += fmt::format(" ({})", fmt::join(p.choices, ", "));
    text += " (default " +
            (p.default_value.is_string() ? p.default_value.get<std::string>()
                                         : p.default_value.dump()) +
            ")";
    // Wrapped at 95 columns, under the description column (23).
    const std::string name = "  " + p.flag() + " " + value;
    std::string line = name.size() < 23 ? name + std::string(23 - name.size(), ' ')
                                        : name + "\n" + std::string(23, ' ');
    size_t col = 23;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
      if (col > 23 && col + 1 + w.size() > 95) {
        line += "\n" + std::string(23, ' ');
        col = 23;
      }
      if (col > 23) line += " ", ++col;
      line += w;
      col += w.size();
    }
    out += line + "\n";
  }
  return out;
}

constexpr const char* kPlatformHelp =
    R"(usage: sgdsim platform [SCENARIO.json] [--topology star|fat_tree] [--nodes N]
                       [--devices-per-node D] [--node-bandwidth B] [--node-latency L]
                       [--intra-bandwidth B] [--intra-latency L] [--device-speed S]
                       [--nodes-per-leaf K] [--oversubscription R] [--node-technology T]
                       [--intra-technology T] [--spines S] [--ecmp-seed E]
                       [--ecmp-connections N] [--output FILE] [--time-limit T]

Writes a generated platform as SimGrid XML (stdout, or FILE written atomically). With a
scenario, writes that scenario's generated platform; the options override its fields.
Defaults are the scenario defaults (star, 100Gbps/1us tcp node links, 16GBps/1us pcie
intra-node links, 15Tf devices, 16 nodes per leaf, no oversubscription). Links carry their
technology and transport as <prop> elements (network_model "links" reads them); a star of
single-device nodes is a SimGrid <cluster>, whose links cannot carry properties: a scenario
using it gives them the node link's technology.

  --time-limit T       stop after T of wall time ("600", "10min"): exit 3, nothing printed
                       or written
)";

constexpr const char* kProfilesHelp =
    R"(usage: sgdsim profiles [--json]

Lists the model profiles that ship in <data dir>/models/profiles (the names a scenario's
"model" or --set model=NAME accepts): name, kind (measured at a batch size, or flops per
sample), layers, parameters and source. The data dir is $SGDSIM_DATA_DIR, else
<prefix>/share/sgdsim next to the binary, else the source tree.

  --json               print [{"name","kind","batch_size","layers","parameters","source",
                       "file"}...] instead of a table
)";

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

void check_cfg(const std::vector<std::string>& cfg) {
  for (const auto& c : cfg) {
    auto colon = c.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == c.size())
      throw InputError("--cfg", "",
                       "expected NAME:VALUE (e.g. network/TCP-gamma:0), got \"" + c + "\"");
  }
}

std::string fmt_time(double s) {
  if (s >= 1.0) return fmt::format("{:.4f} s", s);
  if (s >= 1e-3) return fmt::format("{:.4f} ms", s * 1e3);
  return fmt::format("{:.4f} us", s * 1e6);
}

/// `sgdsim run`'s options beyond the scenario.
struct RunOptions {
  std::optional<double> time_limit_s;  ///< --time-limit
  std::string progress_mode = "auto";  ///< --progress
  double progress_every_s = 10;        ///< --progress-every
  bool terminal = false;               ///< stderr is a terminal (asked before the run forks)
};

RunOptions read_run_options(const Args& a) {
  RunOptions o;
  o.terminal = ::isatty(2) != 0;  // in the parent: the simulating child's stderr is a pipe
  check_cfg(a.all("--cfg"));
  if (auto v = a.get("--time-limit")) o.time_limit_s = parse_time_limit(*v);
  o.progress_mode = a.get("--progress").value_or("auto");
  if (o.progress_mode != "auto" && o.progress_mode != "always" && o.progress_mode != "never")
    throw InputError("usage: --progress: expected auto, always or never, got \"" + o.progress_mode +
                     "\"");
  if (auto v = a.get("--progress-every")) {
    try {
      o.progress_every_s = parse_time_limit(*v);
    } catch (const InputError&) {
      throw InputError(
          "usage: --progress-every: expected a time > 0 in seconds (\"10\") or "
          "with a unit (\"1min\"), got \"" +
          *v + "\"");
    }
  }
  return o;
}

/// The line a run estimated at 10 s or more prints before it starts (empty below).
std::string start_line(const Scenario& sc, const RunEstimate& e) {
  if (e.time_low_s < 10) return "";
  return fmt::format(
      "sgdsim: starting {} workers x {} iterations at {} fidelity: about {:.2g} activities, "
      "estimated {:.0f} s to {:.0f} s",
      sc.workers, sc.iterations, fidelity_name(sc.fidelity), e.activities, e.time_low_s,
      e.time_high_s);
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

void print_run_summary(const Setup& setup, const json& summary, const fs::path& out) {
  const Scenario& sc = setup.scenario;
  const auto& it = summary["iteration_time_s"];
  std::cout << fmt::format(
      "sgdsim run: {} — {} SGD, {} workers x batch {}, model {}, {} allreduce, {} fidelity, "
      "network {}\n",
      sc.name, sc.scheme.type, sc.workers, sc.batch_size, setup.workload.model_name, sc.collective,
      fidelity_name(sc.fidelity), network_model_name(sc.network_model));
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
  if (wants_help(argv)) return std::cout << kRunHelp, 0;
  Args a = parse_args(argv,
                      {"--out", "--set", "--cfg", "--time-limit", "--progress", "--progress-every"},
                      {"--quiet", "--force", "--overwrite"});
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim run SCENARIO.json [options] (see --help)");
  auto wall_start = std::chrono::steady_clock::now();
  const RunOptions options = read_run_options(a);
  auto setup = make_setup(a.positional[0], a.all("--set"), a.all("--cfg"));
  for (const auto& w : setup->warnings) std::cerr << "sgdsim: warning: " << w << "\n";
  const Scenario& sc = setup->scenario;
  check_memory(sc, setup->workload);
  const RunEstimate estimate = estimate_run(sc, setup->workload);
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

/// Guards `predict` and `dag`, which build the task graph of `iterations` iterations: the
/// activity count and memory `run` estimates for it at fidelity analytic (one task, one
/// activity), checked against run's limits; a warning goes to stderr.
void check_graph_resources(const Setup& setup, int iterations, bool force) {
  Scenario sc = setup.scenario;
  sc.fidelity = Fidelity::analytic;
  sc.iterations = iterations;
  const std::string warning =
      check_run_resources(sc, estimate_run(sc, setup.workload), default_guard_limits(), force);
  if (!warning.empty()) std::cerr << "sgdsim: warning: " << warning << "\n";
}

int cmd_predict(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kPredictHelp, 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(argv, {"--set", "--time-limit"}, {"--json", "--force"});
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim predict SCENARIO.json [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  for (const auto& w : setup->warnings) std::cerr << "sgdsim: warning: " << w << "\n";
  const Scenario& sc = setup->scenario;
  check_graph_resources(*setup, sc.iterations, a.has("--force"));
  Prediction p = predict(*setup);
  disarm_time_limit();
  double throughput = sc.workers * static_cast<double>(sc.batch_size) / p.iteration_time_s;
  if (a.has("--json")) {
    json j = {{"scenario", sc.name},
              {"iteration_time_s", p.iteration_time_s},
              {"throughput_samples_per_s", throughput},
              {"compute_s", p.compute_s},
              {"comm_s", p.comm_s},
              {"iteration_end_s", p.iteration_end_s}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("sgdsim predict: {} (contention-free critical path, network {})\n",
                           sc.name, network_model_name(sc.network_model));
  std::cout << fmt::format("  {:<28}{:>16}\n", "iteration time (mean)",
                           fmt_time(p.iteration_time_s));
  std::cout << fmt::format("  {:<28}{:>16.1f} samples/s\n", "throughput", throughput);
  std::cout << fmt::format("  {:<28}{:>16}\n", "compute per iteration", fmt_time(p.compute_s));
  std::cout << fmt::format("  {:<28}{:>16}\n", "allreduce per iteration", fmt_time(p.comm_s));
  return 0;
}

/// dag --format chakra: iteration 0 of the scenario as per-rank ET files.
int dag_to_chakra(const Args& a) {
  auto out = a.get("--out");
  if (!out) throw InputError("usage: dag --format chakra needs --out PREFIX (files PREFIX.<r>.et)");
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  check_graph_resources(*setup, 1, a.has("--force"));
  const TaskGraph g = combine_groups(*setup->scheme, 0).graph;
  const auto streams = chakra_rank_streams(g, setup->scenario.workers);
  disarm_time_limit();  // the files are written whole, all of them
  const auto files = write_chakra_files(streams, *out);
  std::cout << fmt::format("wrote {} Chakra ET files: {} .. {}\n", files.size(), files.front(),
                           files.back());
  return 0;
}

/// The graph of `dag --format dot|json` (k iterations).
int dag_to_text(const Args& a, bool dot) {
  int k = 2;
  if (auto v = a.get("--iterations")) {
    try {
      size_t pos = 0;
      k = std::stoi(*v, &pos);
      if (pos != v->size() || k < 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw InputError("usage: --iterations: expected an integer >= 1, got \"" + *v + "\"");
    }
  }
  auto setup = make_setup(a.positional[0], a.all("--set"), {});
  const int iterations = std::min(k, setup->scenario.iterations);
  check_graph_resources(*setup, iterations, a.has("--force"));
  TaskGraph g = join_fragments(build_fragments(*setup->scheme, iterations));
  const std::string text = dot ? to_dot(g) : to_json(g);
  disarm_time_limit();
  std::cout << text;
  return 0;
}

int cmd_dag(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kDagHelp, 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a =
      parse_args(argv, {"--iterations", "--format", "--set", "--out", "--time-limit"}, {"--force"});
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim dag SCENARIO.json [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  // The output formats, in the order the usage error lists them.
  const std::vector<std::pair<std::string, std::function<int(const Args&)>>> writers = {
      {"dot", [](const Args& x) { return dag_to_text(x, true); }},
      {"json", [](const Args& x) { return dag_to_text(x, false); }},
      {"chakra", dag_to_chakra}};
  const std::string format = a.get("--format").value_or("dot");
  for (const auto& [name, write] : writers)
    if (name == format) return write(a);
  throw InputError("usage: --format: expected dot, json or chakra, got \"" + format + "\"");
}

double parse_cli_quantity(const Args& a, const std::string& opt, const std::string& def,
                          std::optional<double> (*parse)(std::string_view),
                          const std::string& expected, bool allow_plain_number = false) {
  std::string v = a.get(opt).value_or(def);
  std::optional<double> x = parse(v);
  if (!x && allow_plain_number) {
    try {
      size_t pos = 0;
      double d = std::stod(v, &pos);
      if (pos == v.size()) x = d;
    } catch (const std::exception&) {
    }
  }
  if (!x || *x < 0)
    throw InputError("usage: " + opt + ": expected " + expected + ", got \"" + v + "\"");
  return *x;
}

int parse_count(const Args& a, const std::string& opt, int def, int min) {
  auto v = a.get(opt);
  if (!v) return def;
  try {
    size_t pos = 0;
    int x = std::stoi(*v, &pos);
    if (pos != v->size() || x < min) throw std::invalid_argument("");
    return x;
  } catch (const std::exception&) {
    throw InputError(fmt::format("usage: {}: expected an integer >= {}, got \"{}\"", opt, min, *v));
  }
}

const Collective& collective_option(const Args& a, const std::string& opt, const std::string& def) {
  std::string algo = a.get(opt).value_or(def);
  try {
    return collective_by_name(algo);
  } catch (const std::out_of_range&) {
    std::string names;
    for (const auto& n : collective_names()) names += " " + n;
    throw InputError("usage: " + opt + ": expected one of" + names + " (or rhd), got \"" + algo +
                     "\"");
  }
}

/// `sgdsim collective`'s options, read and checked.
struct CollectiveCli {
  const Collective* coll = nullptr;
  int ranks = 1, dpn = 1, extra = 0;
  double bytes = 0;
  NetworkModel model = NetworkModel::lv08;  ///< --network-model
  Fidelity fidelity = Fidelity::flow;       ///< --fidelity
  TransportParams node_transport, intra_transport;
  EngineConfig cfg;
};

Args collective_args(const std::vector<std::string>& argv) {
  std::vector<std::string> valued = {"--algorithm",
                                     "--ranks",
                                     "--bytes",
                                     "--platform",
                                     "--bandwidth",
                                     "--latency",
                                     "--devices-per-node",
                                     "--intra-bandwidth",
                                     "--intra-latency",
                                     "--servers",
                                     "--chunk-bytes",
                                     "--channels",
                                     "--reduction-speed",
                                     "--network-model",
                                     "--fidelity",
                                     "--cfg",
                                     "--technology",
                                     "--intra-technology",
                                     "--sockets",
                                     "--node",
                                     "--topology",
                                     "--nodes",
                                     "--nodes-per-leaf",
                                     "--oversubscription",
                                     "--spines",
                                     "--ecmp-seed",
                                     "--ecmp-connections",
                                     "--placement",
                                     "--seed",
                                     "--time-limit",
                                     "--operation"};
  // Each algorithm's declared options are flags of the same names.
  for (const DeclaredCollectiveParam& d : collective_params())
    valued.push_back(d.param.param.flag());
  return parse_args(argv, valued, {"--json", "--force"});
}

/// --sockets LIB: the library's socket streams cap every message between nodes (as a tcp
/// node link's `sockets` with its defaults and the default stream goodput).
TransportParams with_sockets(const Args& a, NetworkModel model, TransportParams t) {
  const std::string lib = *a.get("--sockets");
  if (model != NetworkModel::links || !uses_sockets(t.technology))
    throw InputError("usage: --sockets needs --network-model links and --technology tcp");
  if (a.has("--platform"))
    throw InputError("usage: --sockets applies to the generated star, not --platform");
  try {
    t.stream_bandwidth_Bps = socket_peer_Bps(socket_defaults(lib), kDefaultStreamGoodput_Bps);
  } catch (const std::out_of_range&) {
    throw InputError(fmt::format("usage: --sockets: expected {}, got \"{}\"",
                                 fmt::join(socket_library_names(), ", "), lib));
  }
  return t;
}

/// The group's algorithm options: hierarchical's levels, pipelining, servers, reductions.
void read_group_options(const Args& a, CollectiveCli& c) {
  const Collective& coll = *c.coll;
  EngineConfig& cfg = c.cfg;
  const int ranks = c.ranks, dpn = c.dpn;
  const TransportParams& node_transport = c.node_transport;
  const TransportParams& intra_transport = c.intra_transport;
  cfg.workers = ranks;
  cfg.network_model = c.model;
  cfg.fidelity = c.fidelity;
  cfg.group = CollectiveGroup{ranks, dpn, parse_count(a, "--servers", 0, 0)};
  cfg.group.channels = parse_count(a, "--channels", 1, 1);
  // nccl_tuner's per-step latencies follow the link technologies (NCCL's hwLat rows): what
  // their "auto" keeps.
  cfg.group.step_latency_intra_s = nccl_step_latency_s(intra_transport.technology);
  cfg.group.step_latency_inter_s = nccl_step_latency_s(node_transport.technology);
  for (const DeclaredCollectiveParam& d : collective_params()) {
    const Param& p = d.param.param;
    const std::string text = a.get(p.flag()).value_or(
        p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump());
    const std::optional<ParamValue> v = parse_param_text(p, text);
    if (!v)
      throw InputError(
          fmt::format("usage: {}: expected {}, got \"{}\"", p.flag(), p.expected(), text));
    apply_param(cfg.group, d.param, *v);
  }
  cfg.start_delays = coll.latency_in_start_delay();
  if (a.has("--chunk-bytes"))
    cfg.group.chunk_bytes = parse_cli_quantity(a, "--chunk-bytes", "", units::parse_size_bytes,
                                               "a size such as \"512KiB\" or a byte count");
  if (cfg.group.chunk_bytes != 0 && cfg.group.chunk_bytes < 1024)
    throw InputError("usage: --chunk-bytes: expected 0 or at least 1 KiB, got \"" +
                     *a.get("--chunk-bytes") + "\"");
  if (a.has("--reduction-speed"))
    cfg.reduction_Bps = parse_cli_quantity(a, "--reduction-speed", "", units::parse_bandwidth_Bps,
                                           "a throughput such as \"50GBps\"");
  const std::string op = a.get("--operation").value_or("allreduce");
  const std::optional<CollectiveOp> parsed = collective_op_from_name(op);
  if (!parsed)
    throw InputError("usage: --operation: expected allreduce, allgather or reduce_scatter, got \"" +
                     op + "\"");
  cfg.group.op = *parsed;
  if (const std::optional<std::string> why = coll.unsupported(*parsed, cfg.group))
    throw InputError("usage: --operation: " + *why);
  if (std::optional<OptionProblem> problem = coll.check(cfg.group)) {
    std::string flag = problem->option == "ranks_per_node" ? "devices-per-node" : problem->option;
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw InputError(fmt::format("usage: --{}: {}", flag, problem->message));
  }
}

/// --platform FILE: the collective runs on the file's first hosts (no formula).
void use_platform_file(const Args& a, const std::string& platform_file, CollectiveCli& c) {
  const Collective& coll = *c.coll;
  EngineConfig& cfg = c.cfg;
  const int ranks = c.ranks, extra = c.extra;
  const TransportParams& node_transport = c.node_transport;
  for (const char* o : {"--bandwidth", "--latency", "--intra-bandwidth", "--intra-latency",
                        "--node", "--topology", "--placement"})
    if (a.has(o))
      throw InputError(std::string("usage: give either --platform or ") + o + ", not both");
  if (!fs::is_regular_file(platform_file))
    throw InputError(platform_file, "",
                     fs::exists(platform_file) ? "not a regular file: expected a platform file"
                                               : "platform file not found");
  if (coll.needs_route_costs())
    throw InputError("usage: --algorithm " + coll.name() +
                     " needs the generated star (its choice uses the routes' alpha-beta), not "
                     "--platform");
  check_platform_file(platform_file, static_cast<size_t>(ranks + extra));
  cfg.platform_file = platform_file;
  cfg.scenario_file = "--ranks";
  cfg.default_transport = node_transport;
}

/// --node PRESET: the ring's slowest host-path hop becomes the intra-node bandwidth, and the
/// NICs' host path caps the bandwidth between nodes.
void apply_node_option(const Args& a, int dpn, double& bw, double& intra_bw) {
  const std::optional<std::string> name = a.get("--node");
  if (!name) return;
  if (a.has("--intra-bandwidth"))
    throw InputError("usage: give either --node or --intra-bandwidth, not both");
  NodeDescription n;
  try {
    n = node_preset(*name);
  } catch (const std::out_of_range&) {
    throw InputError(fmt::format("usage: --node: expected {}, got \"{}\"",
                                 fmt::join(node_preset_names(), ", "), *name));
  }
  if (dpn > static_cast<int>(n.gpus.size()))
    throw InputError(
        fmt::format("usage: --devices-per-node: expected at most {} (the GPUs of node \"{}\"), "
                    "got {}",
                    n.gpus.size(), n.name, dpn));
  if (dpn > 1) intra_bw = intra_node_ring_path(n, dpn).rate_Bps;
  bw = std::min(bw, nic_path(n, dpn).rate_Bps);
}

/// The generated star's bandwidths and latencies within the input limits (sim/core/limits.hpp).
void check_star_limits(double bw, double intra_bw, double lat, double intra_lat) {
  if (bw <= 0 || intra_bw <= 0) throw InputError("usage: bandwidths must be positive");
  if (bw < limits::kMinBandwidth_Bps || intra_bw < limits::kMinBandwidth_Bps)
    throw InputError(
        "usage: --bandwidth, --intra-bandwidth: expected at least 1Bps (the limit on "
        "slow bandwidths)");
  if (lat > limits::kMaxTime_s || intra_lat > limits::kMaxTime_s)
    throw InputError(
        fmt::format("usage: --latency, --intra-latency: expected at most {:.0e}s (the "
                    "limit on input times)",
                    limits::kMaxTime_s));
}

/// The generated star of --bandwidth, --latency (and the intra-node options); returns the
/// closed form of the collective on its routes.
double use_generated_star(const Args& a, CollectiveCli& c) {
  const Collective& coll = *c.coll;
  EngineConfig& cfg = c.cfg;
  const int ranks = c.ranks, dpn = c.dpn, extra = c.extra;
  const double bytes = c.bytes;
  const NetworkModel model = c.model;
  const TransportParams& node_transport = c.node_transport;
  const TransportParams& intra_transport = c.intra_transport;
  std::optional<double> formula;
  double bw = parse_cli_quantity(a, "--bandwidth", "10Gbps", units::parse_bandwidth_Bps,
                                 "a bandwidth such as \"10Gbps\"");
  const double lat =
      parse_cli_quantity(a, "--latency", "1us", units::parse_time_s, "a time such as \"1us\"");
  double intra_bw = parse_cli_quantity(a, "--intra-bandwidth", "16GBps", units::parse_bandwidth_Bps,
                                       "a bandwidth such as \"16GBps\"");
  const double intra_lat = parse_cli_quantity(a, "--intra-latency", "1us", units::parse_time_s,
                                              "a time such as \"1us\"");
  check_star_limits(bw, intra_bw, lat, intra_lat);
  apply_node_option(a, dpn, bw, intra_bw);
  // Host-to-host routes: devices of one node meet over two intra-node links (alpha =
  // --intra-latency); across nodes the route has alpha = --latency exactly.
  // Dedicated servers get nodes of their own after the workers' (first device of each).
  const int worker_nodes = (ranks + dpn - 1) / dpn;
  GeneratedPlatform g = star_for_alpha_beta(worker_nodes + extra, bw, lat);
  g.devices_per_node = dpn;
  if (dpn > 1) {
    if (lat < intra_lat)
      throw InputError("usage: --latency (between nodes) must be >= --intra-latency");
    g.intra_node_link = {intra_bw, intra_lat / 2, {}};
    g.node_link.latency_s = (lat - intra_lat) / 2;
  }
  if (model == NetworkModel::links) {
    g.node_link.transport = node_transport;
    g.intra_node_link.transport = intra_transport;
    // --node gives an achievable DMA rate: the technology's framing efficiency is already in it.
    if (a.has("--node")) g.intra_node_link.transport.efficiency = 1;
    for (const LinkSpec* l : {&g.node_link, &g.intra_node_link})
      if (l->transport.overhead_s > 0 && l->latency_s <= 0 && (l == &g.node_link || dpn > 1))
        throw InputError("usage: a " + l->transport.technology +
                         " link needs a latency > 0 (its per-message overhead is applied as a "
                         "factor of the route latency)");
    cfg.default_transport = node_transport;
  }
  apply_fabric_options(a, g, worker_nodes + extra);
  if (g.spines > 1 && c.fidelity == Fidelity::analytic)
    throw InputError("usage: --spines > 1 (ECMP hash collisions) needs --fidelity flow");
  if (extra > 0 && a.get("--placement").value_or("block") != "block")
    throw InputError("usage: --placement needs block with dedicated servers");
  PlatformModel pm(g);
  cfg.platform_xml = pm.xml();
  for (int h : fabric_rank_hosts(a, g, ranks, dpn)) cfg.worker_hosts.push_back(pm.host_name(h));
  for (int sv = 0; sv < extra; ++sv)
    cfg.worker_hosts.push_back(pm.host_name((worker_nodes + sv) * dpn));
  const double gamma = cfg.reduction_Bps > 0 ? 1.0 / cfg.reduction_Bps : 0.0;
  auto ab = [gamma, model](const RouteCost& c) {
    if (model == NetworkModel::links) {
      AlphaBeta ab = c.links_alpha_beta();
      ab.gamma_s_per_byte = gamma;
      return ab;
    }
    return AlphaBeta{c.latency_s, 1.0 / c.bandwidth_Bps, gamma};
  };
  NetworkCost cost{ab(pm.route(0, worker_nodes > 1 || extra == 0 ? std::min(ranks - 1, dpn)
                                                                 : worker_nodes * dpn)),
                   ab(pm.route(0, std::min(ranks - 1, 1)))};
  if (dpn == 1) cost.intra = cost.inter;
  cfg.group.tuning_cost = cost;
  if (ranks > 1 || extra > 0)
    formula = coll.formula_s(cfg.group, bytes, cost);
  else
    formula = 0.0;
  return *formula;
}

/// The one-line or JSON report of one collective.
void print_collective(const Args& a, const CollectiveCli& c, const EngineResult& r,
                      std::optional<double> formula) {
  const Collective& coll = *c.coll;
  const int ranks = c.ranks;
  const double bytes = c.bytes;
  const std::string &model = network_model_name(c.model), &fidelity = fidelity_name(c.fidelity);
  const EngineConfig& cfg = c.cfg;
  if (a.has("--json")) {
    json j = {{"algorithm", coll.name()},
              {"ranks", ranks},
              {"bytes", bytes},
              {"time_s", r.simulated_time_s},
              {"activities", r.activities},
              {"fidelity", fidelity},
              {"network_model", model}};
    j["formula_s"] = formula ? json(*formula) : json(nullptr);
    if (cfg.group.op != CollectiveOp::allreduce) j["operation"] = collective_op_name(cfg.group.op);
    // Selectors (auto, nccl) and nccl_tuner say what ran.
    if (const std::string c = coll.chosen(cfg.group, bytes); c != coll.name()) j["chosen"] = c;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format("{} {}, {} ranks, {:.0f} bytes, network {}, {}: {}", coll.name(),
                             collective_op_name(cfg.group.op), ranks, bytes, model, fidelity,
                             fmt_time(r.simulated_time_s));
    if (formula) std::cout << fmt::format(" (formula {})", fmt_time(*formula));
    std::cout << "\n";
  }
}

int cmd_collective(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kCollectiveHelp << algorithm_options_help(), 0;
  Args a = collective_args(argv);
  CollectiveCli c;
  if (!a.positional.empty())
    throw InputError("usage: sgdsim collective takes no positional argument (see --help)");
  const Collective& coll = collective_option(a, "--algorithm", "ring");
  if (!a.get("--ranks")) throw InputError("usage: --ranks is required (see --help)");
  const int ranks = parse_count(a, "--ranks", 1, 1);
  if (!a.get("--bytes")) throw InputError("usage: --bytes is required (see --help)");
  double bytes = parse_cli_quantity(a, "--bytes", "", units::parse_size_bytes,
                                    "a size such as \"100MB\" or a byte count", true);
  if (bytes > limits::kMaxMessageBytes)
    throw InputError(
        fmt::format("usage: --bytes: expected at most {:.0f} bytes (2^48, the limit "
                    "on message sizes), got \"{}\"",
                    limits::kMaxMessageBytes, *a.get("--bytes")));
  const auto wall_start = std::chrono::steady_clock::now();
  if (auto v = a.get("--time-limit")) (void)parse_time_limit(*v);  // a bad value fails first
  const std::string default_model = network_model_name(NetworkModel::lv08);
  const std::string model_name = a.get("--network-model").value_or(default_model);
  const std::optional<NetworkModel> named_model = network_model_named(model_name);
  if (!named_model)
    throw InputError("usage: --network-model: expected " +
                     choices_from(network_model_names(), default_model) + ", got \"" + model_name +
                     "\"");
  const NetworkModel model = *named_model;
  if ((a.has("--technology") || a.has("--intra-technology")) && model != NetworkModel::links)
    throw InputError("usage: --technology and --intra-technology need --network-model links");
  TransportParams node_transport = technology_option(a, "--technology", "tcp");
  if (a.has("--sockets")) node_transport = with_sockets(a, model, node_transport);
  const TransportParams intra_transport = technology_option(a, "--intra-technology", "pcie");
  const std::string default_fidelity = fidelity_name(Fidelity::flow);
  const std::string fidelity_text = a.get("--fidelity").value_or(default_fidelity);
  const std::optional<Fidelity> named_fidelity = fidelity_named(fidelity_text);
  if (!named_fidelity)
    throw InputError("usage: --fidelity: expected " +
                     choices_from(fidelity_names(), default_fidelity) + ", got \"" + fidelity_text +
                     "\"");
  const Fidelity fidelity = *named_fidelity;
  c.coll = &coll;
  c.ranks = ranks;
  c.bytes = bytes;
  c.model = model;
  c.fidelity = fidelity;
  c.node_transport = node_transport;
  c.intra_transport = intra_transport;
  c.dpn = parse_count(a, "--devices-per-node", 1, 1);
  read_group_options(a, c);
  c.extra = coll.extra_ranks(c.cfg.group);
  c.cfg.extra_hosts = c.extra;
  // Before the platform is generated (10^9 ranks would not fit in memory).
  const std::string warning =
      check_collective_resources(coll, c.cfg.group, bytes, fidelity == Fidelity::flow,
                                 ranks + c.extra, default_guard_limits(), a.has("--force"));
  if (!warning.empty()) std::cerr << "sgdsim: warning: " << warning << "\n";
  check_cfg(a.all("--cfg"));
  c.cfg.cfg = a.all("--cfg");
  std::optional<double> formula;
  if (auto platform_file = a.get("--platform"))
    use_platform_file(a, *platform_file, c);
  else
    formula = use_generated_star(a, c);
  arm_time_limit_option(a, wall_start);
  EngineResult r = run_single_collective(c.cfg, coll, bytes);
  disarm_time_limit();
  print_collective(a, c, r, formula);
  return 0;
}

int cmd_platform(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kPlatformHelp, 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(
      argv,
      {"--topology", "--nodes", "--devices-per-node", "--node-bandwidth", "--node-latency",
       "--intra-bandwidth", "--intra-latency", "--device-speed", "--nodes-per-leaf",
       "--oversubscription", "--output", "--node-technology", "--intra-technology", "--spines",
       "--ecmp-seed", "--ecmp-connections", "--time-limit"},
      {});
  arm_time_limit_option(a, wall_start);
  json raw = {
      {"model",
       {{"name", "none"},
        {"kind", "flops"},
        {"layers",
         {{{"name", "l"}, {"parameters", 0}, {"forward_flops", 0}, {"backward_flops", 0}}}}}}};
  std::string file = "<command line>";
  if (a.positional.size() > 1)
    throw InputError("usage: sgdsim platform [SCENARIO.json] [options] (see --help)");
  if (a.positional.size() == 1) {
    file = a.positional[0];
    raw = parse_json_file(file);
    if (!raw.is_object()) throw InputError(file, "/", "expected a JSON object");
    if (raw.contains("platform") && raw["platform"].is_object() && raw["platform"].contains("file"))
      throw InputError(file, "/platform/file",
                       "the scenario uses a platform file, nothing to generate");
  }
  const std::vector<std::pair<std::string, std::string>> map = {
      {"--topology", "platform.generate.topology"},
      {"--nodes", "platform.generate.nodes"},
      {"--devices-per-node", "platform.generate.devices_per_node"},
      {"--node-bandwidth", "platform.generate.node_link.bandwidth"},
      {"--node-latency", "platform.generate.node_link.latency"},
      {"--node-technology", "platform.generate.node_link.technology"},
      {"--intra-bandwidth", "platform.generate.intra_node_link.bandwidth"},
      {"--intra-technology", "platform.generate.intra_node_link.technology"},
      {"--intra-latency", "platform.generate.intra_node_link.latency"},
      {"--device-speed", "platform.generate.device_speed"},
      {"--nodes-per-leaf", "platform.generate.nodes_per_leaf"},
      {"--oversubscription", "platform.generate.oversubscription"},
      {"--spines", "platform.generate.spines"},
      {"--ecmp-seed", "platform.generate.ecmp_seed"},
      {"--ecmp-connections", "platform.generate.ecmp_connections"}};
  for (const auto& [opt, path] : map)
    if (auto v = a.get(opt)) apply_override(raw, path + "=" + *v);
  Scenario sc = parse_scenario(raw, file);
  PlatformModel pm(*sc.platform.generate);
  const std::string xml = pm.xml();
  disarm_time_limit();
  if (auto out = a.get("--output"))
    write_file_atomic(*out, xml);
  else
    std::cout << xml;
  return 0;
}

/// One shipped profile's row of `sgdsim profiles`.
json profile_row(const fs::path& file) {
  const json p = parse_json_file(file.string());
  int64_t parameters = 0;
  size_t layers = 0;
  if (p.contains("layers") && p["layers"].is_array()) {
    layers = p["layers"].size();
    for (const auto& l : p["layers"])
      if (l.is_object() && l.contains("parameters") && l["parameters"].is_number())
        parameters += l["parameters"].get<int64_t>();
  }
  json row = {
      {"name", file.stem().string()}, {"kind", p.value("kind", "")},     {"layers", layers},
      {"parameters", parameters},     {"source", p.value("source", "")}, {"file", file.string()}};
  row["batch_size"] = p.contains("batch_size") ? p["batch_size"] : json(nullptr);
  return row;
}

int cmd_profiles(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kProfilesHelp, 0;
  Args a = parse_args(argv, {}, {"--json"});
  if (!a.positional.empty())
    throw InputError("usage: sgdsim profiles takes no positional argument (see --help)");
  const fs::path dir = fs::path(data_dir()) / "models" / "profiles";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir.string(), "", "no profile folder (set SGDSIM_DATA_DIR?)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end(),
            [](const fs::path& x, const fs::path& y) { return x.stem() < y.stem(); });
  json rows = json::array();
  for (const auto& f : files) rows.push_back(profile_row(f));
  if (a.has("--json")) return std::cout << rows.dump(2) << "\n", 0;
  std::cout << fmt::format("{:<16} {:<14} {:>6} {:>13}  {}\n", "name", "kind", "layers",
                           "parameters", "source");
  for (const auto& r : rows) {
    std::string kind = r["kind"];
    if (!r["batch_size"].is_null()) kind += fmt::format(" @{}", r["batch_size"].dump());
    std::string source = r["source"];
    if (source.size() > 90) source = source.substr(0, 87) + "...";
    std::cout << fmt::format("{:<16} {:<14} {:>6} {:>13}  {}\n", r["name"].get<std::string>(), kind,
                             r["layers"].get<size_t>(), r["parameters"].get<int64_t>(), source);
  }
  std::cout << "(" << dir.string() << "; use a name as \"model\" or --set model=NAME)\n";
  return 0;
}

}  // namespace

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kMainHelp;
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& cmd = args[0];
  if (cmd == "run") return cmd_run(rest);
  if (cmd == "sweep") return cmd_sweep(rest);
  if (cmd == "predict") return cmd_predict(rest);
  if (cmd == "dag") return cmd_dag(rest);
  if (cmd == "collective") return cmd_collective(rest);
  if (cmd == "platform") return cmd_platform(rest);
  if (cmd == "calibrate") return cmd_calibrate(rest);
  if (cmd == "version" || cmd == "--version")
    return std::cout << "sgdsim " << SGDSIM_VERSION << "\n", 0;
  if (cmd == "trace") return cmd_trace(rest);
  if (cmd == "validate") return cmd_validate(rest);
  if (cmd == "profiles") return cmd_profiles(rest);
  if (cmd == "schema") return cmd_schema(rest);
  throw InputError("usage: unknown command \"" + cmd + "\" (see sgdsim --help)");
}

}  // namespace sgdsim
