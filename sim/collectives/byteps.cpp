// BytePS-style synchronous parameter server (Jiang et al., OSDI 2020; github.com/bytedance/byteps,
// docs/architecture.md): the ranks of a node reduce-scatter the tensor (NCCL's ring inside the
// node: BytePS's default REDUCE stage, ncclReduceScatter in byteps/common/core_loops.cc
// PostNcclCalls, ncclReduce only with BYTEPS_REDUCE_ROOTS), the node's first rank pushes it in
// partitions to the servers, every server sums the pushes of its partitions (on its CPU, at
// server_reduction_Bps) and serves them back to every node (pull), and the node's ranks
// all-gather it (the BROADCAST stage: ncclAllGather). Servers are co-located (one per node, on
// its first rank) or dedicated (ranks after the workers, hosts of their own).
//
// Partitions as BytePS cuts them (byteps/common/operations.cc, InitTensor): parts of the
// partition bound (BYTEPS_PARTITION_BYTES rounded up to ranks_per_node pages) and a remainder,
// part i of the tensor declared d-th has key (d << 16) + i, and the key's hash modulo the server
// count picks its server (global.cc, EncodeDefaultKey; sim/collectives/byteps.hpp). Parts are
// pushed in waves: wave w holds the w-th part of every server that has one, so the flows of a
// wave go to distinct servers and start together.
// Pipelining with dedicated servers: wave w+1 is pushed into a server as soon as it has summed
// wave w, while wave w is pulled (pushes go root -> server, pulls server -> root: opposite link
// directions). Co-located, every node both pushes and serves over the same NIC, so a node's network
// phases alternate (push 0, pull 0, push 1, ...) and a wave's sums sit between its push and its
// pull. Several tensors run at once (overlaps_tensors), as BytePS runs them by default; the sync
// scheme's optional window (scheduling_credit) bounds the partitions whose push-pulls run at
// once. That window is not BytePS's BYTEPS_SCHEDULING_CREDIT, which gates only the REDUCE stage
// (byteps/common/scheduled_queue.cc; core_loops.cc FinishOrProceed returns the credit when a
// partition's reduce inside the node ends), nor ByteScheduler's (returned once a partition's push
// is acknowledged); both also order the waiting partitions by priority, which is not modelled.
//
// Stages per wave (pipeline_partitions, the default): BytePS runs every partition through its
// own queues (REDUCE, PUSH, PULL, BROADCAST; core_loops.cc), so a tensor's parts pipeline
// through the stages: here wave w's pushes wait for wave w's reduce-scatter only and its
// all-gather for its own pulls, and a node's rings run in the order BytePS's NCCL loop issues
// them (every wave's reduce-scatter, all ready at once, then the all-gathers). Off, the whole
// tensor is reduced before its first push and gathered after its last pull.
//
// Leaves out: the grouping of up to BYTEPS_NCCL_GROUP_SIZE partitions per NCCL call (one ring per
// wave here), the ncclReduce / ncclBroadcast variant (BYTEPS_REDUCE_ROOTS), the reduce per PCIe
// switch with a CPU sum across switches (BYTEPS_PCIE_SWITCH_SIZE), the mixed and built_in hashes,
// and the device-to-host and host-to-device copies of each rank's shard (the root's pushes and
// pulls leave and enter through its device, so they share its link with the node's rings).
#include "sim/collectives/byteps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace sgdsim {

