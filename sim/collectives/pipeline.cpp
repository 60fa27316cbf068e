#include "sim/collectives/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sgdsim {

int pipeline_pieces(double bytes, double chunk_bytes) {
  if (chunk_bytes <= 0 || bytes <= 0) return 1;
  return std::max(1, static_cast<int>(std::ceil(bytes / (kChunksInFlight * chunk_bytes))));
}

size_t PieceGraph::add(int src, int dst, double bytes, double reduce_bytes,
                       std::vector<size_t> preds) {
  edges_.push_back({src, dst, bytes, reduce_bytes, std::move(preds)});
  return edges_.size() - 1;
}

namespace {

// König edge colouring of the bipartite multigraph (senders, receivers) with `colours` colours
// by alternating-path recolouring.
std::vector<int> colour_edges(const std::vector<PieceEdge>& edges, int ranks, int colours) {
  std::vector<int> colour(edges.size(), -1);
  std::vector<std::vector<int64_t>> at_src(static_cast<size_t>(ranks),
                                           std::vector<int64_t>(colours, -1)),
      at_dst = at_src;
  auto free_at = [&](const std::vector<int64_t>& slots) {
    return static_cast<int>(std::find(slots.begin(), slots.end(), -1) - slots.begin());
  };
  for (size_t e = 0; e < edges.size(); ++e) {
    const int a = free_at(at_src[edges[e].src]), b = free_at(at_dst[edges[e].dst]);
    if (at_dst[edges[e].dst][a] >= 0) {
      // Swap a and b along the path from the receiver that alternates a (into receivers) and
      // b (out of senders); it cannot reach this edge's sender, so a becomes free here.
      std::vector<size_t> path;
      int v = edges[e].dst;
      for (int want = a;;) {
        const int64_t f = at_dst[v][want];
        if (f < 0) break;
        path.push_back(static_cast<size_t>(f));
        const int64_t g = at_src[edges[f].src][want == a ? b : a];
        if (g < 0) break;
        path.push_back(static_cast<size_t>(g));
        v = edges[g].dst;
      }
      for (size_t f : path) at_src[edges[f].src][colour[f]] = at_dst[edges[f].dst][colour[f]] = -1;
      for (size_t f : path) {
        colour[f] = colour[f] == a ? b : a;
        at_src[edges[f].src][colour[f]] = at_dst[edges[f].dst][colour[f]] = static_cast<int64_t>(f);
      }
    }
    colour[e] = a;
    at_src[edges[e].src][a] = at_dst[edges[e].dst][a] = static_cast<int64_t>(e);
  }
  return colour;
}

}  // namespace

Schedule periodic_schedule(const PieceGraph& piece, int ranks, int pieces) {
  const std::vector<PieceEdge>& edges = piece.edges();
  ScheduleBuilder b(ranks);
  if (edges.empty()) return b.build();
  std::vector<int> sends(static_cast<size_t>(ranks), 0), recvs(static_cast<size_t>(ranks), 0);
  for (const auto& e : edges) ++sends[e.src], ++recvs[e.dst];
  const int colours = std::max(*std::max_element(sends.begin(), sends.end()),
                               *std::max_element(recvs.begin(), recvs.end()));
  const std::vector<int> colour = colour_edges(edges, ranks, colours);
  std::vector<int64_t> lag(edges.size(), 0);
  for (size_t e = 0; e < edges.size(); ++e)
    for (size_t p : edges[e].preds)
      lag[e] = std::max(lag[e], lag[p] + (colour[p] >= colour[e] ? 1 : 0));
  // Steps in slot order; slot = colours (k + lag_e) + colour_e is unique per port.
  const size_t n = edges.size() * static_cast<size_t>(pieces);
  std::vector<std::pair<int64_t, size_t>> order(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t e = i % edges.size(), k = i / edges.size();
    order[i] = {colours * (static_cast<int64_t>(k) + lag[e]) + colour[e], i};
  }
  std::sort(order.begin(), order.end());
  std::vector<uint32_t> id(n);
  std::vector<int64_t> last_send(static_cast<size_t>(ranks), -1),
      last_recv(static_cast<size_t>(ranks), -1);
  for (const auto& [slot, i] : order) {
    const size_t e = i % edges.size(), k = i / edges.size();
    const PieceEdge& pe = edges[e];
    std::vector<uint32_t> preds;
    for (size_t p : pe.preds) preds.push_back(id[k * edges.size() + p]);
    if (last_send[pe.src] >= 0) preds.push_back(static_cast<uint32_t>(last_send[pe.src]));
    if (last_recv[pe.dst] >= 0) preds.push_back(static_cast<uint32_t>(last_recv[pe.dst]));
    id[i] = b.add(pe.src, pe.dst, pe.bytes, pe.reduce_bytes, std::move(preds));
    last_send[pe.src] = last_recv[pe.dst] = id[i];
  }
  return b.build();
}

