#include "sim/collectives/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sgdsim {

int pipeline_pieces(double bytes, double chunk_bytes) {
  if (chunk_bytes <= 0 || bytes <= 0) return 1;
  return std::max(1, static_cast<int>(std::ceil(bytes / (kChunksInFlight * chunk_bytes))));
}

PortScheduler::PortScheduler(int ranks)
    : ranks_(ranks),
      send_busy_(static_cast<size_t>(ranks)),
      recv_busy_(static_cast<size_t>(ranks)) {}

bool PortScheduler::take(std::vector<char>& busy, int slot) {
  return static_cast<size_t>(slot) < busy.size() && busy[slot];
}

uint32_t PortScheduler::add(int src, int dst, double bytes, double reduce_bytes,
                            const std::vector<uint32_t>& data_preds) {
  int slot = 0;
  for (uint32_t p : data_preds) slot = std::max(slot, items_[p].slot + 1);
  auto& sb = send_busy_[src];
  auto& rb = recv_busy_[dst];
  while (take(sb, slot) || take(rb, slot)) ++slot;
  for (auto* busy : {&sb, &rb}) {
    if (busy->size() <= static_cast<size_t>(slot)) busy->resize(slot + 1, 0);
    (*busy)[slot] = 1;
  }
  items_.push_back({src, dst, bytes, reduce_bytes, data_preds, slot});
  return static_cast<uint32_t>(items_.size() - 1);
}

Schedule PortScheduler::build() const {
  const size_t n = items_.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return items_[a].slot < items_[b].slot; });
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  ScheduleBuilder b(ranks_);
  std::vector<int64_t> last_send(static_cast<size_t>(ranks_), -1),
      last_recv(static_cast<size_t>(ranks_), -1);
  for (uint32_t i = 0; i < n; ++i) {
    const Item& it = items_[order[i]];
    std::vector<uint32_t> preds;
    for (uint32_t p : it.preds) preds.push_back(pos[p]);
    if (last_send[it.src] >= 0) preds.push_back(static_cast<uint32_t>(last_send[it.src]));
    if (last_recv[it.dst] >= 0) preds.push_back(static_cast<uint32_t>(last_recv[it.dst]));
    b.add(it.src, it.dst, it.bytes, it.reduce_bytes, std::move(preds));
    last_send[it.src] = last_recv[it.dst] = i;
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

std::vector<std::vector<uint32_t>> add_dbt_piece(PortScheduler& b, const DoubleBinaryTree& trees,
                                                 const std::vector<int>& members,
                                                 double piece_bytes,
                                                 const std::vector<std::vector<uint32_t>>& ready) {
  const size_t m = members.size();
  std::vector<std::vector<uint32_t>> done(m);
  if (m < 2) {
    if (m == 1) done[0] = ready[0];
    return done;
  }
  const double half = piece_bytes / 2;
  for (int t = 0; t < 2; ++t) {
    // Up: a member sends its partial sum once its own input and its children's have arrived.
    std::vector<std::vector<uint32_t>> in(m);
    for (size_t i = 0; i < m; ++i) in[i] = ready[i];
    for (int v : trees.bottom_up(t)) {
      const int up = trees.parent[t][v];
      if (up < 0) continue;
      in[up].push_back(b.add(members[v], members[up], half, half, in[v]));
    }
    // Down: the root holds the sum once its children's partial sums are in; each member
    // forwards the result to its children.
    std::vector<int> top_down = trees.bottom_up(t);
    std::reverse(top_down.begin(), top_down.end());
    std::vector<std::vector<uint32_t>> have(m);
    have[trees.root[t]] = in[trees.root[t]];
    for (int v : top_down)
      for (int c : trees.children[t][v])
        have[c] = {b.add(members[v], members[c], half, 0, have[v])};
    for (size_t i = 0; i < m; ++i) done[i].insert(done[i].end(), have[i].begin(), have[i].end());
  }
  return done;
}

std::vector<uint32_t> add_chain_reduce(PortScheduler& b, const std::vector<int>& members,
                                       double bytes) {
  std::vector<uint32_t> prev;
  for (size_t i = members.size(); i-- > 1;)
    prev = {b.add(members[i], members[i - 1], bytes, bytes, prev)};
  return prev;
}

void add_chain_bcast(PortScheduler& b, const std::vector<int>& members, double bytes,
                     const std::vector<uint32_t>& ready) {
  std::vector<uint32_t> prev = ready;
  for (size_t i = 0; i + 1 < members.size(); ++i)
    prev = {b.add(members[i], members[i + 1], bytes, 0, prev)};
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
    for (size_t ch = 0; ch < c; ++ch) r.steps.push_back(s.steps[i]);
  r.set_dependencies(preds);
  return r;
}

}  // namespace sgdsim
