// `sgdsim collective`: times one allreduce (or allgather, reduce-scatter) on SimGrid, like OSU
// or nccl-tests, beside the algorithm's closed form; the options are read in
// sim/app/collective_options and sim/app/fabric_cli.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "sim/app/cli.hpp"
#include "sim/app/collective_options.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/units.hpp"
#include "sim/trace/nccl_calibration.hpp"

using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kCollectiveHelpHead =
    R"(usage: sgdsim collective --algorithm A --ranks P --bytes N
                         [--platform FILE | --bandwidth B --latency L
                          [--devices-per-node D --intra-bandwidth B --intra-latency L]
                          [--node PRESET|JSON]]
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

)";

const std::vector<OptionSpec> kCollectiveOptions = {
    {"--algorithm", "A",
     "ring, recursive_halving_doubling (rhd), recursive_doubling, tree,\n"
     "hierarchical, ps, byteps, auto, double_binary_tree, nccl, nccl_tuner,\n"
     "nvls (default ring)"},
    {"--operation", "O",
     "allreduce (default), allgather (N bytes gathered in all, N/P from each\n"
     "rank) or reduce_scatter (N bytes on each rank, N/P of the sum left on\n"
     "each): ring, recursive_halving_doubling (powers of two), hierarchical\n"
     "(binomial, full nodes), auto, nccl (the ring), nccl_tuner (NCCL's ring\n"
     "and its tuner's latency and protocols)"},
    {"--ranks", "P", "number of ranks (>= 1)"},
    {"--bytes", "N", "message size: \"100MB\", \"1GiB\" or a byte count"},
    {"--bandwidth", "B", "bandwidth between nodes, e.g. \"10Gbps\" (default \"10Gbps\")"},
    {"--latency", "L", "latency between nodes, e.g. \"1us\" (default \"1us\")"},
    {"--devices-per-node", "D", "ranks per node (default 1)"},
    {"--intra-bandwidth", "B", "bandwidth between devices of a node (default \"16GBps\")"},
    {"--intra-latency", "L", "latency between devices of a node (default \"1us\")"},
    {"--node", "PRESET",
     "the node's host path as NCCL picks it sets the intra-node bandwidth\n"
     "and caps --bandwidth at its NICs' rate: a preset of\n"
     "docs/host-path.md (an unknown name lists them), or a board\n"
     "description in JSON ('{\"gpus\": 4, \"pcie_gen\": 4, ...}', same page)"},
    {"--servers", "S",
     "ps: server shards on the first S ranks (default 0 = one per rank);\n"
     "byteps with dedicated servers: server hosts (default 0 = one per node)"},
    {"--chunk-bytes", "B",
     "NCCL-style pipelining chunk, e.g. \"512KiB\" (default 0 = messages whole);\n"
     "ring, double_binary_tree, hierarchical, nccl"},
    {"--channels", "C", "NCCL channels: C concurrent copies on N/C bytes each (default 1)"},
    {"--reduction-speed", "R",
     "reduction throughput, e.g. \"50GBps\" (default: reductions take no time)"},
    {"--network-model", "M",
     "\"default\" (SimGrid LV08), \"ideal\" (formula-exact), \"smpi\"\n"
     "(SimGrid's SMPI-calibrated factors) or \"links\" (each link's\n"
     "technology sets what a message pays); default \"default\""},
    {"--technology", "T",
     "links: technology of the links between nodes (and of --platform\n"
     "links without a technology property): tcp, rdma, nvlink, pcie or\n"
     "custom (default tcp)"},
    {"--intra-technology", "T", "links: technology of the links inside a node (default pcie)"},
    {"--sockets", "LIB",
     "links, tcp: messages between nodes go over LIB's TCP streams, at most\n"
     "channels x streams x min(10 Gb/s, flow cap): nccl (2 x 1 stream),\n"
     "nccl-aws (2 x 16 streams, 10 Gb/s per flow), nccl-gcp (2 x 4), gloo,\n"
     "mpi, ps-lite or grpc (1 stream; ps-lite: BytePS's pushes and pulls,\n"
     "grpc: TensorFlow's parameter servers);\n"
     "docs/nccl-sockets.md"},
    {"--topology", "fat_tree",
     "nodes under leaf switches of --nodes-per-leaf K nodes (default 16),\n"
     "uplinks of K x bandwidth / --oversubscription R; --spines S > 1 splits\n"
     "each uplink into S spine links and ECMP picks one per host pair by a hash\n"
     "seeded with --ecmp-seed E (default 1; flow fidelity only);\n"
     "--ecmp-connections N hashes each of N connections per ordered host\n"
     "pair by itself (NCCL's sockets or QPs); --nodes N: the cluster's nodes\n"
     "(default: the ranks'); docs/scale.md"},
    {"--placement", "P",
     "ranks on nodes: block (default), cyclic (round robin over the nodes) or\n"
     "random (a seeded random choice and order of the --nodes, --seed N)"},
    {"--fidelity", "F",
     "\"flow\" (every message simulated) or \"analytic\" (one timed activity\n"
     "lasting the formula, with alpha-beta from the platform's routes)"},
    {"--json", "",
     "print {\"algorithm\",\"ranks\",\"bytes\",\"time_s\",\"formula_s\",\"activities\",\n"
     "\"fidelity\",\"network_model\"}, \"chosen\" (what auto, nccl or\n"
     "nccl_tuner ran; \"launch floor\" where --gpus-per-thread bounds the time)\n"
     "and \"operation\" (when not allreduce)"},
    {"--jobs", "K",
     "K identical jobs on the same ranks at once (default 1), each running\n"
     "--iterations I operations one after the other (default 1), job j\n"
     "starting j x --job-offset T later (default: the closed form's time / K;\n"
     "needed with --platform); time_s is then the jobs' mean time per\n"
     "operation, and --json adds \"jobs\", \"iterations\", \"job_offset_s\",\n"
     "\"job_operation_s\" (per job).\n"
     "At flow fidelity the jobs share the network: background traffic of\n"
     "other jobs (docs/validation-data.md, \"MPI over TCP\")"},
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed"},
    {"--force", "", "run even when the estimate (messages, memory) exceeds the limits"},
    {"--gpus-per-thread", "G",
     "nccl-tests' -g: one thread launches G GPUs' kernels in turn, so an\n"
     "operation takes at least G x --launch-per-gpu when G >= 2 (default 1)"},
    {"--launch-per-gpu", "T",
     "host launch time per GPU with --gpus-per-thread (default \"4.36us\": the\n"
     "shipped 2-GPU A100 nccl-tests log, its sizes <= 4 KiB)"},
    {"--iterations", "I", ""},
    {"--job-offset", "T", ""},
    {"--platform", "FILE", ""},
    {"--cfg", "OPT", ""},
    {"--nodes", "N", ""},
    {"--nodes-per-leaf", "K", ""},
    {"--oversubscription", "R", ""},
    {"--spines", "S", ""},
    {"--ecmp-seed", "E", ""},
    {"--ecmp-connections", "N", ""},
    {"--seed", "N", ""},
};

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
    std::string text = fmt::format("{}: {}", fmt::join(d.owners, ", "), p.brief);
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

