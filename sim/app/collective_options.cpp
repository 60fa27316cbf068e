// `sgdsim collective`'s options beyond the fabric's (sim/app/fabric_cli): the algorithm and its
// declared options, the group, and the platform the collective runs on (a platform file or a
// generated star whose routes have exactly the given latency and bandwidth).
#include "sim/app/collective_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "sim/analytic/platform_model.hpp"
#include "sim/app/fabric_cli.hpp"
#include "sim/app/setup.hpp"
#include "sim/collectives/byteps.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/node_field.hpp"
#include "sim/scenario/platform_check.hpp"

namespace fs = std::filesystem;

namespace sgdsim {

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

namespace {

/// --node PRESET: the ring's slowest host-path hop becomes the intra-node bandwidth, and the
/// NICs' host path caps the bandwidth between nodes.
/// Returns whether the node's ring runs over NVLink; `nvls_Bps` gets each GPU's NVLink rate
/// where its NVSwitch has NVLink SHARP (NCCL's NVLS), else 0.
bool apply_node_option(const Args& a, int dpn, double& bw, double& intra_bw, double& nvls_Bps) {
  nvls_Bps = 0;
  const std::optional<std::string> name = a.get("--node");
  if (!name) return false;
  if (a.has("--intra-bandwidth"))
    throw InputError("usage: give either --node or --intra-bandwidth, not both");
  const NodeDescription n = read_node_argument(*name, "usage: --node");
  if (dpn > static_cast<int>(n.gpus.size()))
    throw InputError(
        fmt::format("usage: --devices-per-node: expected at most {} (the GPUs of node \"{}\"), "
                    "got {}",
                    n.gpus.size(), n.name, dpn));
  if (a.has("--bandwidth")) check_within_nic_line_rate(bw, n, "usage: --bandwidth", "");
  bw = std::min(bw, nic_path(n, dpn).rate_Bps);
  if (dpn < 2) return false;
  const HostPath ring = intra_node_ring_path(n, dpn);
  intra_bw = ring.rate_Bps;
  nvls_Bps = nvls_link_Bps(n, ring);
  return ring.transport == HostTransport::p2p_nvlink;
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

/// A technology with a per-message overhead applies it as a factor of the route latency, so
/// each of its links needs a latency above 0 (the node link gets what --latency leaves above
/// --intra-latency when a node has several devices).
void check_link_latencies(const GeneratedPlatform& g) {
  const bool several = g.devices_per_node > 1;
  for (const LinkSpec* l : {&g.node_link, &g.intra_node_link})
    if (l->transport.overhead_s > 0 && l->latency_s <= 0 && (l == &g.node_link || several))
      throw InputError(
          "usage: a " + l->transport.technology +
          " link needs a latency > 0 (its per-message overhead is applied as a factor of the "
          "route latency)" +
          (l == &g.node_link && several
               ? ": with --devices-per-node > 1 the node link gets (--latency - "
                 "--intra-latency) / 2, so give --latency above --intra-latency"
               : ""));
}

}  // namespace

TransportParams with_sockets(const Args& a, NetworkModel model, TransportParams t) {
  const std::string lib = *a.get("--sockets");
  if (model != NetworkModel::links || !uses_sockets(t.technology))
    throw InputError("usage: --sockets needs --network-model links and --technology tcp");
  if (a.has("--platform"))
    throw InputError("usage: --sockets applies to the generated star, not --platform");
  try {
    const SocketParams p = socket_defaults(lib);
    t.stream_bandwidth_Bps = socket_peer_Bps(p, kDefaultStreamGoodput_Bps);
    t.connection_per_pair = one_connection_per_pair(p);  // as a scenario's node_link.sockets
  } catch (const std::out_of_range&) {
    throw InputError(fmt::format("usage: --sockets: expected {}, got \"{}\"",
                                 fmt::join(socket_library_names(), ", "), lib));
  }
  return t;
}

/// An option only another algorithm uses is refused unless it keeps its default (as a
/// scenario's `collective` object does).
void refuse_foreign_option(const Collective& coll, const DeclaredCollectiveParam& d,
                           const ParamValue& v) {
  const Param& p = d.param.param;
  const std::vector<CollectiveParam> mine = coll.params();
  if (!p.exclusive || std::any_of(mine.begin(), mine.end(),
                                  [&](const CollectiveParam& m) { return m.param.key == p.key; }))
    return;
  const std::optional<ParamValue> def = default_param_value(p);
  if (def && def->number == v.number && def->text == v.text) return;
  throw InputError(fmt::format("usage: {}: only {}, not \"{}\"", p.flag(), d.users(), coll.name()));
}

void read_group_options(const Args& a, CollectiveCli& c) {
  const Collective& coll = *c.coll;
  EngineConfig& cfg = c.cfg;
  const int ranks = c.ranks, dpn = c.dpn;
  const TransportParams& node_transport = c.node_transport;
  const TransportParams& intra_transport = c.intra_transport;
  cfg.workers = ranks;
  cfg.network_model = c.model;
  cfg.fidelity = c.fidelity;
  cfg.group =
      CollectiveGroup{ranks, dpn, static_cast<int>(int_option(a, "--servers", 0, 0, INT32_MAX))};
  cfg.group.channels = static_cast<int>(int_option(a, "--channels", 1, 1, INT32_MAX));
  // nccl_tuner's per-step latencies follow the link technologies (NCCL's hwLat rows): what
  // their "auto" keeps.
  cfg.group.step_latency_intra_s = nccl_step_latency_s(intra_transport.technology);
  cfg.group.intra_nvlink = is_nvlink(intra_transport.technology);
  cfg.group.step_latency_inter_s = nccl_step_latency_s(node_transport.technology);
  for (const DeclaredCollectiveParam& d : collective_params()) {
    const Param& p = d.param.param;
    const std::string text = a.get(p.flag()).value_or(
        p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump());
    const std::optional<ParamValue> v = parse_param_text(p, text);
    if (!v)
      throw InputError(
          fmt::format("usage: {}: expected {}, got \"{}\"", p.flag(), p.expected(), text));
    if (a.get(p.flag())) refuse_foreign_option(coll, d, *v);
    apply_param(cfg.group, d.param, *v);
  }
  cfg.start_delays = coll.delays_start(cfg.group);
  if (auto v = a.get("--chunk-bytes"))
    cfg.group.chunk_bytes = parse_size_option("--chunk-bytes", *v, "512KiB");
  if (cfg.group.chunk_bytes != 0 && cfg.group.chunk_bytes < 1024)
    throw InputError("usage: --chunk-bytes: expected 0 or at least 1 KiB, got \"" +
                     *a.get("--chunk-bytes") + "\"");
  if (auto v = a.get("--reduction-speed"))
    cfg.reduction_Bps = parse_quantity_option("--reduction-speed", *v, units::parse_bandwidth_Bps,
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

namespace {
/// What the fidelity changes in the star: ECMP collisions need flow; at flow fidelity the
/// --channels copies share a pair's stream limit, as the closed form shares it.
void apply_fidelity(const CollectiveCli& c, GeneratedPlatform& g) {
  if (g.spines > 1 && c.fidelity == Fidelity::analytic)
    throw InputError("usage: --spines > 1 (ECMP hash collisions) needs --fidelity flow");
  if (c.fidelity == Fidelity::flow) g.stream_sharing_messages = c.cfg.group.channels;
}
}  // namespace

double use_generated_star(const Args& a, CollectiveCli& c) {
  const Collective& coll = *c.coll;
  EngineConfig& cfg = c.cfg;
  const int ranks = c.ranks, dpn = c.dpn, extra = c.extra;
  const double bytes = c.bytes;
  const NetworkModel model = c.model;
  const TransportParams& node_transport = c.node_transport;
  const TransportParams& intra_transport = c.intra_transport;
  std::optional<double> formula;
  // A quantity option of the star, `def` when not given.
  auto quantity = [&a](const std::string& opt, const std::string& def,
                       std::optional<double> (*parse)(std::string_view), const std::string& what) {
    return parse_quantity_option(opt, a.get(opt).value_or(def), parse,
                                 what + " such as \"" + def + "\"");
  };
  double bw = quantity("--bandwidth", "10Gbps", units::parse_bandwidth_Bps, "a bandwidth");
  const double lat = quantity("--latency", "1us", units::parse_time_s, "a time");
  double intra_bw =
      quantity("--intra-bandwidth", "16GBps", units::parse_bandwidth_Bps, "a bandwidth");
  const double intra_lat = quantity("--intra-latency", "1us", units::parse_time_s, "a time");
  check_star_limits(bw, intra_bw, lat, intra_lat);
  double nvls_Bps = 0;
  // A node whose ring runs over NVLink takes NCCL's NVLink rows, as for --intra-technology.
  if (apply_node_option(a, dpn, bw, intra_bw, nvls_Bps)) {
    if (!a.has("--step-latency-intra"))
      c.cfg.group.step_latency_intra_s = nccl_step_latency_s("nvlink");
    c.cfg.group.intra_nvlink = true;
  }
  c.cfg.group.nvls_link_Bps = nvls_Bps;
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
    check_link_latencies(g);
    cfg.default_transport = node_transport;
  }
  apply_fabric_options(a, g, worker_nodes + extra);
  apply_fidelity(c, g);
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

}  // namespace sgdsim
