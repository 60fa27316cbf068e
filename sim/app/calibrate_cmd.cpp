// sgdsim calibrate osu: alpha-beta of a platform from an OSU allreduce latency log, the
// scenario fields that reproduce it, and checks against logs at other scales.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "sim/app/calibrate_help.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/setup.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/transport.hpp"
#include "sim/trace/nccl_calibration.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

namespace {

using nlohmann::json;

std::string algorithm_list() {
  std::string names;
  for (const auto& n : collective_names()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

int parse_ranks(const std::string& opt, const std::string& v) {
  return static_cast<int>(
      parse_int_option(opt, v, 2, INT32_MAX, "an integer number of ranks >= 2"));
}

/// A size option: a unit string or a plain byte count.
double parse_bytes(const std::string& opt, const std::string& v) {
  return parse_size_option(opt, v, "64KiB");
}

/// "FILE" or "FILE:P" (a path that exists as given wins over the split).
std::pair<std::string, int> parse_check(const std::string& v) {
  auto colon = v.rfind(':');
  if (colon == std::string::npos || std::filesystem::exists(v)) return {v, 0};
  return {v.substr(0, colon), parse_ranks("--check", v.substr(colon + 1))};
}

std::string us(double s) {
  return fmt::format("{:.9g}us", s * 1e6);
}
std::string gbps(double bytes_per_s) {
  return fmt::format("{:.9g}Gbps", bytes_per_s * 8 / 1e9);
}

OsuLog load(const std::string& path, int ranks, const std::string& how_to_give) {
  OsuLog log = read_osu_log(path, ranks);
  if (log.ranks == 0)
    throw InputError(
        path, "", "the log has no \"nodes,\" column: give its number of ranks with " + how_to_give);
  return log;
}

const Collective& algorithm_option(const Args& a, const std::string& opt,
                                   const std::string& fallback) {
  std::string name = a.get(opt).value_or(fallback);
  try {
    return collective_by_name(name);
  } catch (const std::out_of_range&) {
    throw InputError("usage: " + opt + ": expected one of " + algorithm_list() + ", got \"" + name +
                     "\"");
  }
}

json class_json(const AlphaBeta& ab) {
  return {{"alpha_s", ab.alpha_s},
          {"beta_s_per_byte", ab.beta_s_per_byte},
          {"bandwidth_Bps", 1.0 / ab.beta_s_per_byte}};
}

/// Scenario fields of a star whose routes have exactly the fitted alphas and betas: devices
/// meet over two intra-node links, nodes over two intra-node and two node links.
json nccl_scenario(const NcclFit& f) {
  const AlphaBeta &in = f.cost.intra, &out = f.cost.inter;
  auto link = [](double bw, double lat) {
    return json{{"bandwidth", gbps(bw)}, {"latency", us(lat)}, {"technology", "custom"}};
  };
  json gen = {{"topology", "star"}, {"devices_per_node", f.layout.gpus_per_node}};
  if (f.layout.gpus_per_node == 1) {  // one GPU per node: routes cross two node links only
    gen["node_link"] = link(1.0 / out.beta_s_per_byte, out.alpha_s / 2);
  } else {
    gen["intra_node_link"] = link(1.0 / in.beta_s_per_byte, in.alpha_s / 2);
    gen["node_link"] = link(1.0 / out.beta_s_per_byte, std::max(0.0, out.alpha_s - in.alpha_s) / 2);
  }
  json collective = {{"algorithm", f.algorithm},
                     {"inter_algorithm", f.options.inter_algorithm},
                     {"intra_algorithm", f.options.intra_algorithm},
                     {"chunk_bytes", f.options.chunk_bytes},
                     {"channels", f.options.channels}};
  if (collective_by_name(f.algorithm).latency_in_start_delay()) {
    collective["launch_latency"] = us(f.options.launch_latency_s);
    if (f.options.channel_launch_s > 0)
      collective["channel_launch"] = us(f.options.channel_launch_s);
    collective["step_latency_intra"] = us(f.options.step_latency_intra_s);
    collective["step_latency_inter"] = us(f.options.step_latency_inter_s);
    if (f.options.memory_Bps > 0) collective["memory_bandwidth"] = gbps(f.options.memory_Bps);
    if (f.options.staged_host_Bps > 0) {
      collective["staged_host_bandwidth"] = gbps(f.options.staged_host_Bps);
      collective["nccl_buffer_size"] = static_cast<std::int64_t>(f.options.nccl_buffer_bytes);
    }
    if (f.options.tree_ll_level_Bps > 0) {
      collective["tree_ll_latency"] = us(f.options.tree_ll_latency_s);
      collective["tree_ll_level_bandwidth"] = gbps(f.options.tree_ll_level_Bps);
    }
    // NCCL's graph decides between ring and tree (and tree/LL): the scenario needs it too.
    collective["tuner_channels"] = f.options.tuner_channels;
    collective["tuner_channel_bandwidth"] = gbps(f.options.tuner_channel_Bps);
    if (f.layout.gpus_per_node > 1 && f.options.tuner_intra_channel_Bps > 0)
      collective["tuner_intra_channel_bandwidth"] = gbps(f.options.tuner_intra_channel_Bps);
    collective["nccl_algo"] = f.options.nccl_algo;
  }
  return {{"platform", {{"generate", gen}}},
          {"network_model", "ideal"},
          {"collective", collective},
          {"workers", {{"per_node", f.layout.gpus_per_node}}}};
}

json check_json(const LogCheck& c) {
  json pts = json::array();
  for (const auto& pc : c.points) {
    pts.push_back({{"bytes", pc.size_bytes},
                   {"measured_s", pc.measured_s},
                   {"predicted_s", pc.predicted_s},
                   {"rel_error", pc.rel_error}});
    if (!pc.chosen.empty()) pts.back()["chosen"] = pc.chosen;
  }
  return {{"log", c.file},
          {"ranks", c.ranks},
          {"median_abs_rel_error", c.median_abs_rel_error},
          {"max_abs_rel_error", c.max_abs_rel_error},
          {"sizes_used", c.used},
          {"points", pts}};
}

void print_nccl_fit(const NcclFit& f, const std::string& path) {
  std::cout << fmt::format(
      "sgdsim calibrate nccl-tests: {} ({} ranks, {} nodes x {} GPUs), {} formula{}, {} sizes >= "
      "{:.0f} bytes, fitted the {}-node class\n",
      path, f.layout.ranks, f.layout.nodes, f.layout.gpus_per_node, f.algorithm,
      collective_by_name(f.algorithm).uses_inter_algorithm()
          ? " (" + f.options.inter_algorithm + " between nodes)"
          : "",
      f.points, f.min_bytes, f.fitted);
  for (const auto& [name, ab] :
       {std::pair{"intra-node", f.cost.intra}, {"inter-node", f.cost.inter}})
    std::cout << fmt::format("  {:<11} alpha {:>10.3f} us   bandwidth {:>9.3f} GB/s\n", name,
                             ab.alpha_s * 1e6, 1e-9 / ab.beta_s_per_byte);
  if (collective_by_name(f.algorithm).latency_in_start_delay())
    std::cout << fmt::format(
        "  launch latency {:.3f} us (fitted); step latency {:.1f} us in a node, {:.1f} us "
        "between nodes (NCCL's hwLat, Simple protocol); device memory {}\n",
        f.options.launch_latency_s * 1e6, f.options.step_latency_intra_s * 1e6,
        f.options.step_latency_inter_s * 1e6,
        f.options.memory_Bps > 0 ? fmt::format("{:.0f} GB/s", f.options.memory_Bps * 1e-9)
                                 : std::string("not modelled"));
  if (f.options.channel_launch_s > 0)
    std::cout << fmt::format(
        "  channel launch {:.3f} us per channel NCCL gives an operation on one node (fitted)\n",
        f.options.channel_launch_s * 1e6);
  if (f.layout.gpus_per_thread >= 2)
    std::cout << fmt::format(
        "  nccl-tests launches {} GPUs per thread: at least {:.3f} us per GPU (its sizes <= 4 "
        "KiB)\n",
        f.layout.gpus_per_thread, f.options.launch_per_gpu_s * 1e6);
  if (f.options.staged_host_Bps > 0)
    std::cout << fmt::format(
        "  staged host path {:.3f} GB/s: the ring runs by NCCL's slices of {:.0f} KiB (one GPU "
        "per node)\n",
        f.options.staged_host_Bps * 1e-9, f.options.nccl_buffer_bytes / 8 * 2 / 1024);
  if (f.options.tree_ll_level_Bps > 0)
    std::cout << fmt::format(
        "  tree/LL (where NCCL's tuner picks it, {} sizes): latency {:.3f} us, {:.3f} GB/s per "
        "inter-node level (fitted)\n",
        f.tree_ll_points, f.options.tree_ll_latency_s * 1e6, f.options.tree_ll_level_Bps * 1e-9);
  std::cout << fmt::format("  fit median |error| {:.1f} % (rms {:.1f} %)\n",
                           100 * f.median_abs_rel_error, 100 * f.rms_rel_error);
  std::cout << "\nScenario fields (routes with exactly these alphas and bandwidths):\n  "
            << nccl_scenario(f).dump() << "\n";
}

void print_check(const LogCheck& c) {
  // A column of what timed each size, where the collective chooses (nccl-tests' logs).
  const bool chosen = std::any_of(c.points.begin(), c.points.end(),
                                  [](const PointCheck& p) { return !p.chosen.empty(); });
  std::cout << fmt::format("\ncheck {} ({} ranks)\n  {:>12}  {:>12}  {:>12}  {:>8}{}\n", c.file,
                           c.ranks, "bytes", "measured_us", "predicted_us", "error",
                           chosen ? "  timed by" : "");
  for (const auto& pc : c.points)
    if (pc.size_bytes >= c.min_bytes)
      std::cout << fmt::format("  {:>12.0f}  {:>12.2f}  {:>12.2f}  {:>+7.1f}%{}\n", pc.size_bytes,
                               pc.measured_s * 1e6, pc.predicted_s * 1e6, 100 * pc.rel_error,
                               chosen ? "  " + pc.chosen : "");
  std::cout << fmt::format("  median |error| {:.1f} % over {} sizes (max {:.1f} %)\n",
                           100 * c.median_abs_rel_error, c.used, 100 * c.max_abs_rel_error);
}

/// --tree-ll and --tuner-channel-bandwidth.
void read_tree_ll_options(const Args& a, NcclOptions& o) {
  const std::string tree_ll = a.get("--tree-ll").value_or("on");
  if (tree_ll != "on" && tree_ll != "off")
    throw InputError("usage: --tree-ll: expected on or off, got \"" + tree_ll + "\"");
  o.fit_tree_ll = tree_ll == "on";
  if (auto b = a.get("--tuner-channel-bandwidth"))
    o.tuner_channel_Bps =
        parse_quantity_option("--tuner-channel-bandwidth", *b, units::parse_bandwidth_Bps,
                              "a bandwidth such as \"24GBps\"");
  if (auto b = a.get("--tuner-intra-channel-bandwidth")) {
    const std::optional<double> bw = units::parse_bandwidth_Bps(*b);
    if (*b != "0" && !bw)
      throw InputError(
          "usage: --tuner-intra-channel-bandwidth: expected a bandwidth such as \"21GBps\" or 0, "
          "got \"" +
          *b + "\"");
    o.tuner_intra_channel_Bps = *b == "0" ? 0.0 : *bw;
  }
  o.protocols = a.get("--protocols").value_or("auto");
  if (o.protocols != "auto" && o.protocols != "simple")
    throw InputError("usage: --protocols: expected auto or simple, got \"" + o.protocols + "\"");
  if (auto v = a.get("--nccl-algo")) {
    if (*v != nccl_algo_from_env(*v))
      throw InputError("usage: --nccl-algo: expected auto, ring or tree, got \"" + *v + "\"");
    o.nccl_algo = *v;
  }
}

/// The options for a log: NCCL_ALGO as the log states it, unless --nccl-algo is given.
NcclOptions options_for_log(const Args& a, NcclOptions o, const NcclTestsLog& log) {
  if (!a.get("--nccl-algo") && !log.nccl_algo.empty())
    o.nccl_algo = nccl_algo_from_env(log.nccl_algo);
  return o;
}

/// calibrate nccl-tests' NCCL options (technologies, hierarchy, pipelining).
NcclOptions read_nccl_options(const Args& a) {
  NcclOptions inter;
  for (const auto& [opt, fallback, field] :
       {std::tuple{"--technology", "rdma", &inter.step_latency_inter_s},
        {"--intra-technology", "nvlink", &inter.step_latency_intra_s}})
    *field = nccl_step_latency_s(technology_option(a, opt, fallback).technology);
  // NCCL's graph for its choice between ring and tree, from the technologies (topo.h speeds).
  const std::string net = technology_option(a, "--technology", "rdma").technology;
  inter.tuner_channels = nccl_net_channels(net);
  if (nccl_channel_Bps(net) > 0) inter.tuner_channel_Bps = nccl_channel_Bps(net);
  inter.tuner_intra_channel_Bps =
      nccl_channel_Bps(technology_option(a, "--intra-technology", "nvlink").technology);
  inter.intra_nvlink = is_nvlink(technology_option(a, "--intra-technology", "nvlink").technology);
  // Sockets always stage through host memory (their memory registration accepts host buffers
  // only), over the GPU's PCIe link: NCCL's rate of Gen3 x16 (the p3dn V100s' link).
  inter.staged_host_Bps = net == "tcp" ? pcie_dma_Bps(3, 16) : 0.0;
  if (auto b = a.get("--staged-host-bandwidth"))
    inter.staged_host_Bps =
        *b == "0" ? 0.0
                  : parse_quantity_option("--staged-host-bandwidth", *b, units::parse_bandwidth_Bps,
                                          "a bandwidth such as \"12GBps\" or 0");
  if (auto n = a.get("--nccl-buffer-size"))
    inter.nccl_buffer_bytes = std::max(8.0, parse_bytes("--nccl-buffer-size", *n));
  inter.inter_algorithm = algorithm_option(a, "--inter-algorithm", "ring").name();
  inter.intra_algorithm = a.get("--intra-algorithm").value_or("binomial");
  if (inter.intra_algorithm != "binomial" && inter.intra_algorithm != "chain")
    throw InputError("usage: --intra-algorithm: expected binomial or chain, got \"" +
                     inter.intra_algorithm + "\"");
  if (a.get("--chunk-bytes"))
    inter.chunk_bytes = parse_bytes("--chunk-bytes", *a.get("--chunk-bytes"));
  if (auto m = a.get("--fit-max-bytes")) inter.fit_max_bytes = parse_bytes("--fit-max-bytes", *m);
  for (const auto& [opt, field] :
       {std::pair{"--channels", &inter.channels}, {"--tuner-channels", &inter.tuner_channels}})
    *field = static_cast<int>(int_option(a, opt, *field, 1, 64, "an integer from 1 to 64"));
  read_tree_ll_options(a, inter);
  if (auto t = a.get("--channel-launch")) {
    inter.channel_launch_s =
        *t == "0" ? 0.0
                  : parse_quantity_option("--channel-launch", *t, units::parse_time_s,
                                          "a time such as \"1.8us\" or 0");
    inter.fit_channel_launch = false;
  }
  if (auto t = a.get("--launch-per-gpu")) {
    inter.launch_per_gpu_s = parse_quantity_option("--launch-per-gpu", *t, units::parse_time_s,
                                                   "a time such as \"4us\"");
    inter.fit_launch_per_gpu = false;
  }
  return inter;
}

/// nccl_tuner's memory term: --memory-bandwidth, else the datasheet value of the log's GPU.
double memory_bandwidth_option(const Args& a, const NcclTestsLog& log) {
  double memory_Bps = gpu_memory_Bps(log.device);
  if (auto m = a.get("--memory-bandwidth"))
    memory_Bps = *m == "0"
                     ? 0.0
                     : parse_quantity_option("--memory-bandwidth", *m, units::parse_bandwidth_Bps,
                                             "a bandwidth such as \"1555GBps\" or 0");
  return memory_Bps;
}

json nccl_fit_json(const NcclFit& fit, const Collective& coll, const std::string& path,
                   const std::vector<std::pair<LogCheck, NcclTestsLog>>& checks) {
  json j = {{"log", path},
            {"ranks", fit.layout.ranks},
            {"gpus_per_node", fit.layout.gpus_per_node},
            {"nodes", fit.layout.nodes},
            {"algorithm", fit.algorithm},
            {"inter_algorithm", fit.options.inter_algorithm},
            {"intra_algorithm", fit.options.intra_algorithm},
            {"chunk_bytes", fit.options.chunk_bytes},
            {"channels", fit.options.channels},
            {"fitted", fit.fitted},
            {"min_bytes", fit.min_bytes},
            {"points", fit.points},
            {"intra", class_json(fit.cost.intra)},
            {"inter", class_json(fit.cost.inter)},
            {"launch_latency_s",
             coll.latency_in_start_delay() ? json(fit.options.launch_latency_s) : json(nullptr)},
            {"step_latency_intra_s", fit.options.step_latency_intra_s},
            {"step_latency_inter_s", fit.options.step_latency_inter_s},
            {"memory_bandwidth_Bps", fit.options.memory_Bps},
            {"staged_host_bandwidth_Bps", fit.options.staged_host_Bps},
            {"nccl_buffer_size_bytes", fit.options.nccl_buffer_bytes},
            {"tree_ll_latency_s", fit.options.tree_ll_latency_s},
            {"tree_ll_level_bandwidth_Bps", fit.options.tree_ll_level_Bps},
            {"tree_ll_points", fit.tree_ll_points},
            {"tuner_channels", fit.options.tuner_channels},
            {"tuner_channel_bandwidth_Bps", fit.options.tuner_channel_Bps},
            {"tuner_intra_channel_bandwidth_Bps",
             fit.layout.gpus_per_node > 1 ? fit.options.tuner_intra_channel_Bps : 0.0},
            {"nccl_algo", fit.options.nccl_algo},
            {"gpus_per_thread", fit.layout.gpus_per_thread},
            {"launch_per_gpu_s", fit.options.launch_per_gpu_s},
            {"channel_launch_s", fit.options.channel_launch_s},
            {"median_abs_rel_error", fit.median_abs_rel_error},
            {"rms_rel_error", fit.rms_rel_error},
            {"scenario", nccl_scenario(fit)},
            {"checks", json::array()}};
  for (const auto& [c, l] : checks) {
    j["checks"].push_back(check_json(c));
    j["checks"].back()["gpus_per_node"] = nccl_gpus_per_node(l);
    j["checks"].back()["gpus_per_thread"] = l.gpus_per_thread;
  }
  return j;
}

int calibrate_nccl_tests(const std::vector<std::string>& argv) {
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(std::vector<std::string>(argv.begin() + 1, argv.end()), kNcclOptions);
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim calibrate nccl-tests LOG [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  const Collective& coll = algorithm_option(a, "--algorithm", "nccl_tuner");
  NcclOptions inter = read_nccl_options(a);
  const double min_bytes =
      a.get("--min-bytes") ? parse_bytes("--min-bytes", *a.get("--min-bytes")) : 65536.0;
  const std::string& path = a.positional[0];
  const NcclTestsLog log = read_nccl_tests_log(path);
  inter.memory_Bps = memory_bandwidth_option(a, log);
  std::optional<AlphaBeta> intra;
  if (auto f = a.get("--intra")) {
    NcclTestsLog one = read_nccl_tests_log(*f);
    if (nccl_layout(one).nodes != 1)
      throw InputError(*f, "", "--intra: expected a one-node log (all ranks on one host)");
    const NcclFit one_fit = fit_nccl_tests(one, coll, inter, min_bytes, std::nullopt);
    intra = one_fit.cost.intra;
    // The node's channel cost goes into the composed scenario (its one-node operations).
    inter.channel_launch_s = one_fit.options.channel_launch_s;
  }
  const NcclFit fit = fit_nccl_tests(log, coll, options_for_log(a, inter, log), min_bytes, intra);
  std::vector<std::pair<LogCheck, NcclTestsLog>> checks;
  for (const auto& c : a.all("--check")) {
    NcclTestsLog other = read_nccl_tests_log(c);
    checks.emplace_back(
        check_nccl_tests(other, coll, options_for_log(a, fit.options, other), fit.cost, min_bytes),
        other);
  }
  disarm_time_limit();
  if (a.has("--json"))
    return std::cout << nccl_fit_json(fit, coll, path, checks).dump(2) << "\n", 0;
  print_nccl_fit(fit, path);
  for (const auto& [c, l] : checks) print_check(c);
  return 0;
}

/// The scenario fields of an OSU fit: a generated star on the ideal network.
json osu_scenario(const AlphaBetaFit& fit) {
  const double bw = 1.0 / fit.beta_s_per_byte;
  return {{"platform",
           {{"generate",
             {{"topology", "star"},
              {"devices_per_node", 1},
              {"node_link", {{"bandwidth", gbps(bw)}, {"latency", us(fit.alpha_s / 2)}}}}}}},
          {"network_model", "ideal"},
          {"collective", {{"algorithm", fit.algorithm}}},
          {"workers", {{"per_node", 1}}}};
}

json osu_fit_json(const AlphaBetaFit& fit, const std::string& path,
                  const std::vector<LogCheck>& checks) {
  const double bw = 1.0 / fit.beta_s_per_byte;
  const json scenario = osu_scenario(fit);
  json j = {{"log", path},
            {"ranks", fit.ranks},
            {"algorithm", fit.algorithm},
            {"min_bytes", fit.min_bytes},
            {"points", fit.points},
            {"alpha_s", fit.alpha_s},
            {"beta_s_per_byte", fit.beta_s_per_byte},
            {"bandwidth_Bps", bw},
            {"alpha_clamped", fit.alpha_clamped},
            {"median_abs_rel_error", fit.median_abs_rel_error},
            {"rms_rel_error", fit.rms_rel_error},
            {"scenario", scenario},
            {"checks", json::array()}};
  for (const auto& c : checks) j["checks"].push_back(check_json(c));
  return j;
}

void print_osu_fit(const AlphaBetaFit& fit, const OsuLog& log, const std::string& path) {
  const double bw = 1.0 / fit.beta_s_per_byte;
  const json scenario = osu_scenario(fit);
  std::cout << fmt::format(
      "sgdsim calibrate osu: {} ({} ranks{}), {} formula, {} sizes >= {:.0f} bytes, least squares "
      "on relative error\n",
      path, fit.ranks, log.ranks_from_log ? ", from the log's nodes column" : ", from --ranks",
      fit.algorithm, fit.points, fit.min_bytes);
  std::cout << fmt::format("  {:<22}{:>14.3f} us{}\n", "alpha (per message)", fit.alpha_s * 1e6,
                           fit.alpha_clamped ? "   (clamped: the unconstrained fit was < 0)" : "");
  std::cout << fmt::format("  {:<22}{:>14.4e} s/byte\n", "beta (per byte)", fit.beta_s_per_byte);
  std::cout << fmt::format("  {:<22}{:>14.4f} Gbps  ({:.4f} GB/s)\n", "bandwidth 1/beta",
                           bw * 8 / 1e9, bw / 1e9);
  std::cout << fmt::format("  {:<22}{:>13.1f} %   (rms {:.1f} %)\n", "fit median |error|",
                           100 * fit.median_abs_rel_error, 100 * fit.rms_rel_error);
  std::cout << "\nScenario fields (generated star, one rank per node, ideal network: a "
               "host-to-host\nroute crosses two node links, so node_link.latency = alpha / 2 and "
               "node_link.bandwidth = 1 / beta):\n  "
            << scenario.dump() << "\n";
  std::cout << fmt::format(
      "Same collective on the command line (--latency is host-to-host, i.e. alpha):\n  sgdsim "
      "collective --algorithm {} --ranks P --bytes N --bandwidth {} --latency {} "
      "--network-model ideal\n",
      fit.algorithm, gbps(bw), us(fit.alpha_s));
}

void print_osu_checks(const std::vector<LogCheck>& checks, double min_bytes) {
  for (const auto& c : checks) {
    std::cout << fmt::format("\ncheck {} ({} ranks): {} formula with the fitted alpha and beta\n",
                             c.file, c.ranks, c.algorithm);
    std::cout << fmt::format("  {:>10}  {:>12}  {:>12}  {:>8}\n", "bytes", "measured_us",
                             "predicted_us", "error");
    for (const auto& pc : c.points)
      if (pc.size_bytes >= c.min_bytes)
        std::cout << fmt::format("  {:>10.0f}  {:>12.2f}  {:>12.2f}  {:>+7.1f}%\n", pc.size_bytes,
                                 pc.measured_s * 1e6, pc.predicted_s * 1e6, 100 * pc.rel_error);
    std::cout << fmt::format(
        "  median |error| {:.1f} % over {} sizes >= {:.0f} bytes (max {:.1f} %)\n",
        100 * c.median_abs_rel_error, c.used, c.min_bytes, 100 * c.max_abs_rel_error);
  }
  if (!checks.empty()) {
    std::cout << "\nsummary: median |error| at sizes >= " << fmt::format("{:.0f}", min_bytes)
              << " bytes:";
    for (const auto& c : checks)
      std::cout << fmt::format(" {} ranks {:.1f} %;", c.ranks, 100 * c.median_abs_rel_error);
    std::cout << "\n";
  }
}

int calibrate_osu(const std::vector<std::string>& argv) {
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(std::vector<std::string>(argv.begin() + 1, argv.end()), kOsuOptions);
  if (a.positional.size() != 1)
    throw InputError("usage: sgdsim calibrate osu LOG [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  const std::string algorithm = algorithm_option(a, "--algorithm", "ring").name();
  const double min_bytes =
      a.get("--min-bytes") ? parse_bytes("--min-bytes", *a.get("--min-bytes")) : 65536.0;
  const int ranks = a.get("--ranks") ? parse_ranks("--ranks", *a.get("--ranks")) : 0;
  const std::string& path = a.positional[0];
  OsuLog log = load(path, ranks, "--ranks P");
  AlphaBetaFit fit = fit_alpha_beta(log, algorithm, min_bytes);
  std::vector<LogCheck> checks;
  for (const auto& c : a.all("--check")) {
    auto [file, p] = parse_check(c);
    OsuLog other = load(file, p, "--check " + file + ":P");
    checks.push_back(check_alpha_beta(other, fit.algorithm, fit.alpha_beta(), min_bytes));
  }
  disarm_time_limit();
  if (a.has("--json")) return std::cout << osu_fit_json(fit, path, checks).dump(2) << "\n", 0;
  print_osu_fit(fit, log, path);
  print_osu_checks(checks, min_bytes);
  return 0;
}

/// The log kinds `sgdsim calibrate` fits: the one place their names are compared.
const std::map<std::string, int (*)(const std::vector<std::string>&)> kLogKinds = {
    {"osu", calibrate_osu}, {"nccl-tests", calibrate_nccl_tests}};

int cmd_calibrate(const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    std::string osu = options_help(kOsuOptions, 21);
    osu.replace(osu.find("@ALGOS@"), 7, algorithm_list());
    std::cout << kCalibrateHelpHead << osu << kNcclHelpHead << options_help(kNcclOptions, 23);
    return 0;
  }
  const auto kind = argv.empty() ? kLogKinds.end() : kLogKinds.find(argv[0]);
  if (kind == kLogKinds.end())
    throw InputError(
        "usage: sgdsim calibrate KIND LOG: expected the log kind \"osu\" or "
        "\"nccl-tests\", got \"" +
        (argv.empty() ? "" : argv[0]) + "\" (see --help)");
  return kind->second(argv);
}

const RegisterSubcommand kCalibrate(
    {"calibrate", "calibrate osu LOG",
     "fit alpha and beta of a platform to an OSU allreduce latency log", 70, cmd_calibrate});

}  // namespace

}  // namespace sgdsim
