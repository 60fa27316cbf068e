#include "sim/analytic/predict.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/core/errors.hpp"
#include "sim/dag/task_graph.hpp"

namespace sgdsim {

double predict_collective_s(const Collective& collective, const CollectiveGroup& group,
                            const PlatformModel& platform, const std::vector<int>& hosts,
                            double bytes, NetworkModel network_model, double reduction_Bps,
                            int subgroup) {
  // SimGrid's LV08 defaults (latency xkLv08LatencyFactor, bandwidth xkLv08BandwidthFactor, TCP
  // window 4 MiB) for "default"; "ideal" is the plain alpha-beta model; "links" adds each route's
  // transport.
  const bool lv08 = applies_lv08_factors(network_model);
  const bool links = network_model == NetworkModel::links;
  Schedule sched = subgroup_schedule(collective, group, bytes, subgroup);
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
      lat *= kLv08LatencyFactor;
      bw *= kLv08BandwidthFactor;
      if (lat > 0) bw = std::min(bw, kLv08TcpWindowBytes / (2.0 * lat));
    }
    // Channel copies run in lockstep and share the route.
    return lat + step.lockstep * (step.bytes / bw + reduce_s);
  });
}

namespace {
// The model's constant factors on one route: the route's transport under "links", plain
// alpha-beta under "ideal", else SimGrid's LV08 defaults (latency xkLv08LatencyFactor, bandwidth
// xkLv08BandwidthFactor, TCP window 4 MiB).
AlphaBeta route_alpha_beta(const PlatformModel& platform, int from, int to,
                           NetworkModel network_model, double reduction_Bps) {
  const RouteCost r = platform.route(from, to);
  const double gamma = reduction_Bps > 0 ? 1.0 / reduction_Bps : 0.0;
  if (network_model == NetworkModel::links) {
    AlphaBeta ab = r.links_alpha_beta();
    ab.gamma_s_per_byte = gamma;
    return ab;
  }
  double lat = r.latency_s, bw = r.bandwidth_Bps;
  if (applies_lv08_factors(network_model)) {
    lat *= kLv08LatencyFactor;
    bw *= kLv08BandwidthFactor;
    if (lat > 0) bw = std::min(bw, kLv08TcpWindowBytes / (2.0 * lat));
  }
  return {lat, 1.0 / bw, gamma};
}
}  // namespace

NetworkCost route_network_cost(const PlatformModel& platform, const std::vector<int>& hosts,
                               int ranks_per_node, NetworkModel network_model,
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

Prediction predict(const PredictInput& in) {
  const Scenario& sc = *in.scenario;
  if (!in.platform)
    throw InputError(sc.source_file, "/platform/file",
                     "sgdsim predict needs a generated platform (\"platform\": {\"generate\": "
                     "...}); platform files are only simulated by sgdsim run");
  const Topology topo = in.platform->spec().topology;
  if (is_simgrid_cluster(topo))
    throw InputError(sc.source_file, "/platform/generate/topology",
                     "sgdsim predict supports \"star\" and \"fat_tree\"; \"" + topology_name(topo) +
                         "\" routes are only simulated by sgdsim run");
  std::map<std::tuple<double, CollectiveOp, int>, double> comm_time;
  auto duration = [&](const Task& t) {
    if (t.kind != TaskKind::comm) return t.duration_s;
    if (t.src >= 0) {  // point to point (async push and pull), on an idle network
      if (t.src == t.dst) return 0.0;
      RouteCost rc = in.platform->route(in.worker_host[t.src], in.worker_host[t.dst]);
      if (sc.network_model == NetworkModel::links) return rc.links_time_s(t.bytes);
      return rc.latency_s + t.bytes / rc.bandwidth_Bps;
    }
    const std::tuple<double, CollectiveOp, int> key{t.bytes, t.op, t.subgroup};
    auto it = comm_time.find(key);
    if (it == comm_time.end()) {
      CollectiveGroup group = in.group;
      group.op = t.op;
      it = comm_time
               .emplace(key, predict_collective_s(*in.collective, group, *in.platform,
                                                  in.worker_host, t.bytes, sc.network_model,
                                                  sc.reduction_Bps, t.subgroup))
               .first;
    }
    return it->second;
  };
  TaskGraph g = join_fragments(build_fragments(*in.scheme, sc.iterations));
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
  double sum = 0;
  for (double t : times) sum += t;
  p.iteration_time_s = times.empty() ? 0.0 : sum / static_cast<double>(times.size());
  return p;
}

}  // namespace sgdsim
