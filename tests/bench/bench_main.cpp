// `make bench`: runs the benchmark rows and prints one table. Each row is measured in this
// invocation, and every ratio compares two rows of the same run.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/learn/learn.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace sgdsim;

namespace {

struct Measured {
  double wall_s = 0;
  double cpu_s = 0;  // user + system: what a machine shared with other jobs does not inflate
  long max_rss_kb = 0;
  std::string out;
};

Measured measure(const std::vector<std::string>& argv) {
  fs::path out_file = fs::temp_directory_path() / fmt::format("sgdsim-bench-{}.out", ::getpid());
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  Measured m;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.max_rss_kb = usage.ru_maxrss;
  m.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  FILE* f = std::fopen(out_file.c_str(), "r");
  if (f != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) m.out.append(buf, n);
    std::fclose(f);
  }
  fs::remove(out_file);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("benchmark command failed: " + cmd);
  }
  return m;
}

/// Runs `argv` `n` times (n odd); the run of median wall time.
Measured measure_median(const std::vector<std::string>& argv, int n) {
  std::vector<Measured> runs;
  for (int k = 0; k < n; ++k) runs.push_back(measure(argv));
  std::sort(runs.begin(), runs.end(),
            [](const Measured& a, const Measured& b) { return a.wall_s < b.wall_s; });
  return runs[static_cast<size_t>(n / 2)];
}

json run_summary(const std::string& sgdsim, const std::string& scenario, int iterations,
                 Measured* m) {
  fs::path out =
      fs::temp_directory_path() / fmt::format("sgdsim-bench-{}-{}", ::getpid(), iterations);
  *m = measure({sgdsim, "run", scenario, "--set", "iterations=" + std::to_string(iterations),
                "--out", out.string(), "--quiet"});
  std::ifstream in(out / "summary.json");
  json s = json::parse(in);
  fs::remove_all(out);
  return s;
}

/// Runs `sgdsim run SCENARIO --set S...` into a scratch folder (removed afterwards).
Measured run_set(const std::string& sgdsim, const std::string& scenario,
                 const std::vector<std::string>& sets) {
  const fs::path out = fs::temp_directory_path() / fmt::format("sgdsim-bench-{}-set", ::getpid());
  std::vector<std::string> argv = {sgdsim, "run", scenario, "--out", out.string(), "--quiet"};
  for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
  Measured m = measure(argv);
  fs::remove_all(out);
  return m;
}

/// The analytic scheduler's rows (issue 18): ResNet-50 sync at 1k-65k workers x 100 iterations
/// with each row's ratio to the previous, pseudo-sync and async at 16,384 workers, and the
/// ASTRA-sim comparison workload at 1,024 workers x 10 iterations.
void analytic_rows(const std::string& sgdsim, std::vector<std::array<std::string, 4>>& rows) {
  const std::string minimal = "experiments/examples/02-minimal.json";
  const std::vector<std::string> common = {"iterations=100", "fidelity=analytic",
                                           "network_model=ideal", "output.timeline=false"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), common.begin(), common.end());
    return more;
  };
  auto figures = [](const Measured& m) {
    return fmt::format("{:.2f} s wall, {:.2f} s CPU", m.wall_s, m.cpu_s);
  };
  Measured prev;
  int prev_workers = 0;
  for (int workers : {1024, 4096, 16384, 65536}) {
    const Measured m = run_set(sgdsim, minimal, with({fmt::format("workers.count={}", workers)}));
    std::string note = fmt::format("{:.0f} MiB RSS", m.max_rss_kb / 1024.0);
    if (prev_workers > 0) {
      // Growth exponent of wall and CPU time against workers (target <= 1.1).
      const double x = std::log(static_cast<double>(workers) / prev_workers);
      note += fmt::format("; x{:.2f} wall, x{:.2f} CPU the previous row (exponent {:.2f} / {:.2f})",
                          m.wall_s / prev.wall_s, m.cpu_s / prev.cpu_s,
                          std::log(m.wall_s / prev.wall_s) / x, std::log(m.cpu_s / prev.cpu_s) / x);
    }
    if (workers == 65536) note += "; target < 10 s, < 2 GB";
    rows.push_back({fmt::format("sgdsim run: ResNet-50 sync (WFBP, ring, star, ideal), {} workers "
                                "x 100 iterations (analytic)",
                                workers),
                    figures(m), "", note});
    prev = m;
    prev_workers = workers;
  }
  for (const auto& [what, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"pseudo-sync", {"scheme.type=pseudo_sync"}},
           {"async (4 servers)", {"scheme.type=async", "scheme.servers=4"}}}) {
    std::vector<std::string> all = sets;
    all.push_back("workers.count=16384");
    const Measured m = run_set(sgdsim, minimal, with(all));
    rows.push_back({fmt::format("sgdsim run: ResNet-50 {}, 16,384 workers x 100 iterations "
                                "(analytic)",
                                what),
                    figures(m), "",
                    fmt::format("{:.0f} MiB RSS; target < 10 s", m.max_rss_kb / 1024.0)});
  }
  const Measured astra = run_set(sgdsim, "experiments/bench/astra-sim-workload.json", {});
  rows.push_back({"sgdsim run: ASTRA-sim workload, 1,024 workers x 10 iterations (analytic)",
                  figures(astra), "",
                  fmt::format("{:.0f} MiB RSS; target < 1 s", astra.max_rss_kb / 1024.0)});
}