namespace {

/// Who serves what: the shape of one BytePS push-pull.
struct Layout {
  int nodes = 1;     ///< worker nodes (ranks / ranks_per_node)
  int per_node = 1;  ///< ranks per node
  int servers = 1;   ///< server processes
  bool dedicated = false;
  std::vector<std::vector<BytepsPart>> waves;  ///< wave w: the w-th part of each server
  int root(int node) const { return node * per_node; }
  int server_rank(int s) const { return dedicated ? nodes * per_node + s : root(s); }
  /// Network endpoints: nodes 0..N-1 (their roots), then dedicated servers.
  int endpoints() const { return nodes + (dedicated ? servers : 0); }
  /// The ranks of `node`, its root first.
  std::vector<int> members(int node) const {
    std::vector<int> m;
    for (int r = root(node); r < root(node) + per_node; ++r) m.push_back(r);
    return m;
  }
  /// The bytes of wave w's parts.
  double wave_bytes(int w) const {
    double sum = 0;
    for (const BytepsPart& p : waves[w]) sum += p.bytes;
    return sum;
  }
};

/// Whether the waves pipeline through the stages: the option, a node of several ranks (one has
/// no stage inside the node) and more than one wave.
bool pipelined(const CollectiveGroup& g, const Layout& l) {
  return g.pipeline_partitions != 0 && l.per_node > 1 && l.waves.size() > 1;
}

/// Server processes: `servers` dedicated ones (0: one per node), else one per node.
int server_count(const CollectiveGroup& g, int nodes) {
  return g.server_placement == "dedicated" && g.servers > 0 ? g.servers : nodes;
}

/// Waves of a push-pull of `bytes` over `servers`: the most parts any one server has.
int wave_count(const CollectiveGroup& g, double bytes, int servers) {
  std::vector<int> on(static_cast<size_t>(servers), 0);
  for (const BytepsPart& part : byteps_partitions(g, bytes, servers)) ++on[part.server];
  return *std::max_element(on.begin(), on.end());
}

Layout layout(const CollectiveGroup& g, double bytes) {
  Layout l;
  l.per_node = std::max(1, std::min(g.ranks_per_node, g.ranks));
  if (g.ranks % l.per_node != 0)
    throw std::invalid_argument("byteps needs every node to hold ranks_per_node ranks");
  l.nodes = g.ranks / l.per_node;
  l.dedicated = g.server_placement == "dedicated";
  if (!l.dedicated && g.servers > 0 && g.servers != l.nodes)
    throw std::invalid_argument("byteps with co-located servers runs one server per node");
  l.servers = server_count(g, l.nodes);
  std::vector<int> taken(static_cast<size_t>(l.servers), 0);  // parts per server so far
  for (const BytepsPart& p : byteps_partitions(g, bytes, l.servers)) {
    const int w = taken[p.server]++;
    if (w == static_cast<int>(l.waves.size())) l.waves.emplace_back();
    l.waves[w].push_back(p);
  }
  for (auto& wave : l.waves)  // a wave's parts in server order (deterministic flows)
    std::sort(wave.begin(), wave.end(),
              [](const BytepsPart& a, const BytepsPart& b) { return a.server < b.server; });
  return l;
}

using Ids = std::vector<uint32_t>;

void append(Ids& to, const Ids& from) {
  to.insert(to.end(), from.begin(), from.end());
}

/// The latest send and receive of each of `ranks`.
Ids last_messages(const ScheduleBuilder& b, const std::vector<int>& ranks) {
  Ids out;
  for (int r : ranks)
    for (const auto& q : {b.last_send(r), b.last_recv(r)})
      if (q) out.push_back(*q);
  return out;
}

/// Per wave, per node: messages a stage of that wave at that node waits for.
using WaveIds = std::vector<std::vector<Ids>>;

/// NCCL's ring reduce-scatter (`reduce`) or all-gather of `bytes` among `members`: d - 1 rounds
/// in which every member sends bytes / d to the next; the first round's sends wait for `ready`
/// and, with `after_own`, for the members' own steps so far.
void add_node_ring(ScheduleBuilder& b, const std::vector<int>& members, double bytes, bool reduce,
                   const Ids& ready, bool after_own = true) {
  const int d = static_cast<int>(members.size());
  const double shard = bytes / d, reduced = reduce ? shard : 0.0;
  if (d < 2) return;
  // The first round: each member after `ready` and its own steps so far (all read before any
  // of the round is added, or a send would wait for its neighbour's send of the same round).
  std::vector<Ids> first(static_cast<size_t>(d), ready);
  for (int i = 0; i < d && after_own; ++i)
    for (const auto& q :
         {b.last_send(members[i]), b.last_recv(members[i]), b.last_recv(members[(i + 1) % d])})
      if (q) first[i].push_back(*q);
  b.next_round();
  for (int i = 0; i < d; ++i) b.add(members[i], members[(i + 1) % d], shard, reduced, first[i]);
  for (int r = 1; r + 1 < d; ++r) {
    b.next_round();
    for (int i = 0; i < d; ++i) b.add_mpi(members[i], members[(i + 1) % d], shard, reduced);
  }
}

/// Flows of the latest network phase on each endpoint's uplink (out) and downlink (in); a phase
/// without flows on a link keeps the earlier ones.
struct LinkState {
  std::vector<Ids> out, in;
  void advance(std::vector<Ids>& cur_out, std::vector<Ids>& cur_in) {
    for (size_t e = 0; e < out.size(); ++e) {
      if (!cur_out[e].empty()) out[e] = std::move(cur_out[e]);
      if (!cur_in[e].empty()) in[e] = std::move(cur_in[e]);
      cur_out[e].clear();
      cur_in[e].clear();
    }
  }
};

/// byteps's options (the scenario's `collective` keys and `sgdsim collective`'s flags).
std::vector<CollectiveParam> byteps_params() {
  return {
      bind_param(
          {.key = "partition_bytes",
           .type = ParamType::size,
           .default_value = 4096000,
           .brief = "largest partition pushed to a server (0 = one partition)",
           .doc =
               R"doc(`byteps`: largest partition a tensor is cut into (BytePS's `BYTEPS_PARTITION_BYTES` default, docs/env.md); `0` = one partition)doc"},
          &CollectiveGroup::partition_bytes),
      bind_param(
          {.key = "server_placement",
           .type = ParamType::choice,
           .default_value = "colocated",
           .brief = "colocated (one server per node, on its first rank) or dedicated (server "
                    "hosts of their own, on nodes after the workers')",
           .doc =
               R"doc(`byteps`: `colocated` (one server per worker node, on its first worker's host) or `dedicated` (server hosts of their own; generated platforms get one extra node per server, see Parameter servers))doc",
           .choices = {"colocated", "dedicated"}},
          &CollectiveGroup::server_placement),
      bind_param(
          {.key = "server_reduction",
           .type = ParamType::bandwidth,
           .default_value = 0,
           .brief = "server summation throughput, e.g. \"5GBps\" (0 = not modelled)",
           .doc =
               R"doc(`byteps`: server summation throughput, e.g. `"5GBps"`, in bytes of received gradient summed per second; the sums run on a CPU of the server's own (they do not slow the host's device))doc",
           .default_text = "`0` (not modelled)",
           .zero_off = true},
          &CollectiveGroup::server_reduction_Bps),
      bind_param(
          {.key = "key_hash",
           .type = ParamType::choice,
           .default_value = "djb2",
           .brief = "BYTEPS_KEY_HASH_FN of the partition keys: djb2, sdbm, naive or "
                    "round_robin (part k on server k mod S)",
           .doc =
               R"doc(`byteps`: how a partition's key (declared tensor index << 16 + partition index) picks its server, as `BYTEPS_KEY_HASH_FN`: `djb2` (BytePS's default) or `sdbm` of the key's decimal digits, `naive`, or `round_robin` (declared index + partition index, modulo the servers); see Parameter servers)doc",
           .choices = byteps_key_hashes()},
          &CollectiveGroup::key_hash),
      bind_param(
          {.key = "scheduling_credit",
           .type = ParamType::integer,
           .default_value = 0,
           .brief = "partitions whose push-pulls run at once, a window over whole push-pulls "
                    "(0 = no limit, as BytePS runs; not BYTEPS_SCHEDULING_CREDIT)",
           .doc =
               R"doc(`byteps`: a window over whole push-pulls: the partitions of tensors whose push-pulls run at once, a tensor's returned when its push-pull ends (0, no limit: every ready tensor starts, as BytePS runs by default). Not BytePS's `BYTEPS_SCHEDULING_CREDIT`, which gates only the reduce inside a node (leave this 0 for a BytePS job; see Parameter servers))doc",
           .default_text = "`0` (no limit)",
           .min = 0,
           .max = 1 << 16},
          &CollectiveGroup::scheduling_credit),
      bind_param(
          {.key = "pipeline_partitions",
           .type = ParamType::boolean,
           .default_value = true,
           .brief = "waves of partitions pipeline through the reduce inside a node, the push "
                    "and pull, and the all-gather (false: the whole tensor through each stage)",
           .doc =
               R"doc(`byteps`: `true` (BytePS: every partition goes through its own queues, so the parts of a tensor pipeline: a wave of parts is pushed once it is reduced inside the node, and gathered once pulled, while the next wave is reduced or on the network); `false`: the whole tensor is reduced inside the node before its first push and gathered after its last pull (TensorFlow's parameter servers, which sum a variable whole))doc",
           .default_text = "`true`"},
          &CollectiveGroup::pipeline_partitions)};
}

class BytePS final : public Collective {
 public:
  std::string name() const override { return "byteps"; }
  std::vector<CollectiveParam> params() const override { return byteps_params(); }

