// Two-level allreduce: a reduce inside each node onto its first rank, an allreduce among those
// leaders (inter_algorithm), then a broadcast inside each node. intra_algorithm "binomial"
// (default) runs binomial trees inside nodes, one level after the other (chunk_bytes and
// channels then apply to the leaders' algorithm only). "chain" is NCCL's multi-node tree: a
// chain through each node's ranks (NVLink/NVSwitch style), pipelined in pieces of at most
// kChunksInFlight chunks with the leaders' algorithm, so piece k crosses the network while
// piece k+1 climbs the chain; every rank sends one message and receives one at a time. "ring"
// is the two-dimensional ring (Horovod's hierarchical allreduce): a ring reduce-scatter inside
// each node, local rank j's n/d shard through inter_algorithm among the ranks j of all nodes
// (the d local ranks share the node link), a ring allgather inside each node; it needs full
// nodes and its formula takes the node link as the route's bottleneck. All-gather (full nodes,
// binomial): a binomial gather of the node's n/p blocks onto its leader, the leaders'
// all-gather of n, a binomial broadcast of n inside each node; reduce-scatter: a binomial reduce
// of n onto the leader, the leaders' reduce-scatter of n, a binomial scatter of the node's n d/p
// (the leader-based two-level scheme of MPICH's MPIR_Allgather_intra / Reduce_scatter "smp"
// variants). Leaves out multi-rail and NVLink-SHARP in-switch reduction.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/building_blocks.hpp"
#include "sim/collectives/pipeline.hpp"

namespace sgdsim {

namespace {

struct Layout {
  int p, d, nodes;
  explicit Layout(const CollectiveGroup& g)
      : p(g.ranks), d(std::max(1, std::min(g.ranks_per_node, g.ranks))), nodes((p + d - 1) / d) {}
  std::vector<int> members(int node) const {
    std::vector<int> m;
    for (int r = node * d; r < std::min(p, (node + 1) * d); ++r) m.push_back(r);
    return m;
  }
};

/// hierarchical's options: the algorithm among node leaders and the one inside a node.
std::vector<CollectiveParam> hierarchical_params() {
  CollectiveParam inter{
      {.key = "inter_algorithm",
       .type = ParamType::choice,
       .default_value = "ring",
       .brief = "algorithm among node leaders",
       .doc =
           R"doc(`hierarchical`: the algorithm among node leaders (`ring`, `recursive_halving_doubling`, `recursive_doubling`, `tree`, `double_binary_tree`))doc",
       .choices = leader_algorithm_names()},
      [](CollectiveGroup& g, const ParamValue& v) {
        g.inter_algorithm = canonical_collective_name(v.text);
      }};
  return {
      std::move(inter),
      bind_param(
          {.key = "intra_algorithm",
           .type = ParamType::choice,
           .default_value = "binomial",
           .brief = "binomial, chain (NCCL's tree inside a node) or ring (reduce-scatter / "
                    "allgather rings inside nodes; full nodes only)",
           .doc =
               R"doc(`hierarchical`: `binomial` trees inside a node, one level after the other; `chain` (NCCL's multi-node tree: a chain through the node's ranks, pipelined with the leaders' algorithm); or `ring` (reduce-scatter and allgather rings inside nodes around the leaders' algorithm on n/d per local rank; full nodes only))doc",
           .choices = intra_node_algorithms()},
          &CollectiveGroup::intra_algorithm)};
}

class Hierarchical final : public Collective {
 public:
  std::string name() const override { return "hierarchical"; }
  std::vector<CollectiveParam> params() const override { return hierarchical_params(); }