/// The analytic scheduler at its largest: ResNet-50 sync at 262,144 workers and async (4
/// servers) at 65,536, each x 100 iterations, measured with `sgdsim` and, when given,
/// `baseline` (the sgdsim of another tree: make bench builds BENCH_BASELINE's) one after the
/// other in this run, with the CPU time's ratio.
void analytic_scale_rows(const std::string& sgdsim, const std::string& baseline,
                         std::vector<std::array<std::string, 4>>& rows) {
  const std::string minimal = "experiments/examples/02-minimal.json";
  const std::vector<std::string> common = {"iterations=100", "fidelity=analytic",
                                           "network_model=ideal", "output.timeline=false"};
  struct Case {
    std::string what;
    std::vector<std::string> sets;
    std::string target;
  };
  const std::vector<Case> cases = {
      {"sync (WFBP, ring, star, ideal), 262,144 workers",
       {"workers.count=262144"},
       "target < 20 s CPU, < 2 GB"},
      {"async (4 servers), 65,536 workers",
       {"scheme.type=async", "scheme.servers=4", "workers.count=65536"},
       "target < 20 s CPU"}};
  for (const Case& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.insert(sets.end(), common.begin(), common.end());
    const Measured m = run_set(sgdsim, minimal, sets);
    std::string note = fmt::format("{:.0f} MiB RSS", m.max_rss_kb / 1024.0);
    if (!baseline.empty()) {
      const Measured b = run_set(baseline, minimal, sets);
      note += fmt::format("; x{:.2f} CPU, x{:.2f} RSS the baseline tree ({:.2f} s CPU, {:.0f} MiB)",
                          m.cpu_s / b.cpu_s, static_cast<double>(m.max_rss_kb) / b.max_rss_kb,
                          b.cpu_s, b.max_rss_kb / 1024.0);
    }
    rows.push_back({fmt::format("sgdsim run: ResNet-50 {} x 100 iterations (analytic)", c.what),
                    fmt::format("{:.2f} s wall, {:.2f} s CPU", m.wall_s, m.cpu_s), "",
                    note + "; " + c.target});
  }
}