namespace {

// ncclGetBtree (NCCL 2.4, src/graph/trees.cc): parent and children of `rank` among `n`.
void nccl_btree(int n, int rank, int& up, int& down0, int& down1) {
  int bit = 1;
  for (; bit < n; bit <<= 1)
    if (bit & rank) break;
  if (rank == 0) {
    up = down0 = -1;
    down1 = n > 1 ? bit >> 1 : -1;
    return;
  }
  up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  int lowbit = bit >> 1;
  down0 = lowbit == 0 ? -1 : rank - lowbit;
  down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= n) {  // NCCL's loop, kept as written: the first pass keeps lowbit
    down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
}

}  // namespace

DoubleBinaryTree::DoubleBinaryTree(int m) {
  for (int t = 0; t < 2; ++t) {
    parent[t].assign(static_cast<size_t>(m), -1);
    children[t].assign(static_cast<size_t>(m), {});
  }
  // Tree 1 relabels tree 0: mirror for even m, shift by one for odd m (ncclGetDtree).
  auto to1 = [m](int r) { return m % 2 == 1 ? (r + 1) % m : m - 1 - r; };
  for (int r = 0; r < m; ++r) {
    int up, d0, d1;
    nccl_btree(m, r, up, d0, d1);
    for (int t = 0; t < 2; ++t) {
      auto map = [&](int x) { return x < 0 ? -1 : (t == 0 ? x : to1(x)); };
      const int me = map(r);
      parent[t][me] = map(up);
      for (int d : {d0, d1})
        if (d >= 0) children[t][me].push_back(map(d));
    }
  }
  root = {0, m > 0 ? to1(0) : 0};
}

std::vector<int> DoubleBinaryTree::bottom_up(int t) const {
  std::vector<int> order{root[t]};  // breadth-first from the root, then reversed
  for (size_t i = 0; i < order.size(); ++i)
    for (int c : children[t][order[i]]) order.push_back(c);
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<std::vector<size_t>> add_dbt_piece(PieceGraph& g, const DoubleBinaryTree& trees,
                                               const std::vector<int>& members, double piece_bytes,
                                               const std::vector<std::vector<size_t>>& ready) {
  const size_t m = members.size();
  std::vector<std::vector<size_t>> done = ready;
  if (m < 2) return done;
  const double half = piece_bytes / 2;
  for (int t = 0; t < 2; ++t) {
    // Up: a member sends its partial sum once its own input and its children's have arrived.
    std::vector<std::vector<size_t>> in = ready;
    for (int v : trees.bottom_up(t)) {
      const int parent = trees.parent[t][v];
      if (parent >= 0) in[parent].push_back(g.add(members[v], members[parent], half, half, in[v]));
    }
    // Down: the root holds the sum once its children's partial sums are in; each member
    // forwards the result to its children.
    std::vector<int> top_down = trees.bottom_up(t);
    std::reverse(top_down.begin(), top_down.end());
    std::vector<std::vector<size_t>> have(m);
    have[trees.root[t]] = in[trees.root[t]];
    for (int v : top_down)
      for (int c : trees.children[t][v])
        have[c] = {g.add(members[v], members[c], half, 0, have[v])};
    for (size_t i = 0; i < m; ++i) done[i].insert(done[i].end(), have[i].begin(), have[i].end());
  }
  return done;
}

std::vector<size_t> add_chain_reduce(PieceGraph& g, const std::vector<int>& members, double bytes) {
  std::vector<size_t> prev;
  for (size_t i = members.size(); i-- > 1;)
    prev = {g.add(members[i], members[i - 1], bytes, bytes, prev)};
  return prev;
}

void add_chain_bcast(PieceGraph& g, const std::vector<int>& members, double bytes,
                     const std::vector<size_t>& ready) {
  std::vector<size_t> prev = ready;
  for (size_t i = 0; i + 1 < members.size(); ++i)
    prev = {g.add(members[i], members[i + 1], bytes, 0, prev)};
}

double channel_schedule_time_s(const Schedule& s, int channels, int ranks_per_node,
                               const NetworkCost& cost) {
  const int d = std::max(1, ranks_per_node);
  const double c = std::max(1, channels);
  return schedule_time_s(s, [&](const CommStep& st) {
    const AlphaBeta& ab = st.src / d == st.dst / d ? cost.intra : cost.inter;
    return ab.alpha_s + c * (st.bytes * ab.beta_s_per_byte + st.reduce_bytes * ab.gamma_s_per_byte);
  });
}

Schedule replicate_channels(const Schedule& s, int channels) {
  if (channels <= 1) return s;
  const size_t n = s.steps.size(), c = static_cast<size_t>(channels);
  Schedule r;
  r.ranks = s.ranks;
  r.steps.reserve(n * c);
  std::vector<std::vector<uint32_t>> preds(n * c);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t k = s.succ_offsets[i]; k < s.succ_offsets[i + 1]; ++k)
      for (size_t ch = 0; ch < c; ++ch)
        preds[s.succ[k] * c + ch].push_back(static_cast<uint32_t>(i * c + ch));
  for (size_t i = 0; i < n; ++i)
    for (size_t ch = 0; ch < c; ++ch) {
      r.steps.push_back(s.steps[i]);
      r.steps.back().lockstep = s.steps[i].lockstep * channels;
    }
  r.set_dependencies(preds);
  return r;
}

}  // namespace sgdsim
