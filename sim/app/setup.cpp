#include "sim/app/setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

#include "sim/app/guards.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/report/recorder.hpp"
#include "sim/scenario/platform_check.hpp"

namespace sgdsim {

namespace {

/// The engine's settings from the scenario and --cfg; returns the collective's server ranks.
int configure_engine(Setup& setup, const std::string& file, const std::vector<std::string>& cfg) {
  Setup* s = &setup;
  const Scenario& sc = s->scenario;
  s->engine.workers = sc.workers;
  s->engine.network_model = sc.network_model;
  // Links without a technology property: a generated flat cluster's are all node links.
  s->engine.default_transport =
      sc.platform.generate ? sc.platform.generate->node_link.transport : sc.platform.file_transport;
  s->engine.fidelity = sc.fidelity;
  s->engine.rotation_symmetry = sc.flow_symmetry == FlowSymmetry::rotation;
  s->engine.private_routes = sc.flow_closed_form_private_routes;
  s->engine.private_routes_required = sc.flow_closed_form_required;
  // Testing hook, not a scenario field: the old analytic path on SimGrid, to compare against.
  if (const char* v = std::getenv("SGDSIM_ANALYTIC_ON_SIMGRID"))
    s->engine.analytic_on_simgrid = std::string(v) == "1";
  s->engine.group = collective_group(sc);
  s->engine.start_delays = s->collective->delays_start(s->engine.group);
  if (s->collective->needs_route_costs() && !sc.platform.generate)
    throw InputError(file, "/collective/algorithm",
                     "\"" + sc.collective +
                         "\" needs a generated platform (its choice between ring and tree uses "
                         "the contention-free cost of the platform's routes)");
  // byteps's dedicated servers are ranks after the workers, on hosts of their own.
  const int sync_servers = s->collective->extra_ranks(s->engine.group);
  s->engine.reduction_Bps = sc.reduction_Bps;
  s->engine.overlap_slowdown = sc.device.overlap_slowdown;
  s->engine.link_noise_cv = sc.variability.link_noise_cv;
  s->engine.seed = sc.seed;
  s->engine.background = {sc.background.jobs, sc.background.bytes, sc.background.gap_s,
                          sc.background.offset_s};
  // The scenario's SimGrid options, then --cfg's (a later one wins): all of them go into
  // scenario.resolved.json, so rerunning it needs no --cfg.
  s->engine.cfg = sc.simgrid_cfg;
  s->engine.cfg.insert(s->engine.cfg.end(), cfg.begin(), cfg.end());
  for (size_t i = 0; i < sc.simgrid_cfg.size(); ++i)
    s->engine.cfg_origin.emplace_back(file, "/simgrid_cfg/" + std::to_string(i));
  s->scenario.resolved["simgrid_cfg"] = s->engine.cfg;
  s->engine.scenario_file = file;
  return sync_servers;
}

/// Workers, then dedicated parameter servers, then the collective's servers on the hosts of
/// the generated platform.
void place_on_generated_platform(Setup& setup, int sync_servers) {
  Setup* s = &setup;
  const Scenario& sc = s->scenario;
  const std::vector<int> hosts =
      worker_host_indices(sc.workers, sc.workers_per_node, sc.platform.generate->devices_per_node,
                          sc.placement, sc.platform.generate->nodes, sc.seed);
  for (int w = 0; w < sc.workers; ++w) {
    const int h = hosts[static_cast<size_t>(w)];
    s->worker_host.push_back(h);
    s->engine.worker_hosts.push_back(s->platform->host_name(h));
  }
  if (const int servers = scheme_dedicated_hosts(sc); servers > 0) {
    // Dedicated servers take the first hosts no worker uses.
    std::vector<bool> used(static_cast<size_t>(s->platform->num_hosts()), false);
    for (int h : s->worker_host) used[h] = true;
    int added = 0;
    for (int h = 0; h < s->platform->num_hosts() && added < servers; ++h)
      if (!used[h]) {
        s->engine.worker_hosts.push_back(s->platform->host_name(h));
        s->worker_host.push_back(h);
        ++added;
      }
  }
  if (sync_servers > 0) {
    // Each takes the first device of a node after the workers' nodes.
    const int dpn = sc.platform.generate->devices_per_node;
    const int worker_nodes = (sc.workers + sc.workers_per_node - 1) / sc.workers_per_node;
    for (int k = 0; k < sync_servers; ++k) {
      const int h = (worker_nodes + k) * dpn;
      s->engine.worker_hosts.push_back(s->platform->host_name(h));
      s->worker_host.push_back(h);
    }
  }
}

/// Ranks in one block of the generated platform's rotation symmetry that flow_symmetry
/// "rotation" simulates (1: rank by rank, as on a star of single-device nodes); InputError
/// where the platform has blocks but the workers do not fill them in order.
int rotation_block_ranks(const Setup& s, const std::string& file) {
  const Scenario& sc = s.scenario;
  const int block = s.platform->rotation_block_ranks();
  if (sc.flow_symmetry != FlowSymmetry::rotation || sc.fidelity != Fidelity::flow || block == 0)
    return 1;
  const int dpn = sc.platform.generate->devices_per_node, block_nodes = block / dpn;
  if (sc.placement != "block" || sc.workers_per_node != dpn || sc.workers % block != 0)
    throw InputError(file, "/flow_symmetry",
                     fmt::format("\"rotation\" on this platform simulates blocks of {} ranks "
                                 "({} node{} of {} devices): expected workers filling whole "
                                 "blocks in order (placement \"block\", workers.per_node {}, a "
                                 "multiple of {} workers), got {} workers, {} per node, placement "
                                 "\"{}\"",
                                 block, block_nodes, block_nodes == 1 ? "" : "s", dpn, dpn, block,
                                 sc.workers, sc.workers_per_node, sc.placement));
  return block;
}

/// The generated platform's XML, NCCL's route costs and MG-WFBP's merged buckets.
void use_generated_platform(Setup& setup, const std::string& file) {
  Setup* s = &setup;
  const Scenario& sc = s->scenario;
  s->engine.rotation_block_ranks = rotation_block_ranks(*s, file);
  s->engine.uniform_compute = sc.variability.uniform_compute();
  // On sgdsim's analytic scheduler SimGrid only gives the route costs: with no link noise
  // (keyed by link names) nor link transports, a platform with fewer links gives the same.
  const bool routes_only = sc.fidelity == Fidelity::analytic && !s->engine.analytic_on_simgrid &&
                           sc.variability.link_noise_cv == 0 &&
                           sc.network_model != NetworkModel::links;
  // Rotating by leaves with uniform compute nothing but the first leaf's messages and compute
  // runs: the other leaves need no routes (unless the collective asks for every route's cost).
  const bool first_leaf_only = s->engine.uniform_compute &&
                               sc.platform.generate->topology == Topology::fat_tree &&
                               !s->collective->flow_needs_route_costs(s->engine.group);
  s->engine.platform_xml =
      s->engine.rotation_block_ranks > 1
          ? s->platform->xml_with_ghosts(
                s->engine.rotation_block_ranks / sc.platform.generate->devices_per_node,
                first_leaf_only)
          : s->platform->xml(routes_only);
  if (s->collective->needs_route_costs())
    s->engine.group.tuning_cost = route_network_cost(
        *s->platform, {s->worker_host.begin(), s->worker_host.begin() + sc.workers},
        sc.workers_per_node, sc.network_model, sc.reduction_Bps);
  const std::vector<int>& ranks = s->worker_host;  // workers, then dedicated servers
  auto cost = [&](double bytes) {
    return predict_collective_s(*s->collective, s->engine.group, *s->platform, ranks, bytes,
                                sc.network_model, sc.reduction_Bps);
  };
  if (sc.scheme.merge == "mgwfbp")
    s->workload.buckets = merge_buckets_mgwfbp(s->workload.buckets, cost(0), cost);
  if (sc.scheme.merge == "horovod")
    s->workload.buckets = fuse_buckets_horovod(s->workload.layers, sc.scheme.fusion_bytes,
                                               sc.scheme.params.number("cycle_time"), cost);
}

/// A platform file: its first hosts, checked without SimGrid first.
void use_platform_file(Setup& setup, int sync_servers) {
  Setup* s = &setup;
  const Scenario& sc = s->scenario;
  s->engine.platform_file = sc.platform.file;
  s->engine.extra_hosts = scheme_dedicated_hosts(sc);
  s->engine.extra_hosts += sync_servers;  // the file's hosts after the workers'
  // SimGrid-free first stage of the platform check: a bad file gets one line with its line
  // number before SimGrid (whose parser aborts on some files) reads it.
  check_platform_file(sc.platform.file, static_cast<size_t>(sc.workers + s->engine.extra_hosts));
}

}  // namespace

std::unique_ptr<Setup> make_setup(const std::string& file,
                                  const std::vector<std::string>& overrides,
                                  const std::vector<std::string>& cfg) {
  auto s = std::make_unique<Setup>();
  s->scenario = load_scenario(file, overrides);
  s->workload = load_workload(s->scenario);
  if (s->scenario.scheme.merge != "none" && !s->scenario.platform.generate)
    throw InputError(file, "/scheme/merge",
                     "\"" + s->scenario.scheme.merge +
                         "\" needs a generated platform (its merge rule uses the "
                         "contention-free collective cost of the platform's routes)");
  s->collective = &collective_by_name(s->scenario.collective);
  const Scenario& sc = s->scenario;
  // The engine gives SimGrid payloads as 64-bit integers of 1/kByteScale byte: larger
  // messages would be capped silently.
  for (size_t b = 0; b < s->workload.buckets.size(); ++b)
    if (s->workload.buckets[b].bytes > limits::kMaxMessageBytes)
      throw InputError(file, sc.chakra_files.empty() ? "/model" : "/workload/chakra",
                       fmt::format("bucket {} of the gradient is {:.4g} bytes, more than the limit "
                                   "of {:.0f} bytes (2^48) on message sizes: expected a smaller "
                                   "model, precision or fusion_bytes",
                                   b, s->workload.buckets[b].bytes, limits::kMaxMessageBytes));
  // Rule (README, Model profiles): measured times belong to the profiled device; sgdsim does
  // not rescale them by a device speed (no documented rule maps one GPU's kernel times to
  // another's), so an explicit device.speed changes only FLOP-based costs (the update step).
  if (s->workload.measured && sc.device.speed_flops)
    s->warnings.push_back(
        "model \"" + s->workload.model_name +
        "\" has measured layer times: device.speed does not scale them (it sets only the "
        "optimizer step's speed); use a FLOP-based profile or device.calibrate to change them");
  const int sync_servers = configure_engine(*s, file, cfg);
  if (sc.platform.generate) {
    GeneratedPlatform generated = *sc.platform.generate;
    generated.overlap_slowdown = sc.device.overlap_slowdown;
    s->platform.emplace(generated);
    place_on_generated_platform(*s, sync_servers);
    use_generated_platform(*s, file);
  } else {
    // A file's workers need the second pstate themselves (the platform checks it once loaded).
    use_platform_file(*s, sync_servers);
  }
  s->scheme = make_scheme({&s->scenario, &s->workload});
  return s;
}

TransportParams technology_option(const Args& a, const std::string& opt,
                                  const std::string& fallback) {
  const std::string t = a.get(opt).value_or(fallback);
  try {
    return transport_defaults(t);
  } catch (const std::out_of_range&) {
    throw InputError("usage: " + opt + ": expected tcp, rdma, nvlink, pcie or custom, got \"" + t +
                     "\"");
  }
}

Prediction predict(const Setup& setup) {
  return predict({&setup.scenario, setup.scheme.get(), setup.collective, setup.engine.group,
                  setup.platform ? &*setup.platform : nullptr, setup.worker_host});
}

void check_graph_resources(const Setup& setup, int iterations, bool force) {
  Scenario sc = setup.scenario;
  sc.fidelity = Fidelity::analytic;
  sc.iterations = iterations;
  const std::string warning =
      check_run_resources(sc, estimate_run(sc, setup.workload), default_guard_limits(), force);
  if (!warning.empty()) std::cerr << "sgdsim: warning: " << warning << "\n";
}

}  // namespace sgdsim