/// The ASTRA-sim comparison workload (issue 18) at 64, 256 and 1,024 workers, analytic and
/// flow, each row with its ratio to the previous row of its series, all measured in this run.
/// Flow at 1,024 workers runs 1 iteration (10 take about ten times as long: every iteration
/// is the same four ring allreduces); flow with flow_symmetry "rotation" (rank 0's messages
/// only, the same outputs) and with flow_private_routes "closed_form" (the same outputs to
/// rounding) run all 10.
void astra_rows(const std::string& sgdsim, std::vector<std::array<std::string, 4>>& rows) {
  const std::string scenario = "experiments/bench/astra-sim-workload.json";
  for (const std::string fidelity :
       {"analytic", "flow", "flow, rotation symmetry", "flow, private routes in closed form"}) {
    const bool rotation = fidelity == "flow, rotation symmetry";
    const bool closed = fidelity == "flow, private routes in closed form";
    Measured prev;
    int prev_workers = 0, prev_iterations = 0;
    for (int workers : {64, 256, 1024}) {
      const int iterations = fidelity == "flow" && workers == 1024 ? 1 : 10;
      std::vector<std::string> sets = {
          rotation || closed ? "fidelity=flow" : "fidelity=" + fidelity,
          fmt::format("workers.count={}", workers),
          fmt::format("platform.generate.nodes={}", workers),
          fmt::format("iterations={}", iterations)};
      if (rotation) sets.push_back("flow_symmetry=rotation");
      if (closed) sets.push_back("flow_private_routes=closed_form");
      if (fidelity == "flow") sets.push_back("flow_private_routes=simgrid");  // plain flow
      if (iterations == 1) sets.push_back("warmup_iterations=0");
      const Measured m = run_set(sgdsim, scenario, sets);
      std::string note = fmt::format("{:.0f} MiB RSS", m.max_rss_kb / 1024.0);
      if (prev_workers > 0) {
        // Per iteration, so that the 1-iteration row compares with the 10-iteration ones.
        const double per = m.cpu_s / iterations, prev_per = prev.cpu_s / prev_iterations;
        note += fmt::format("; x{:.2f} CPU per iteration the previous row (exponent {:.2f})",
                            per / prev_per,
                            std::log(per / prev_per) / std::log(double(workers) / prev_workers));
      }
      if (workers == 1024)
        note += fidelity == "analytic" ? "; target < 1 s" : "; target < 60 s for 10 iterations";
      rows.push_back({fmt::format("sgdsim run: ASTRA-sim workload, {} workers x {} iteration{} "
                                  "({})",
                                  workers, iterations, iterations == 1 ? "" : "s", fidelity),
                      fmt::format("{:.2f} s wall, {:.2f} s CPU", m.wall_s, m.cpu_s), "", note});
      prev = m;
      prev_workers = workers;
      prev_iterations = iterations;
    }
  }
}

/// Example 01 (ResNet-50 sync, WFBP, 4-GPU nodes under a fat tree of 4 nodes per leaf) at
/// 1,024 GPUs, 3 iterations, plain flow against flow_symmetry "rotation" (one leaf's messages,
/// byte-identical outputs), ring and hierarchical, uplinks 1:1 and 4:1; then rotation alone at
/// 1,024 and 16,384 GPUs x 10 iterations.
void fat_tree_rows(const std::string& sgdsim, std::vector<std::array<std::string, 4>>& rows) {
  const std::string scenario = "experiments/examples/01-resnet50-sync-fat-tree.json";
  auto sets = [](int gpus, int iterations, const std::string& algorithm, int over,
                 const std::string& symmetry) {
    return std::vector<std::string>{fmt::format("workers.count={}", gpus),
                                    fmt::format("platform.generate.nodes={}", gpus / 4),
                                    fmt::format("iterations={}", iterations),
                                    "warmup_iterations=1",
                                    "output.timeline=false",
                                    "collective.algorithm=" + algorithm,
                                    fmt::format("platform.generate.oversubscription={}", over),
                                    "flow_symmetry=" + symmetry};
  };
  for (const std::string algorithm : {"ring", "hierarchical"})
    for (int over : {1, 4}) {
      const Measured plain = run_set(sgdsim, scenario, sets(1024, 3, algorithm, over, "none"));
      const Measured leaf = run_set(sgdsim, scenario, sets(1024, 3, algorithm, over, "rotation"));
      rows.push_back(
          {fmt::format("sgdsim run: example 01, 1,024 GPUs x 3 it., {}, uplinks {}:1 (flow)",
                       algorithm, over),
           fmt::format("{:.2f} s CPU", leaf.cpu_s), fmt::format("plain {:.2f} s CPU", plain.cpu_s),
           fmt::format("rotation by leaves: x{:.1f} faster; target >= 5x",
                       plain.cpu_s / leaf.cpu_s)});
    }
  for (int gpus : {1024, 16384})
    for (const std::string algorithm : {"ring", "hierarchical"}) {
      const Measured m = run_set(sgdsim, scenario, sets(gpus, 10, algorithm, 1, "rotation"));
      rows.push_back({fmt::format("sgdsim run: example 01, {} GPUs x 10 it., {}, rotation (flow)",
                                  gpus, algorithm),
                      fmt::format("{:.2f} s CPU", m.cpu_s),
                      fmt::format("{:.0f} MiB RSS", m.max_rss_kb / 1024.0),
                      gpus == 1024 ? "target < 10 s CPU" : "target < 120 s CPU"});
    }
}