  double message_count(const CollectiveGroup& g, double bytes) const override {
    // Intra-node rings (d - 1 rounds of d messages each way), then each partition pushed and
    // pulled once per node.
    const int p = g.ranks;
    if (p <= 1) return 0;
    const int per_node = std::max(1, g.ranks_per_node);
    const int nodes = (p + per_node - 1) / per_node;
    const double bound = byteps_partition_bound(g);
    const double parts = bound > 0 ? std::max(1.0, std::ceil(bytes / bound)) : 1.0;
    const double peers = g.server_placement == "dedicated" ? nodes : nodes - 1;
    // Pipelined, a node's rings run once per wave.
    const double rings = g.pipeline_partitions != 0 && per_node > 1
                             ? wave_count(g, bytes, server_count(g, nodes))
                             : 1.0;
    return 2.0 * p * (per_node - 1) * rings + 2.0 * parts * peers;
  }
  int server_nodes(int servers, const std::string& placement) const override {
    if (placement != "dedicated") return 0;
    return servers > 0 ? servers : -1;
  }
  std::optional<OptionProblem> check(const CollectiveGroup& g) const override {
    const int per_node = std::max(1, g.ranks_per_node);
    if (g.ranks % per_node != 0)
      return OptionProblem{"ranks", fmt::format("expected a multiple of the ranks per node ({}) "
                                                "for collective \"byteps\" (every node runs "
                                                "the same number of workers), got {}",
                                                per_node, g.ranks)};
    const int nodes = g.ranks / per_node;
    if (g.server_placement == "colocated" && g.servers != 0 && g.servers != nodes)
      return OptionProblem{"servers", fmt::format("expected 0 or {} (co-located byteps runs one "
                                                  "server per worker node), got {}",
                                                  nodes, g.servers)};
    return std::nullopt;
  }

