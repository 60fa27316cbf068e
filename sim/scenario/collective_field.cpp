#include "sim/scenario/collective_field.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/collectives/byteps.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

/// Servers on nodes of their own (byteps dedicated) must fit on the generated platform.
void check_server_nodes(JsonObject& co, const Scenario& s, const Collective& c) {
  if (c.server_nodes(s.collective_servers, s.collective_options.server_placement) == 0 ||
      !s.platform.generate)
    return;
  const auto& gp = *s.platform.generate;
  const int nodes = s.workers / std::max(1, s.workers_per_node);
  if (gp.nodes < nodes + s.dedicated_servers())
    throw InputError(co.file(), co.pointer_of("servers"),
                     fmt::format("expected at most {} dedicated servers (platform nodes {} less "
                                 "{} worker nodes; each server takes a node), got {}",
                                 gp.nodes - nodes, gp.nodes, nodes, s.dedicated_servers()));
}

/// The options every registered algorithm declares (Collective::params), each read as its
/// declaration says into s.collective_options; an "auto" step latency (nccl_tuner) keeps
/// NCCL's hwLat of the link class's technology.
void read_collective_params(JsonObject& co, Scenario& s) {
  const auto& gen = s.platform.generate;
  CollectiveGroup& g = s.collective_options;
  // A node preset whose ring runs over NVLink takes NCCL's NVLink rows whatever the link's
  // technology (which sets its per-message costs under network_model "links").
  const bool preset_nvlink = gen && gen->intra_ring_nvlink;
  const std::string& intra = preset_nvlink ? "nvlink"
                             : gen         ? gen->intra_node_link.transport.technology
                                           : s.platform.file_transport.technology;
  g.step_latency_intra_s = nccl_step_latency_s(intra);
  g.intra_nvlink = is_nvlink(intra);
  g.nvls_link_Bps = gen ? gen->intra_nvls_Bps : 0.0;
  g.step_latency_inter_s = nccl_step_latency_s(gen ? gen->node_link.transport.technology
                                                   : s.platform.file_transport.technology);
  for (const DeclaredCollectiveParam& d : collective_params())
    apply_param(g, d.param, read_param(co, d.param.param));
}

/// The algorithm's own checks of its options, its placement needs, and other algorithms'
/// options (only their defaults, a resolved scenario's, are accepted).
void check_collective(JsonObject& co, const Scenario& s) {
  const Collective& c = collective_by_name(s.collective);
  if (std::optional<OptionProblem> problem = c.check(collective_group(s))) {
    const std::string pointer = problem->option == "ranks" ? "/workers/count"
                                : problem->option == "ranks_per_node"
                                    ? "/workers/per_node"
                                    : co.pointer_of(problem->option);
    throw InputError(co.file(), pointer, problem->message);
  }
  check_server_nodes(co, s, c);
  if (c.needs_block_placement() && s.placement != "block")
    throw InputError(co.file(), "/collective/algorithm",
                     "\"" + s.collective +
                         "\" needs workers.placement \"block\" (a node's workers "
                         "must be consecutive ranks)");
  const std::vector<CollectiveParam> mine = c.params();
  for (const DeclaredCollectiveParam& d : collective_params()) {
    const Param& p = d.param.param;
    if (!p.exclusive || std::any_of(mine.begin(), mine.end(),
                                    [&](const CollectiveParam& m) { return m.param.key == p.key; }))
      continue;
    if (co.has(p.key) && co.raw(p.key) != p.default_value)
      co.fail(p.key, fmt::format("{} (only {})", p.default_value.dump(), d.users()));
  }
}

/// The minor version of `nccl_version` ("2.4", "2.18.3" or "2.18.3-1").
int nccl_minor(JsonObject& co) {
  const std::string v = co.get_string("nccl_version");
  const std::string expected =
      fmt::format("an NCCL version 2.{} to 2.{} such as \"2.4\" or \"2.18.3\"", kNcclOldestMinor,
                  kNcclNewestMinor);
  if (v.rfind("2.", 0) != 0) co.fail("nccl_version", expected);
  size_t end = 2;
  while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end]))) ++end;
  const std::string rest = v.substr(end);
  const bool tail_ok =
      rest.empty() ||
      (rest[0] == '.' && rest.find_first_not_of("0123456789.-", 1) == std::string::npos);
  if (end == 2 || end > 4 || !tail_ok) co.fail("nccl_version", expected);
  const int minor = std::stoi(v.substr(2, end - 2));
  if (minor < kNcclOldestMinor || minor > kNcclNewestMinor) co.fail("nccl_version", expected);
  return minor;
}