/// The cells of a Markdown table line "| a | b |", trimmed (none for another line).
std::vector<std::string> markdown_cells(const std::string& line) {
  std::vector<std::string> cells;
  if (line.empty() || line[0] != '|') return cells;
  std::string cell;
  for (size_t k = 1; k < line.size(); ++k) {
    if (line[k] != '|') {
      cell += line[k];
      continue;
    }
    const size_t first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    cell.clear();
  }
  return cells;
}

/// sgdsim and ASTRA-sim side by side (experiments/astra_sim/fat_tree_side_by_side.sh and
/// side_by_side.sh): example 01 on 4-GPU nodes at 256 and 1,024 GPUs, exported as Chakra ET
/// files with ASTRA-sim's Ring(4) x Switch network and system files, and the DP workload at 256
/// ranks x 10 iterations; `astra_sim` is ASTRA-sim's congestion-unaware binary ("-": sgdsim
/// only, ASTRA-sim's inputs left in the scripts' folders). One row per line of their tables.
void astra_sim_rows(const std::string& sgdsim, const std::string& astra_sim,
                    std::vector<std::array<std::string, 4>>& rows) {
  const fs::path out = fs::temp_directory_path() / fmt::format("sgdsim-bench-{}-astra", ::getpid());
  struct Script {
    std::string path, what;
    std::vector<std::string> sizes;
  };
  for (const Script& sc :
       {Script{"experiments/astra_sim/fat_tree_side_by_side.sh",
               "example 01, GPUs (nodes) x 1 it.",
               {"256", "1024"}},
        Script{"experiments/astra_sim/side_by_side.sh", "DP workload, ranks x it.", {"256"}}}) {
    std::vector<std::string> argv = {"/bin/bash", sc.path, sgdsim, astra_sim,
                                     (out / fs::path(sc.path).stem()).string()};
    argv.insert(argv.end(), sc.sizes.begin(), sc.sizes.end());
    const Measured m = measure(argv);
    // Table lines: size, ASTRA-sim, simulated, analytic CPU, flow CPU, closed-form CPU,
    // rotation CPU, flow / ASTRA-sim, closed form / ASTRA-sim.
    std::istringstream lines(m.out);
    for (std::string line; std::getline(lines, line);) {
      const std::vector<std::string> cells = markdown_cells(line);
      if (cells.size() != 9 || !std::isdigit(static_cast<unsigned char>(cells[0][0]))) continue;
      rows.push_back(
          {fmt::format("ASTRA-sim side by side: {} {}", sc.what, cells[0]), "flow " + cells[4],
           "ASTRA-sim " + cells[1],
           fmt::format("flow / ASTRA-sim CPU {}; closed form {} ({}); sgdsim simulated {}; "
                       "analytic {}, rotation {}",
                       cells[7].empty() ? "-" : cells[7], cells[5],
                       cells[8].empty() ? "-" : cells[8], cells[2], cells[3], cells[6])});
    }
  }
  if (astra_sim == "-")
    rows.push_back({"ASTRA-sim side by side", "not run", "",
                    fmt::format("no --astra-sim binary (make bench ASTRA_SIM=...); its inputs "
                                "are in {}",
                                out.string())});
  else
    fs::remove_all(out);
}