  bool per_tensor() const override { return true; }
  bool overlaps_tensors() const override { return true; }

  int extra_ranks(const CollectiveGroup& g) const override {
    return g.server_placement == "dedicated" ? layout(g, 1.0).servers : 0;
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    const Layout l = layout(g, bytes);
    ScheduleBuilder b(g.ranks + extra_ranks(g));
    if (pipelined(g, l))
      add_pipelined(b, l);
    else
      add_whole(b, l, bytes);
    return b.build();
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const Layout l = layout(g, n);
    if (pipelined(g, l)) return pipelined_s(l, c, g.server_reduction_Bps);
    // The node's ring reduce-scatter and all-gather: d - 1 rounds each of n / d.
    const AlphaBeta& in = c.intra;
    const double shard = n / l.per_node;
    const double intra = (l.per_node - 1) * (2.0 * (in.alpha_s + shard * in.beta_s_per_byte) +
                                             shard * in.gamma_s_per_byte);
    if (!l.dedicated && l.nodes < 2) return intra;
    const std::vector<double> ready(l.waves.size(), 0.0);
    return intra + pull_ends(l, c.inter, g.server_reduction_Bps, ready).back();
  }

 private:
  /// The whole tensor reduced inside each node, pushed and pulled wave by wave, then gathered.
  static void add_whole(ScheduleBuilder& b, const Layout& l, double bytes) {
    for (int i = 0; i < l.nodes; ++i) add_node_ring(b, l.members(i), bytes, true, {});
    // A node pushes once every rank has its shard of the sum (BytePS copies the shards to host
    // memory).
    LinkState links{std::vector<Ids>(l.endpoints()), std::vector<Ids>(l.endpoints())};
    for (int i = 0; i < l.nodes; ++i) {
      links.out[i] = last_messages(b, l.members(i));
      links.in[i] = links.out[i];
    }
    if (l.dedicated || l.nodes > 1) add_network(b, l, links, nullptr, nullptr);
    for (int i = 0; i < l.nodes; ++i) {
      Ids ready = links.out[i];
      append(ready, links.in[i]);
      add_node_ring(b, l.members(i), bytes, false, ready);
    }
  }

