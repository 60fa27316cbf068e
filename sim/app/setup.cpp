#include "sim/app/setup.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "sim/app/guards.hpp"
#include "sim/core/errors.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/report/recorder.hpp"
#include "sim/scenario/platform_check.hpp"

namespace sgdsim {

std::unique_ptr<Setup> make_setup(const std::string& file,
                                  const std::vector<std::string>& overrides,
                                  const std::vector<std::string>& cfg) {
  auto s = std::make_unique<Setup>();
  s->scenario = load_scenario(file, overrides);
  s->workload = load_workload(s->scenario);
  if (s->scenario.scheme.merge == "mgwfbp" && !s->scenario.platform.generate)
    throw InputError(file, "/scheme/merge",
                     "\"mgwfbp\" needs a generated platform (its merge rule uses the "
                     "contention-free collective cost of the platform's routes)");
  s->collective = &collective_by_name(s->scenario.collective);
  const Scenario& sc = s->scenario;
  // Rule (README, Model profiles): measured times belong to the profiled device; sgdsim does
  // not rescale them by a device speed (no documented rule maps one GPU's kernel times to
  // another's), so an explicit device.speed changes only FLOP-based costs (the update step).
  if (s->workload.measured && sc.device.speed_flops)
    s->warnings.push_back(
        "model \"" + s->workload.model_name +
        "\" has measured layer times: device.speed does not scale them (it sets only the "
        "optimizer step's speed); use a FLOP-based profile or device.calibrate to change them");
  s->engine.workers = sc.workers;
  s->engine.network_model = sc.network_model;
  // Links without a technology property: a generated flat cluster's are all node links.
  s->engine.default_transport =
      sc.platform.generate ? sc.platform.generate->node_link.transport : sc.platform.file_transport;
  s->engine.fidelity = sc.fidelity;
  // Testing hook, not a scenario field: the old analytic path on SimGrid, to compare against.
  if (const char* v = std::getenv("SGDSIM_ANALYTIC_ON_SIMGRID"))
    s->engine.analytic_on_simgrid = std::string(v) == "1";
  s->engine.group = collective_group(sc);
  s->engine.start_delays = s->collective->latency_in_start_delay();
  if (s->collective->needs_route_costs() && !sc.platform.generate)
    throw InputError(file, "/collective/algorithm",
                     "\"" + sc.collective +
                         "\" needs a generated platform (its choice between ring and tree uses "
                         "the contention-free cost of the platform's routes)");
  // byteps's dedicated servers are ranks after the workers, on hosts of their own.
  const int sync_servers = s->collective->extra_ranks(s->engine.group);
  s->engine.reduction_Bps = sc.reduction_Bps;
  s->engine.link_noise_cv = sc.variability.link_noise_cv;
  s->engine.seed = sc.seed;
  // The scenario's SimGrid options, then --cfg's (a later one wins): all of them go into
  // scenario.resolved.json, so rerunning it needs no --cfg.
  s->engine.cfg = sc.simgrid_cfg;
  s->engine.cfg.insert(s->engine.cfg.end(), cfg.begin(), cfg.end());
  s->scenario.resolved["simgrid_cfg"] = s->engine.cfg;
  s->engine.scenario_file = file;
  if (sc.platform.generate) {
    s->platform.emplace(*sc.platform.generate);
    for (int w = 0; w < sc.workers; ++w) {
      int h = worker_host_index(w, sc.workers, sc.workers_per_node,
                                sc.platform.generate->devices_per_node, sc.placement);
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
    s->engine.platform_xml = s->platform->xml();
    if (s->collective->needs_route_costs())
      s->engine.group.tuning_cost = route_network_cost(
          *s->platform, {s->worker_host.begin(), s->worker_host.begin() + sc.workers},
          sc.workers_per_node, sc.network_model, sc.reduction_Bps);
    if (sc.scheme.merge == "mgwfbp") {
      const std::vector<int>& ranks = s->worker_host;  // workers, then dedicated servers
      auto cost = [&](double bytes) {
        return predict_collective_s(*s->collective, s->engine.group, *s->platform, ranks, bytes,
                                    sc.network_model, sc.reduction_Bps);
      };
      s->workload.buckets = merge_buckets_mgwfbp(s->workload.buckets, cost(0), cost);
    }
  } else {
    s->engine.platform_file = sc.platform.file;
    s->engine.extra_hosts = scheme_dedicated_hosts(sc);
    s->engine.extra_hosts += sync_servers;  // the file's hosts after the workers'
    // SimGrid-free first stage of the platform check: a bad file gets one line with its line
    // number before SimGrid (whose parser aborts on some files) reads it.
    check_platform_file(sc.platform.file, static_cast<size_t>(sc.workers + s->engine.extra_hosts));
  }
  s->scheme = make_scheme({&s->scenario, &s->workload});
  return s;
}

double predict_collective_s(const Collective& collective, const CollectiveGroup& group,
                            const PlatformModel& platform, const std::vector<int>& hosts,
                            double bytes, const std::string& network_model, double reduction_Bps) {
  // SimGrid's LV08 defaults (latency x13.01, bandwidth x0.97, TCP window 4 MiB) for
  // "default"; "ideal" is the plain alpha-beta model; "links" adds each route's transport.
  const bool lv08 = network_model == "default" || network_model == "smpi";
  const bool links = network_model == "links";
  Schedule sched = collective.schedule(group, bytes);
  std::map<std::pair<int, int>, RouteCost> cache;
  return schedule_time_s(sched, [&](const CommStep& step) {
    auto key = std::make_pair(hosts[step.src], hosts[step.dst]);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, platform.route(key.first, key.second)).first;
    // A server's sum runs at the server summation throughput (byteps), others at the device's.
    const double reduce_Bps = step.server_reduce ? group.server_reduction_Bps : reduction_Bps;
    const double reduce_s = reduce_Bps > 0 ? step.reduce_bytes / reduce_Bps : 0.0;
    if (links) {
      const AlphaBeta ab = it->second.links_alpha_beta();
      return ab.alpha_s + step.lockstep * (step.bytes * ab.beta_s_per_byte + reduce_s);
    }
    double lat = it->second.latency_s, bw = it->second.bandwidth_Bps;
    if (lv08) {
      lat *= 13.01;
      bw *= 0.97;
      if (lat > 0) bw = std::min(bw, 4194304.0 / (2.0 * lat));
    }
    // Channel copies run in lockstep and share the route.
    return lat + step.lockstep * (step.bytes / bw + reduce_s);
  });
}

namespace {
// The model's constant factors on one route: the route's transport under "links", plain
// alpha-beta under "ideal", else SimGrid's LV08 defaults (latency x13.01, bandwidth x0.97,
// TCP window 4 MiB).
AlphaBeta route_alpha_beta(const PlatformModel& platform, int from, int to,
                           const std::string& network_model, double reduction_Bps) {
  const RouteCost r = platform.route(from, to);
  const double gamma = reduction_Bps > 0 ? 1.0 / reduction_Bps : 0.0;
  if (network_model == "links") {
    AlphaBeta ab = r.links_alpha_beta();
    ab.gamma_s_per_byte = gamma;
    return ab;
  }
  double lat = r.latency_s, bw = r.bandwidth_Bps;
  if (network_model != "ideal") {
    lat *= 13.01;
    bw *= 0.97;
    if (lat > 0) bw = std::min(bw, 4194304.0 / (2.0 * lat));
  }
  return {lat, 1.0 / bw, gamma};
}
}  // namespace

NetworkCost route_network_cost(const PlatformModel& platform, const std::vector<int>& hosts,
                               int ranks_per_node, const std::string& network_model,
                               double reduction_Bps) {
  const int p = static_cast<int>(hosts.size()), d = std::max(1, std::min(ranks_per_node, p));
  if (p < 2) return {};
  auto cost = [&](int a, int b) {
    return route_alpha_beta(platform, hosts[a], hosts[b], network_model, reduction_Bps);
  };
  NetworkCost c;
  c.intra = cost(0, d > 1 ? 1 : std::min(1, p - 1));
  c.inter = d < p ? cost(0, d) : c.intra;
  if (d == 1) c.intra = c.inter;
  return c;
}

Prediction predict(const Setup& setup) {
  const Scenario& sc = setup.scenario;
  if (!setup.platform)
    throw InputError(sc.source_file, "/platform/file",
                     "sgdsim predict needs a generated platform (\"platform\": {\"generate\": "
                     "...}); platform files are only simulated by sgdsim run");
  const std::string& topo = setup.platform->spec().topology;
  if (topo == "torus" || topo == "dragonfly")
    throw InputError(sc.source_file, "/platform/generate/topology",
                     "sgdsim predict supports \"star\" and \"fat_tree\"; \"" + topo +
                         "\" routes are only simulated by sgdsim run");
  std::map<double, double> comm_time;
  auto duration = [&](const Task& t) {
    if (t.kind != TaskKind::comm) return t.duration_s;
    if (t.src >= 0) {  // point to point (async push and pull), on an idle network
      if (t.src == t.dst) return 0.0;
      RouteCost rc = setup.platform->route(setup.worker_host[t.src], setup.worker_host[t.dst]);
      if (sc.network_model == "links") return rc.links_time_s(t.bytes);
      return rc.latency_s + t.bytes / rc.bandwidth_Bps;
    }
    auto it = comm_time.find(t.bytes);
    if (it == comm_time.end())
      it = comm_time
               .emplace(t.bytes, predict_collective_s(*setup.collective, setup.engine.group,
                                                      *setup.platform, setup.worker_host, t.bytes,
                                                      sc.network_model, sc.reduction_Bps))
               .first;
    return it->second;
  };
  TaskGraph g = join_fragments(build_fragments(*setup.scheme, sc.iterations));
  std::vector<double> finish = g.earliest_finish_s(duration);
  Prediction p;
  p.iteration_end_s.assign(static_cast<size_t>(sc.iterations), 0.0);
  for (uint32_t v = 0; v < g.num_tasks(); ++v) {
    const Task& t = g.task(v);
    if (t.kind == TaskKind::update)
      p.iteration_end_s[t.iteration] = std::max(p.iteration_end_s[t.iteration], finish[v]);
    if (t.iteration == 0 && (t.worker == 0 || t.worker < 0)) {
      if (t.kind == TaskKind::comm)
        p.comm_s += duration(t);
      else if (t.kind != TaskKind::update)
        p.compute_s += t.duration_s;
    }
  }
  std::vector<double> times;
  for (int i = sc.warmup_iterations; i < sc.iterations; ++i)
    times.push_back(p.iteration_end_s[i] - (i > 0 ? p.iteration_end_s[i - 1] : 0.0));
  p.iteration_time_s = series_stats(times).mean;
  return p;
}

}  // namespace sgdsim