/// --jobs, --iterations and --job-offset: concurrent jobs of repeated operations.
struct JobsOptions {
  int jobs = 1, iterations = 1;
  std::optional<double> offset_s;  ///< unset: one operation's time alone / jobs
  bool active() const { return jobs > 1 || iterations > 1; }
};

JobsOptions jobs_options(const Args& a) {
  JobsOptions o;
  o.jobs = static_cast<int>(int_option(a, "--jobs", 1, 1, 1024));
  o.iterations = static_cast<int>(int_option(a, "--iterations", 1, 1, 100000));
  if (auto v = a.get("--job-offset"))
    o.offset_s = parse_quantity_option("--job-offset", *v, units::parse_time_s,
                                       "a time >= 0 such as \"10ms\"");
  return o;
}

/// What the jobs measured, as one collective's result plus the JSON fields of the jobs. The
/// default offset is the closed form's time / jobs (one SimGrid engine per process: no run
/// alone first).
EngineResult run_jobs(const CollectiveCli& c, const JobsOptions& o, std::optional<double> formula,
                      nlohmann::json* fields) {
  if (!o.offset_s && !formula && o.jobs > 1)
    throw InputError("usage: --jobs with --platform needs --job-offset (no closed form there)");
  const double offset_s = o.offset_s ? *o.offset_s : o.jobs > 1 ? *formula / o.jobs : 0.0;
  const JobsResult r = run_concurrent_jobs(c.cfg, *c.coll, c.bytes, o.jobs, o.iterations, offset_s);
  double sum_s = 0;
  for (double t : r.mean_operation_s) sum_s += t;
  *fields = {{"jobs", o.jobs},
             {"iterations", o.iterations},
             {"job_offset_s", offset_s},
             {"job_operation_s", r.mean_operation_s}};
  return {sum_s / o.jobs, r.activities, 0};
}