  /// Wave by wave through the stages, as BytePS runs each partition through its queues: a
  /// wave's pushes wait for its own reduce-scatter, its all-gather for its own pulls. A node's
  /// rings run in the order BytePS's NCCL loop issues them: every wave's reduce-scatter (all
  /// ready at once), then the all-gathers as their pulls end.
  static void add_pipelined(ScheduleBuilder& b, const Layout& l) {
    const int waves = static_cast<int>(l.waves.size());
    WaveIds reduced(waves, std::vector<Ids>(l.nodes)), pulled = reduced;
    for (int w = 0; w < waves; ++w)
      for (int i = 0; i < l.nodes; ++i) {
        add_node_ring(b, l.members(i), l.wave_bytes(w), true, {});
        reduced[w][i] = last_messages(b, l.members(i));
      }
    if (l.dedicated || l.nodes > 1) {
      LinkState links{std::vector<Ids>(l.endpoints()), std::vector<Ids>(l.endpoints())};
      add_network(b, l, links, &reduced, &pulled);
    }
    // A node's all-gathers follow its rings, not its root's pushes and pulls of later waves.
    std::vector<Ids> rings_done = reduced.back();
    for (int w = 0; w < waves; ++w)
      for (int i = 0; i < l.nodes; ++i) {
        Ids ready = pulled[w][i];
        append(ready, rings_done[i]);
        add_node_ring(b, l.members(i), l.wave_bytes(w), false, ready, false);
        rings_done[i] = last_messages(b, l.members(i));
      }
  }