  double message_count(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks;
    if (p <= 1) return 0;
    const int per_node = std::max(1, std::min(g.ranks_per_node, p));
    const int nodes = (p + per_node - 1) / per_node;
    const Collective& inter = collective_by_name(g.inter_algorithm);
    CollectiveGroup leaders{nodes};
    if (g.intra_algorithm == "ring" || g.intra_algorithm != "chain") {
      leaders.chunk_bytes = g.chunk_bytes;
      leaders.channels = g.channels;
    }
    leaders.op = g.op;
    if (g.op != CollectiveOp::allreduce)  // one level in, the leaders' operation, one level out
      return 2.0 * (p - nodes) + inter.message_count(leaders, bytes);
    if (g.intra_algorithm == "ring")  // rings inside nodes, per_node leader allreduces of n/d
      return 2.0 * (per_node - 1) * p + per_node * inter.message_count(leaders, bytes / per_node);
    if (g.intra_algorithm != "chain")
      return 2.0 * (p - nodes) + inter.message_count(leaders, bytes);
    const double channels = std::max(1, g.channels);
    const double pieces = pipeline_pieces(bytes / channels, g.chunk_bytes);
    return channels * pieces *
           (2.0 * (p - nodes) + inter.message_count(leaders, bytes / channels / pieces));
  }
  bool uses_inter_algorithm() const override { return true; }
  std::optional<std::string> unsupported(CollectiveOp op, const CollectiveGroup& g) const override {
    if (op == CollectiveOp::allreduce) return std::nullopt;
    const std::string what = std::string("hierarchical ") + collective_op_name(op);
    if (g.intra_algorithm != "binomial") return what + " needs intra_algorithm \"binomial\"";
    if (g.ranks % std::max(1, g.ranks_per_node) != 0)
      return what + " needs full nodes (ranks a multiple of the ranks per node)";
    const Layout l(g);
    CollectiveGroup lg{l.nodes};
    if (auto why = inter(g).unsupported(op, lg)) return what + " among node leaders: " + *why;
    return std::nullopt;
  }
  bool needs_block_placement() const override { return true; }
  std::optional<OptionProblem> check(const CollectiveGroup& g) const override {
    if (g.intra_algorithm == "ring" && g.ranks % std::max(1, g.ranks_per_node) != 0)
      return OptionProblem{"intra_algorithm",
                           fmt::format("\"ring\" needs full nodes: a rank count ({}) that is a "
                                       "multiple of the ranks per node ({})",
                                       g.ranks, g.ranks_per_node)};
    return std::nullopt;
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    if (g.op != CollectiveOp::allreduce) return binomial(g, bytes);
    if (g.intra_algorithm == "chain")
      return replicate_channels(chain_channel(g, bytes), std::max(1, g.channels));
    if (g.intra_algorithm == "ring") return ring_levels(g, bytes);
    return binomial(g, bytes);
  }

  // Binomial levels inside whole nodes around a leaders' algorithm that itself rotates with
  // blocks of nodes: the first block's nodes and their leaders' messages.
  std::optional<Schedule> block_schedule(const CollectiveGroup& g, double bytes,
                                         int block) const override {
    const Layout l(g);
    if (g.intra_algorithm != "binomial" || block < 1 || l.p % l.d != 0 || block % l.d != 0 ||
        l.p % block != 0)
      return std::nullopt;
    const std::optional<Schedule> inner =
        inter(g).block_schedule(leaders(g, l), bytes, block / l.d);
    if (!inner) return std::nullopt;
    return binomial(g, bytes, &*inner, block);
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    const Layout l(g);
    if (g.op != CollectiveOp::allreduce) return two_level_op_s(g, l, n, c);
    if (g.intra_algorithm == "chain")
      return channel_schedule_time_s(chain_channel(g, n), g.channels, l.d, c);
    const AlphaBeta& in = c.intra;
    if (g.intra_algorithm == "ring") {
      // Ring reduce-scatter and allgather of n/d inside nodes; between them the d local ranks'
      // allreduces of n/d share each node link d ways.
      full_nodes(l);
      const double shard = n / l.d;
      const AlphaBeta shared{c.inter.alpha_s, l.d * c.inter.beta_s_per_byte,
                             c.inter.gamma_s_per_byte};
      return (l.d - 1) *
                 (2.0 * (in.alpha_s + shard * in.beta_s_per_byte) + shard * in.gamma_s_per_byte) +
             inter(g).formula_s(leaders(g, l), shard, NetworkCost{shared, shared});
    }
    const int levels = ceil_log2(l.d);
    return levels * (2.0 * (in.alpha_s + n * in.beta_s_per_byte) + n * in.gamma_s_per_byte) +
           inter(g).formula_s(leaders(g, l), n, NetworkCost{c.inter, c.inter});
  }

 private:
  static const Collective& inter(const CollectiveGroup& g) {
    for (const char* bad : {"hierarchical", "nccl"})
      if (g.inter_algorithm == bad)
        throw std::invalid_argument("hierarchical cannot use " + g.inter_algorithm +
                                    " among node leaders");
    return collective_by_name(g.inter_algorithm);
  }