/// The one-line or JSON report of one collective (`jobs`: the fields of --jobs, if any;
/// `floored`: nccl-tests' launch floor set the time).
void print_collective(const Args& a, const CollectiveCli& c, const EngineResult& r,
                      std::optional<double> formula, const nlohmann::json& jobs, bool floored) {
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
    if (floored) j["chosen"] = "launch floor";
    if (!jobs.is_null()) j.update(jobs);
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format("{} {}, {} ranks, {:.0f} bytes, network {}, {}: {}", coll.name(),
                             collective_op_name(cfg.group.op), ranks, bytes, model, fidelity,
                             fmt_time(r.simulated_time_s));
    if (formula) std::cout << fmt::format(" (formula {})", fmt_time(*formula));
    if (floored) std::cout << ", nccl-tests' launch floor";
    if (!jobs.is_null())
      std::cout << fmt::format(", per operation: mean of {} jobs x {} iterations, offset {}",
                               jobs["jobs"].get<int>(), jobs["iterations"].get<int>(),
                               fmt_time(jobs["job_offset_s"].get<double>()));
    std::cout << "\n";
  }
}

/// nccl-tests' host side (--gpus-per-thread, --launch-per-gpu): one thread launching G GPUs'
/// kernels in turn bounds an operation below by G launches; 0 for one GPU per thread.
double launch_floor_option(const Args& a, int ranks) {
  const int gpus_per_thread =
      static_cast<int>(int_option(a, "--gpus-per-thread", 1, 1, ranks,
                                  fmt::format("an integer from 1 to --ranks ({})", ranks)));
  double launch_s = NcclOptions{}.launch_per_gpu_s;
  if (auto t = a.get("--launch-per-gpu"))
    launch_s = parse_quantity_option("--launch-per-gpu", *t, units::parse_time_s,
                                     "a time such as \"4us\"");
  return nccl_tests_floor_s(gpus_per_thread, launch_s);
}

/// The simulated time and the formula, at least nccl-tests' floor (0 without one); true when the
/// floor set the simulated time.
bool raise_to_floor(double floor_s, EngineResult& r, std::optional<double>& formula) {
  const bool floored = floor_s > r.simulated_time_s;
  r.simulated_time_s = std::max(r.simulated_time_s, floor_s);
  if (formula) formula = std::max(*formula, floor_s);
  return floored;
}

int cmd_collective(const std::vector<std::string>& argv) {
  if (wants_help(argv))
    return std::cout << kCollectiveHelpHead << options_help(kCollectiveOptions, 23)
                     << algorithm_options_help(),
           0;
  std::vector<OptionSpec> options = kCollectiveOptions;
  // Each algorithm's declared options are flags of the same names.
  for (const DeclaredCollectiveParam& d : collective_params())
    options.push_back({d.param.param.flag(), "X", ""});
  Args a = parse_args(argv, options);
  CollectiveCli c;
  if (!a.positional.empty())
    throw InputError("usage: sgdsim collective takes no positional argument (see --help)");
  const Collective& coll = collective_option(a, "--algorithm", "ring");
  if (!a.get("--ranks")) throw InputError("usage: --ranks is required (see --help)");
  const int ranks = static_cast<int>(int_option(a, "--ranks", 1, 1, INT32_MAX));
  if (!a.get("--bytes")) throw InputError("usage: --bytes is required (see --help)");
  const double bytes = parse_size_option("--bytes", *a.get("--bytes"), "100MB");
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
  c.dpn = static_cast<int>(int_option(a, "--devices-per-node", 1, 1, INT32_MAX));
  read_group_options(a, c);
  c.extra = coll.extra_ranks(c.cfg.group);
  c.cfg.extra_hosts = c.extra;
  // Before the platform is generated (10^9 ranks would not fit in memory).
  const JobsOptions jobs = jobs_options(a);
  const double floor_s = launch_floor_option(a, ranks);
  const std::string warning = check_collective_resources(
      coll, c.cfg.group, bytes, fidelity == Fidelity::flow, ranks + c.extra, default_guard_limits(),
      a.has("--force"), jobs.jobs, jobs.iterations);
  if (!warning.empty()) std::cerr << "sgdsim: warning: " << warning << "\n";
  check_cfg_options(a.all("--cfg"));
  c.cfg.cfg = a.all("--cfg");
  std::optional<double> formula;
  if (auto platform_file = a.get("--platform"))
    use_platform_file(a, *platform_file, c);
  else
    formula = use_generated_star(a, c);
  arm_time_limit_option(a, wall_start);
  nlohmann::json jobs_fields;
  EngineResult r = jobs.active() ? run_jobs(c, jobs, formula, &jobs_fields)
                                 : run_single_collective(c.cfg, coll, bytes);
  disarm_time_limit();
  const bool floored = raise_to_floor(floor_s, r, formula);
  print_collective(a, c, r, formula, jobs_fields, floored);
  return 0;
}

const RegisterSubcommand kCollective({"collective", "collective",
                                      "time one allreduce, like OSU / nccl-tests", 50,
                                      cmd_collective});

}  // namespace
}  // namespace sgdsim