void print_rows(const std::vector<std::array<std::string, 4>>& rows) {
  std::printf("%-66s %-16s %-22s %s\n", "benchmark", "figure", "rate", "notes");
  std::printf("%s\n", std::string(140, '-').c_str());
  for (const auto& row : rows)
    std::printf("%-66s %-16s %-22s %s\n", row[0].c_str(), row[1].c_str(), row[2].c_str(),
                row[3].c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string sgdsim = "./build/sgdsim", raw = "./build/raw_simgrid_dag";
  std::string smpi_runner = "tests/smpi/run_smpi_allreduce.sh";
  std::string only, baseline, astra_sim = "-";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--sgdsim") sgdsim = argv[i + 1];
    // The sgdsim of the tree to compare the analytic scale rows with (none: no ratio).
    if (a == "--baseline") baseline = argv[i + 1];
    if (a == "--raw") raw = argv[i + 1];
    // ASTRA-sim's congestion-unaware analytical binary, for the side-by-side rows ("-": none).
    if (a == "--astra-sim") astra_sim = argv[i + 1];
    if (a == "--smpi-runner") smpi_runner = argv[i + 1];
    // "analytic": only the analytic scheduler's rows; "scale": only its largest runs (against
    // the baseline); "astra": only the ASTRA-sim workload's; "fattree": only example 01's on
    // fat trees of 1,024 and 16,384 GPUs (flow, plain and with rotation symmetry);
    // "astra-sim": only sgdsim and ASTRA-sim side by side
    if (a == "--rows") only = argv[i + 1];
  }
  std::vector<std::array<std::string, 4>> rows;
  if (only == "analytic" || only == "scale") {
    if (only == "analytic") analytic_rows(sgdsim, rows);
    analytic_scale_rows(sgdsim, baseline, rows);
    print_rows(rows);
    return 0;
  }
  if (only == "astra") {
    astra_rows(sgdsim, rows);
    print_rows(rows);
    return 0;
  }
  if (only == "fattree") {
    fat_tree_rows(sgdsim, rows);
    print_rows(rows);
    return 0;
  }
  if (only == "astra-sim") {
    astra_sim_rows(sgdsim, astra_sim, rows);
    print_rows(rows);
    return 0;
  }
  const std::string scenario = "experiments/examples/01-resnet50-sync-fat-tree.json";

  // 64-worker ResNet-50 sync (flow), sgdsim vs the raw SimGrid baseline, same DAG.
  const int iters = 50;
  Measured ms;
  json s = run_summary(sgdsim, scenario, iters, &ms);
  double acts = s["activities"].get<double>();
  double sim_wall = s["wall_time_s"].get<double>();
  rows.push_back({"sgdsim run: ResNet-50 sync, 64 workers, 50 iterations (flow)",
                  fmt::format("{:.2f} s wall", sim_wall),
                  fmt::format("{:.3g} activities/s", acts / sim_wall),
                  fmt::format("{:.0f} activities", acts)});
  Measured mr = measure({raw, scenario, std::to_string(iters)});
  json r = json::parse(mr.out);
  double raw_wall = r["wall_time_s"].get<double>();
  rows.push_back(
      {"raw SimGrid program, same DAG (tests/bench/raw_simgrid_dag.cpp)",
       fmt::format("{:.2f} s wall", raw_wall),
       fmt::format("{:.3g} activities/s", r["activities"].get<double>() / raw_wall),
       fmt::format("simulated {:.6f} s vs sgdsim {:.6f} s", r["simulated_time_s"].get<double>(),
                   s["simulated_time_s"].get<double>())});
  rows.push_back({"ratio sgdsim / raw SimGrid (wall time; target <= 1.5)",
                  fmt::format("{:.2f}x", sim_wall / raw_wall), "", ""});

  // Peak RSS of the same run at 200 and 2,000 iterations.
  Measured m200, m2000;
  run_summary(sgdsim, scenario, 200, &m200);
  run_summary(sgdsim, scenario, 2000, &m2000);
  rows.push_back({"peak RSS, 64 workers, 200 iterations",
                  fmt::format("{:.1f} MiB", m200.max_rss_kb / 1024.0),
                  fmt::format("{:.1f} s wall", m200.wall_s), ""});
  rows.push_back({"peak RSS, 64 workers, 2,000 iterations",
                  fmt::format("{:.1f} MiB", m2000.max_rss_kb / 1024.0),
                  fmt::format("{:.1f} s wall", m2000.wall_s),
                  fmt::format("{:.3f}x the 200-iteration RSS (target <= 1.15)",
                              static_cast<double>(m2000.max_rss_kb) / m200.max_rss_kb)});

  // Ring allreduce of 8 ranks x 100 MB (flow, ideal) against SMPI as an
  // unmodified MPI program runs under SMPI (real malloc'd buffers, MPI_SUM) and with SMPI's
  // shared-malloc optimisation. Medians of 5 sgdsim runs (about 20 ms each) and 3 SMPI runs.
  const bool have_smpi =
      fs::exists(smpi_runner) && ::system("command -v smpirun >/dev/null 2>&1") == 0;
  {
    fs::path star8 =
        fs::temp_directory_path() / fmt::format("sgdsim-bench-{}-star8.xml", ::getpid());
    measure({sgdsim, "platform", "--nodes", "8", "--node-bandwidth", "10Gbps", "--node-latency",
             "5us", "--output", star8.string()});
    const Measured m8 = measure_median(
        {sgdsim, "collective", "--algorithm", "ring", "--ranks", "8", "--bytes", "100000000",
         "--platform", star8.string(), "--network-model", "ideal", "--json"},
        5);
    const double wall8 = m8.wall_s;
    const json c8 = json::parse(m8.out);
    rows.push_back({"sgdsim collective: ring, 8 ranks x 100 MB (flow, ideal; median of 5)",
                    fmt::format("{:.3f} s wall", wall8), "",
                    fmt::format("simulated {:.6f} s", c8["time_s"].get<double>())});
    if (have_smpi) {
      ::setenv("SMPI_OP", "sum", 1);
      for (const char* alloc : {"malloc", "shared"}) {
        ::setenv("SMPI_ALLOC", alloc, 1);
        const Measured sm = measure_median(
            {"/bin/bash", smpi_runner, "ring", "8", "100000000", star8.string(), "ideal"}, 3);
        json sj = json::parse(sm.out);
        rows.push_back(
            {fmt::format("SMPI MPI_Allreduce (lr), 8 ranks, MPI_SUM, {} buffers (median of 3)",
                         alloc),
             fmt::format("{:.2f} s wall, {:.2f} GiB RSS", sm.wall_s,
                         sj["max_rss_kb"].get<double>() / (1024.0 * 1024.0)),
             fmt::format("{:.0f}x sgdsim's wall{}", sm.wall_s / wall8,
                         std::string(alloc) == "malloc" ? " (target >= 50x)" : ""),
             fmt::format("simulated {:.6f} s ({:+.1e} vs sgdsim)", sj["time_s"].get<double>(),
                         c8["time_s"].get<double>() / sj["time_s"].get<double>() - 1)});
      }
      ::unsetenv("SMPI_ALLOC");
    }
    fs::remove(star8);
  }

  // One ring allreduce, P=256 x 100 MiB (flow), sgdsim vs SMPI on the same platform
  // (SMPI with shared-malloc buffers: 256 ranks x 2 x 100 MiB of real buffers would need 54 GB).
  fs::path platform =
      fs::temp_directory_path() / fmt::format("sgdsim-bench-{}-star256.xml", ::getpid());
  measure({sgdsim, "platform", "--nodes", "256", "--node-bandwidth", "10Gbps", "--node-latency",
           "5us", "--output", platform.string()});
  const std::string bytes = "104857600";
  Measured coll =
      measure({sgdsim, "collective", "--algorithm", "ring", "--ranks", "256", "--bytes", bytes,
               "--platform", platform.string(), "--network-model", "ideal", "--json"});
  json cj = json::parse(coll.out);
  rows.push_back({"sgdsim collective: ring, 256 ranks x 100 MiB (flow, ideal)",
                  fmt::format("{:.2f} s wall", coll.wall_s),
                  fmt::format("{:.1f} MiB RSS", coll.max_rss_kb / 1024.0),
                  fmt::format("simulated {:.6f} s", cj["time_s"].get<double>())});
  if (have_smpi) {
    for (const char* op : {"sum", "noop"}) {
      ::setenv("SMPI_OP", op, 1);
      Measured sm =
          measure({"/bin/bash", smpi_runner, "ring", "256", bytes, platform.string(), "ideal"});
      json sj = json::parse(sm.out);
      rows.push_back(
          {fmt::format("SMPI MPI_Allreduce (lr), 256 ranks, op {}, shared buffers", op),
           fmt::format("{:.2f} s wall", sm.wall_s),
           fmt::format("{:.1f}x sgdsim's wall", sm.wall_s / coll.wall_s),
           fmt::format("simulated {:.6f} s ({:+.1e} vs sgdsim)", sj["time_s"].get<double>(),
                       cj["time_s"].get<double>() / sj["time_s"].get<double>() - 1)});
    }
  } else {
    rows.push_back(
        {"SMPI MPI_Allreduce (lr)", "skipped", "", "smpirun or the runner script not found"});
  }
  fs::remove(platform);

  // A 16,384-rank analytic allreduce (one timed activity; platform of 16,384 hosts).
  Measured big = measure({sgdsim, "collective", "--algorithm", "ring", "--ranks", "16384",
                          "--bytes", "100MB", "--fidelity", "analytic", "--json"});
  rows.push_back({"sgdsim collective: ring, 16,384 ranks x 100 MB (analytic)",
                  fmt::format("{:.2f} s wall", big.wall_s),
                  fmt::format("{:.1f} MiB RSS", big.max_rss_kb / 1024.0),
                  fmt::format("simulated {:.6f} s", json::parse(big.out)["time_s"].get<double>())});

  // 1,024 workers (256 nodes x 4), ResNet-50 pseudo-sync, hierarchical allreduce.
  const std::string big1024 = "experiments/bench/1024-pseudo-sync-fat-tree.json";
  Measured flow =
      measure({sgdsim, "run", big1024, "--set", "iterations=10", "--out",
               (fs::temp_directory_path() / "sgdsim-bench-1024-flow").string(), "--quiet"});
  rows.push_back({"sgdsim run: 1,024 workers pseudo-sync, 10 iterations (flow, hierarchical)",
                  fmt::format("{:.1f} s wall", flow.wall_s),
                  fmt::format("{:.1f} MiB RSS", flow.max_rss_kb / 1024.0), "target: under 60 s"});
  Measured ana = measure(
      {sgdsim, "run", big1024, "--set", "iterations=100", "--set", "fidelity=analytic", "--out",
       (fs::temp_directory_path() / "sgdsim-bench-1024-analytic").string(), "--quiet"});
  rows.push_back({"sgdsim run: 1,024 workers pseudo-sync, 100 iterations (analytic)",
                  fmt::format("{:.1f} s wall", ana.wall_s),
                  fmt::format("{:.1f} MiB RSS", ana.max_rss_kb / 1024.0), "target: under 10 s"});
  fs::remove_all(fs::temp_directory_path() / "sgdsim-bench-1024-flow");
  fs::remove_all(fs::temp_directory_path() / "sgdsim-bench-1024-analytic");
  analytic_rows(sgdsim, rows);
  analytic_scale_rows(sgdsim, baseline, rows);
  astra_rows(sgdsim, rows);
  fat_tree_rows(sgdsim, rows);
  astra_sim_rows(sgdsim, astra_sim, rows);

  // The MLP step against plain GEMMs of the same shapes; a 16-worker 2,000-step
  // Fashion-MNIST run (real math coupled to the simulation).
  learn::StepBenchmark sb = learn::benchmark_step(784, {256, 128}, 10, 64, 400);
  rows.push_back(
      {"MLP 784-256-128-10 gradient step, batch 64 (models/learn)",
       fmt::format("{:.1f} GFLOP/s", sb.step_gflops),
       fmt::format("GEMM {:.1f} GFLOP/s", sb.gemm_gflops),
       fmt::format("{:.0f} % of GEMM (target >= 50 %)", 100 * sb.step_gflops / sb.gemm_gflops)});
  learn::StepBenchmark cb = learn::benchmark_cnn_step(learn::CnnShape{}, 64, 100);
  rows.push_back({"CNN 28x28 conv8k5-conv16k5-64-10 gradient step, batch 64 (models/learn)",
                  fmt::format("{:.1f} GFLOP/s", cb.step_gflops),
                  fmt::format("GEMM {:.1f} GFLOP/s", cb.gemm_gflops),
                  fmt::format("{:.0f} % of its GEMMs", 100 * cb.step_gflops / cb.gemm_gflops)});
  Measured fm = measure({sgdsim, "run", "experiments/bench/fashion-mnist-16-workers.json", "--out",
                         (fs::temp_directory_path() / "sgdsim-bench-fmnist").string(), "--quiet"});
  std::ifstream fs_summary(fs::temp_directory_path() / "sgdsim-bench-fmnist" / "summary.json");
  json fsj = json::parse(fs_summary);
  rows.push_back({"sgdsim run: Fashion-MNIST MLP, 16 workers, 2,000 steps (sync)",
                  fmt::format("{:.1f} s wall", fm.wall_s),
                  fmt::format("{:.1f} MiB RSS", fm.max_rss_kb / 1024.0),
                  fmt::format("test accuracy {:.3f}; target: under 120 s",
                              fsj["training"]["final_accuracy"].get<double>())});
  fs::remove_all(fs::temp_directory_path() / "sgdsim-bench-fmnist");

  // The largest shipped Kineto trace (HTA's 2 x A100 NCCL trace, gzip): import and summary.
  const Measured hm =
      measure({sgdsim, "trace", "data/validation/hta/nccl_parser_config/nccl_data.json.gz"});
  rows.push_back({"sgdsim trace: HTA Kineto trace, 2 x A100 (data/validation/hta, gzip)",
                  fmt::format("{:.2f} s wall, {:.2f} s CPU", hm.wall_s, hm.cpu_s),
                  fmt::format("{:.0f} MiB RSS", hm.max_rss_kb / 1024.0), "target < 1 s"});

  print_rows(rows);
  return 0;
}