  /// Pushes and pulls, wave by wave (see the file comment for the order); wave w's pushes from
  /// node i also wait for ready[w][i], and pulled[w][i] gets the pulls of wave w at node i.
  static void add_network(ScheduleBuilder& b, const Layout& l, LinkState& links,
                          const WaveIds* ready, WaveIds* pulled) {
    const int endpoints = static_cast<int>(links.out.size());
    const int waves = static_cast<int>(l.waves.size());
    std::vector<Ids> cur_out(endpoints), cur_in(endpoints);
    // into[w][s]: the pushes of wave w into server s; their reductions are its sums.
    std::vector<std::vector<Ids>> into(waves, std::vector<Ids>(l.servers));
    auto server_ep = [&](int s) { return l.dedicated ? l.nodes + s : s; };
    auto push = [&](int w, const LinkState& state) {
      for (int i = 0; i < l.nodes; ++i)
        for (const BytepsPart& part : l.waves[w]) {
          const int s = part.server, e = server_ep(s);
          if (e == i) continue;  // a co-located server's own node: no message
          Ids preds = state.out[i];
          append(preds, state.in[e]);
          if (w > 0) append(preds, into[w - 1][s]);  // the server has summed the last wave
          if (ready) append(preds, (*ready)[w][i]);
          const uint32_t id = b.add(l.root(i), l.server_rank(s), part.bytes, part.bytes, preds);
          b.set_server_reduce(id);
          cur_out[i].push_back(id);
          cur_in[e].push_back(id);
          into[w][s].push_back(id);
        }
    };
    auto pull = [&](int w, const LinkState& state) {
      for (const BytepsPart& part : l.waves[w]) {
        const int s = part.server, e = server_ep(s);
        for (int i = 0; i < l.nodes; ++i) {
          if (e == i) continue;
          Ids preds = state.out[e];
          append(preds, state.in[i]);
          append(preds, into[w][s]);  // the part is summed
          const uint32_t id = b.add(l.server_rank(s), l.root(i), part.bytes, 0, preds);
          b.set_from_server(id);
          cur_out[e].push_back(id);
          cur_in[i].push_back(id);
          if (pulled) {
            (*pulled)[w][i].push_back(id);
            if (e < l.nodes) (*pulled)[w][e].push_back(id);  // a co-located server's node
          }
        }
      }
    };
    if (l.dedicated) {
      // Pushes use root uplinks and server downlinks, pulls the other directions: two chains.
      LinkState pulls = links;
      for (int w = 0; w < waves; ++w) {
        push(w, links);
        links.advance(cur_out, cur_in);
        pull(w, pulls);
        pulls.advance(cur_out, cur_in);
      }
      for (int e = 0; e < endpoints; ++e) {  // the broadcast follows a node's last flows
        append(links.out[e], pulls.out[e]);
        append(links.in[e], pulls.in[e]);
      }
      return;
    }
    for (int w = 0; w < waves; ++w) {
      push(w, links);
      links.advance(cur_out, cur_in);
      pull(w, links);
      links.advance(cur_out, cur_in);
    }
  }

  /// A node's ring reduce-scatter (`reduce`) or all-gather of `bytes`: d - 1 rounds of bytes / d.
  static double ring_s(const Layout& l, const AlphaBeta& in, double bytes, bool reduce) {
    const double shard = bytes / l.per_node;
    return (l.per_node - 1) *
           (in.alpha_s + shard * (in.beta_s_per_byte + (reduce ? in.gamma_s_per_byte : 0.0)));
  }

  /// Every stage wave by wave: each wave's reduce-scatter in turn, its push and pull once that
  /// and the wave before are through the network, its all-gather once pulled and the node's
  /// rings before it are done.
  static double pipelined_s(const Layout& l, const NetworkCost& c, double server_Bps) {
    const int waves = static_cast<int>(l.waves.size());
    std::vector<double> reduced(waves);
    double t = 0;
    for (int w = 0; w < waves; ++w) reduced[w] = t += ring_s(l, c.intra, l.wave_bytes(w), true);
    const std::vector<double> pulled =
        l.dedicated || l.nodes > 1 ? pull_ends(l, c.inter, server_Bps, reduced) : reduced;
    for (int w = 0; w < waves; ++w)
      t = std::max(t, pulled[w]) + ring_s(l, c.intra, l.wave_bytes(w), false);
    return t;
  }