  /// The two-level all-gather or reduce-scatter on full nodes: one binomial level sequence in
  /// (gather of n/p blocks, or reduce of n), the leaders' operation, one out (broadcast of n,
  /// or scatter of n/p blocks); a binomial gather or scatter over d = 2^k members moves
  /// (d - 1) n/p in k messages on its critical path.
  static double two_level_op_s(const CollectiveGroup& g, const Layout& l, double n,
                               const NetworkCost& c) {
    const AlphaBeta& in = c.intra;
    const int levels = ceil_log2(l.d);
    const double blocks = levels * in.alpha_s + (l.d - 1) * n / l.p * in.beta_s_per_byte;
    const double whole = levels * (in.alpha_s + n * in.beta_s_per_byte);
    const double reduce =
        g.op == CollectiveOp::reduce_scatter ? levels * n * in.gamma_s_per_byte : 0.0;
    return blocks + whole + reduce +
           inter(g).formula_s(leaders(g, l), n, NetworkCost{c.inter, c.inter});
  }

  static CollectiveGroup leaders(const CollectiveGroup& g, const Layout& l) {
    CollectiveGroup lg{l.nodes};
    lg.op = g.op;
    lg.chunk_bytes = g.chunk_bytes;
    lg.channels = g.channels;
    return lg;
  }

  static void full_nodes(const Layout& l) {
    if (l.p % l.d != 0)
      throw std::invalid_argument("hierarchical with intra_algorithm ring needs full nodes");
  }

  // Ring reduce-scatter inside every node; local rank j's shard then goes through the leaders'
  // algorithm among the ranks j of all nodes (d copies in lockstep, sharing the node links);
  // ring allgather inside every node.
  static Schedule ring_levels(const CollectiveGroup& g, double bytes) {
    const Layout l(g);
    full_nodes(l);
    const int p = l.p, d = l.d;
    const double shard = bytes / d;
    ScheduleBuilder b(p);
    auto intra_rounds = [&](bool reduce) {
      for (int r = 0; r + 1 < d; ++r) {
        b.next_round();
        for (int i = 0; i < p; ++i)
          b.add_mpi(i, i / d * d + (i % d + 1) % d, shard, reduce ? shard : 0.0);
      }
    };
    intra_rounds(true);
    std::vector<std::vector<uint32_t>> ready(static_cast<size_t>(p));  // after the reduce-scatter
    for (int r = 0; r < p; ++r)
      for (const auto& q : {b.last_send(r), b.last_recv(r)})
        if (q) ready[r].push_back(*q);
    const Schedule inner = inter(g).schedule(leaders(g, l), shard);
    const auto inner_preds = inner.predecessors();
    std::vector<std::pair<uint32_t, int>> shared;  // step, lockstep of its inner step
    for (int j = 0; j < d; ++j) {
      const uint32_t base = b.size();
      for (uint32_t s = 0; s < inner.steps.size(); ++s) {
        const CommStep& st = inner.steps[s];
        const int src = st.src * d + j, dst = st.dst * d + j;
        std::vector<uint32_t> preds;
        for (uint32_t q : inner_preds[s]) preds.push_back(base + q);
        if (inner.pred_count[s] == 0)
          for (int r : {src, dst}) preds.insert(preds.end(), ready[r].begin(), ready[r].end());
        shared.emplace_back(b.add(src, dst, st.bytes, st.reduce_bytes, std::move(preds)),
                            st.lockstep);
      }
    }
    intra_rounds(false);
    Schedule sched = b.build();
    for (const auto& [id, lockstep] : shared) sched.steps[id].lockstep = lockstep * d;
    return sched;
  }