/// NCCL over sockets opens a connection per channel and peer: where the node link's NCCL
/// sockets were given no `channels`, they take the collective's `channels` (docs/nccl-sockets.md).
void follow_nccl_channels(Scenario& s, int channels) {
  auto& gen = s.platform.generate;
  if (!gen || !gen->node_sockets) return;
  SocketSpec& spec = *gen->node_sockets;
  if (spec.channels_given || !spec.params.channels_are_nccls) return;
  spec.params.channels = channels;
  gen->node_link.transport.stream_bandwidth_Bps = socket_stream_cap_Bps(spec);
  s.resolved["platform"]["generate"]["node_link"]["sockets"]["channels"] = channels;
}

/// `chunk_bytes` and `channels`; with `nccl_version` their defaults are that NCCL's ring
/// chunk and channels (docs/spec-sheet.md), else 0 (messages whole) and 1.
void read_pipelining(JsonObject& co, Scenario& s) {
  if (co.has("nccl_version")) {
    const auto& gen = s.platform.generate;
    const bool nvlink =
        gen && gen->devices_per_node > 1 &&
        (is_nvlink(gen->intra_node_link.transport.technology) || gen->intra_ring_nvlink);
    const bool multi_node = s.workers > std::max(1, s.workers_per_node);
    const int minor = nccl_minor(co);
    if (const int oldest = collective_by_name(s.collective).oldest_nccl_minor(); minor < oldest)
      co.fail("nccl_version", fmt::format("2.{} or later (algorithm \"{}\" models NCCL 2.{}'s), "
                                          "or algorithm \"ring\"",
                                          oldest, s.collective, oldest));
    const NcclRingDefaults d = nccl_ring_defaults(minor, multi_node && nvlink);
    if (!co.has("chunk_bytes")) co.record("chunk_bytes", static_cast<int64_t>(d.chunk_bytes));
    if (!co.has("channels")) co.record("channels", d.channels);
    s.chunk_bytes = co.has("chunk_bytes") ? co.get_size_bytes("chunk_bytes") : d.chunk_bytes;
    s.collective_channels =
        co.has("channels") ? static_cast<int>(co.get_int("channels", 1, 64)) : d.channels;
    follow_nccl_channels(s, s.collective_channels);
    return;
  }
  s.chunk_bytes = co.get_size_bytes("chunk_bytes");
  s.collective_channels = static_cast<int>(co.get_int("channels", 1, 64));
}

}  // namespace

void read_collective_field(JsonObject& root, Scenario& s) {
  JsonObject co = root.get_object("collective");
  s.collective =
      canonical_collective_name(co.get_choice("algorithm", collective_names_and_aliases()));
  s.collective_servers = static_cast<int>(co.get_int("servers", 0, 1 << 24));
  if (co.has("reduction_speed")) s.reduction_Bps = co.get_bandwidth_Bps("reduction_speed");
  read_pipelining(co, s);
  // Pipelining multiplies messages (SimGrid 3.32 slows with many in flight); NCCL's chunks
  // range from 32 KiB (trees on small messages) to 2 MiB (rings), so below 1 KiB is a mistake.
  if (s.chunk_bytes != 0 && s.chunk_bytes < 1024) co.fail("chunk_bytes", "0 or at least 1 KiB");
  read_collective_params(co, s);
  check_collective(co, s);
  co.finish();
}

int raw_collective_server_nodes(const json& raw) {
  if (!raw.contains("collective") || !raw["collective"].is_object()) return 0;
  const json& co = raw["collective"];
  if (!co.contains("algorithm") || !co["algorithm"].is_string()) return 0;
  try {
    const Collective& c = collective_by_name(co["algorithm"].get<std::string>());
    const int servers = co.contains("servers") && co["servers"].is_number_integer()
                            ? std::max(0, co["servers"].get<int>())
                            : 0;
    const std::string placement =
        co.contains("server_placement") && co["server_placement"].is_string()
            ? co["server_placement"].get<std::string>()
            : "colocated";
    return c.server_nodes(servers, placement);
  } catch (const std::out_of_range&) {
    return 0;  // the collective section reports the unknown algorithm
  }
}

CollectiveGroup collective_group(const Scenario& s) {
  CollectiveGroup g = s.collective_options;
  g.ranks = s.workers;
  g.ranks_per_node = s.workers_per_node;
  g.servers = s.collective_servers;
  g.chunk_bytes = s.chunk_bytes;
  g.channels = s.collective_channels;
  return g;
}

double Scenario::tensors_in_flight_bytes() const {
  if (!collective_by_name(collective).overlaps_tensors()) return -1;
  const CollectiveGroup g = collective_group(*this);
  if (g.scheduling_credit == 0) return std::numeric_limits<double>::infinity();
  return g.scheduling_credit * byteps_partition_bound(g);
}

int Scenario::dedicated_servers() const {
  return collective_servers > 0 ? collective_servers : workers / std::max(1, workers_per_node);
}

}  // namespace sgdsim