  /// When each wave's pulls end, its pushes starting no earlier than ready[w]: per wave a push
  /// and a pull of the same cost, the sums in between, composed in the order the schedule
  /// imposes.
  static std::vector<double> pull_ends(const Layout& l, const AlphaBeta& ab, double server_Bps,
                                       const std::vector<double>& ready) {
    // Bytes on the busiest link of a wave: a co-located server receives its part from the N-1
    // other nodes, a dedicated one from all N, while each root sends one part to each server.
    auto phase = [&](int w) {
      double busiest = 0;
      for (int i = 0; i < l.nodes; ++i) {
        double out = 0;
        for (const BytepsPart& p : l.waves[w]) out += l.dedicated || p.server != i ? p.bytes : 0;
        busiest = std::max(busiest, out);
      }
      for (const BytepsPart& p : l.waves[w])
        busiest = std::max(busiest, (l.dedicated ? l.nodes : l.nodes - 1) * p.bytes);
      return ab.alpha_s + busiest * ab.beta_s_per_byte;
    };
    const int senders = l.dedicated ? l.nodes : l.nodes - 1;
    auto sum = [&](int w) {
      double largest = 0;
      for (const BytepsPart& p : l.waves[w]) largest = std::max(largest, p.bytes);
      return server_Bps > 0 ? senders * largest / server_Bps : 0.0;
    };
    const int waves = static_cast<int>(l.waves.size());
    std::vector<double> ends(waves);
    double pushed = 0, summed = 0, pull_end = 0;  // the latest push phase's end, its sums'
    for (int w = 0; w < waves; ++w) {
      if (l.dedicated) {  // pushes and pulls use opposite link directions: two chains
        pushed = std::max({pushed, summed, ready[w]}) + phase(w);
        summed = pushed + sum(w);
        pull_end = std::max(pull_end, summed) + phase(w);
      } else {  // a phase after a push waits for its sums (a message is done once reduced)
        pull_end = std::max(pull_end, ready[w]) + (2 * phase(w) + sum(w));
      }
      ends[w] = pull_end;
    }
    return ends;
  }
};

const CollectiveRegistration byteps_registration{std::make_unique<BytePS>()};

/// djb2 (hash * 33 + c) or sdbm (hash * 65599 + c) over the key's decimal digits, as BytePS
/// hashes std::to_string(key).
uint64_t string_hash(uint64_t key, bool djb2) {
  uint64_t hash = djb2 ? 5381 : 0;
  for (const char c : std::to_string(key)) {
    const auto u = static_cast<uint64_t>(static_cast<unsigned char>(c));
    hash = djb2 ? (hash << 5) + hash + u : u + (hash << 6) + (hash << 16) - hash;
  }
  return hash;
}

}  // namespace

std::vector<std::string> byteps_key_hashes() {
  return {"djb2", "naive", "round_robin", "sdbm"};
}

uint64_t byteps_key_hash(const std::string& hash, uint64_t key) {
  if (hash == "djb2") return string_hash(key, true);
  if (hash == "sdbm") return string_hash(key, false);
  if (hash == "naive") return ((key >> 16) + key % 65536) * 9973;
  if (hash == "round_robin") return (key >> 16) + key % 65536;
  throw std::invalid_argument("unknown byteps key hash " + hash);
}

double byteps_partition_bound(const CollectiveGroup& g) {
  if (g.partition_bytes <= 0) return 0;
  const double align = 4096.0 * std::max(1, std::min(g.ranks_per_node, g.ranks));
  return std::ceil(g.partition_bytes / align - 1e-9) * align;
}

std::vector<BytepsPart> byteps_partitions(const CollectiveGroup& g, double bytes, int servers) {
  const double bound = byteps_partition_bound(g);
  const int parts = bound > 0 ? std::max(1, static_cast<int>(std::ceil(bytes / bound - 1e-9))) : 1;
  std::vector<BytepsPart> out;
  out.reserve(static_cast<size_t>(parts));
  for (int i = 0; i < parts; ++i) {
    const uint64_t key = byteps_partition_key(static_cast<uint64_t>(g.tensor_key), i);
    const double size = parts == 1 ? bytes : (i + 1 < parts ? bound : bytes - bound * (parts - 1));
    out.push_back({static_cast<int>(byteps_key_hash(g.key_hash, key) % servers), size});
  }
  return out;
}

}  // namespace sgdsim