  /// The binomial two-level schedule; with `block` > 0 the messages of ranks 0 to block - 1
  /// only, around `block_inner` (the leaders' block schedule), a receiver outside the block
  /// standing in for its image inside.
  static Schedule binomial(const CollectiveGroup& g, double bytes,
                           const Schedule* block_inner = nullptr, int block = 0) {
    const Layout l(g);
    const int p = l.p, d = l.d, nodes = block > 0 ? block / d : l.nodes;
    ScheduleBuilder b(p, block);
    const bool gather = g.op == CollectiveOp::allgather;
    const bool scatter = g.op == CollectiveOp::reduce_scatter;
    for (int k = 0; k < nodes; ++k)
      if (gather)
        add_binomial_gather(b, l.members(k), bytes / p);
      else
        add_binomial_reduce(b, l.members(k), bytes);
    // Embed the leaders' allreduce; its first steps follow each leader's intra-node reduce.
    const Schedule inner = block_inner ? *block_inner : inter(g).schedule(leaders(g, l), bytes);
    const auto inner_preds = inner.predecessors();
    const uint32_t base = b.size();
    // Where each leader stood after its intra-node reduce (before any inter-node step).
    std::vector<std::vector<uint32_t>> ready(static_cast<size_t>(p));
    for (int k = 0; k < nodes; ++k)
      for (const auto& q : {b.last_send(k * d), b.last_recv(k * d)})
        if (q) ready[k * d].push_back(*q);
    for (uint32_t s = 0; s < inner.steps.size(); ++s) {
      const CommStep& st = inner.steps[s];
      const int src = st.src * d, dst = st.dst * d;
      std::vector<uint32_t> preds;
      for (uint32_t q : inner_preds[s]) preds.push_back(base + q);
      if (inner.pred_count[s] == 0) {
        const auto& at_dst = ready[block > 0 ? dst % block : dst];
        preds.insert(preds.end(), ready[src].begin(), ready[src].end());
        preds.insert(preds.end(), at_dst.begin(), at_dst.end());
      }
      b.add(src, dst, st.bytes, st.reduce_bytes, std::move(preds));
    }
    for (int k = 0; k < nodes; ++k)
      if (scatter)
        add_binomial_scatter(b, l.members(k), bytes / p);
      else
        add_binomial_bcast(b, l.members(k), bytes);
    return b.build();
  }

  // One channel of the chain variant: per piece, a chain reduce in every node, the leaders'
  // allreduce of the piece, a chain broadcast in every node.
  static Schedule chain_channel(const CollectiveGroup& g, double bytes) {
    const Layout l(g);
    const double per_channel = bytes / std::max(1, g.channels);
    const int pieces = pipeline_pieces(per_channel, g.chunk_bytes);
    const double size = per_channel / pieces;
    const Collective& among = inter(g);
    std::vector<int> heads;
    for (int k = 0; k < l.nodes; ++k) heads.push_back(k * l.d);
    PieceGraph piece;
    std::vector<std::vector<size_t>> ready(static_cast<size_t>(l.nodes));
    for (int n = 0; n < l.nodes; ++n) ready[n] = add_chain_reduce(piece, l.members(n), size);
    std::vector<std::vector<size_t>> done =
        among.name() == "double_binary_tree"
            ? add_dbt_piece(piece, DoubleBinaryTree(l.nodes), heads, size, ready)
            : embed(piece, among.schedule(l.nodes, size), heads, ready);
    for (int n = 0; n < l.nodes; ++n) add_chain_bcast(piece, l.members(n), size, done[n]);
    return periodic_schedule(piece, l.p, pieces);
  }

  // The leaders' (unpipelined) allreduce of one piece, with its own dependencies; its first
  // messages wait for both leaders' chain reduce.
  static std::vector<std::vector<size_t>> embed(PieceGraph& piece, const Schedule& inner,
                                                const std::vector<int>& heads,
                                                const std::vector<std::vector<size_t>>& ready) {
    std::vector<std::vector<size_t>> done = ready;
    if (heads.size() < 2) return done;
    const auto preds = inner.predecessors();
    std::vector<size_t> id(inner.steps.size());
    for (uint32_t s = 0; s < inner.steps.size(); ++s) {
      const CommStep& st = inner.steps[s];
      std::vector<size_t> deps;
      for (uint32_t q : preds[s]) deps.push_back(id[q]);
      if (preds[s].empty()) {
        deps.insert(deps.end(), ready[st.src].begin(), ready[st.src].end());
        deps.insert(deps.end(), ready[st.dst].begin(), ready[st.dst].end());
      }
      id[s] = piece.add(heads[st.src], heads[st.dst], st.bytes, st.reduce_bytes, deps);
      done[st.dst].push_back(id[s]);
    }
    return done;
  }
};

}  // namespace

std::vector<std::string> intra_node_algorithms() {
  return {"binomial", "chain", "ring"};
}

namespace {
const CollectiveRegistration hierarchical_registration{std::make_unique<Hierarchical>()};

}  // namespace

}  // namespace sgdsim
