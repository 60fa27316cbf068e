// Ring allreduce: reduce-scatter then allgather, 2(P-1) rounds of N/P-byte messages to the
// right neighbour. With NCCL-style pipelining (chunk_bytes > 0) each rank's segment is sent as
// g messages of at most kChunksInFlight chunks, and `channels` concurrent rings each carry
// N/channels on the same links (NCCL's channels). Leaves out NCCL's per-step protocol overhead
// (the transport's alpha carries it), LL/LL128 protocols and rings ordered by topology search
// (ranks are ringed in rank order). All-gather and reduce-scatter are the two halves: p-1
// rounds of N/P-byte messages each, (p-1)(a + n/p b) [+ (p-1)/p n g for reduce-scatter]
// (Thakur, Rabenseifner & Gropp 2005, section 4; NCCL's ring AllGather / ReduceScatter).
// An MPI library's out-of-place ring allreduce first copies the send buffer into the receive
// buffer and runs the ring there (Open MPI's ompi_coll_base_allreduce_intra_ring, MPICH's
// MPIR_Allreduce_intra_ring): `copy_bandwidth` pays N / rate before the first message. The
// copy of the other operations and MPI's temporary buffers are left out.
#include <algorithm>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/pipeline.hpp"

namespace sgdsim {

namespace {

int channels_of(const CollectiveGroup& g) {
  return std::max(1, g.channels);
}

/// Rounds of the ring and how many of them (the first ones) reduce what arrives.
struct Rounds {
  int total = 0, reducing = 0;
};
Rounds rounds_of(const CollectiveGroup& g) {
  const int p = g.ranks;
  if (p <= 1) return {};
  switch (g.op) {
    case CollectiveOp::allgather:
      return {p - 1, 0};
    case CollectiveOp::reduce_scatter:
      return {p - 1, p - 1};
    case CollectiveOp::allreduce:
      break;
  }
  return {2 * (p - 1), p - 1};
}

/// Time of the copy an MPI ring allreduce makes before its first message (0: none).
double copy_s(const CollectiveGroup& g, double bytes) {
  return g.copy_Bps > 0 && g.op == CollectiveOp::allreduce && g.ranks > 1 ? bytes / g.copy_Bps
                                                                          : 0.0;
}

class Ring final : public Collective {
 public:
  std::string name() const override { return "ring"; }

  std::vector<CollectiveParam> params() const override {
    Param p{
        .key = "copy_bandwidth",
        .type = ParamType::bandwidth,
        .default_value = 0,
        .brief = "MPI's copy of the send buffer first (0 = none)",
        .doc =
            R"doc(`ring` only: an MPI library's out-of-place ring allreduce first copies the send buffer into the receive buffer (Open MPI's `ompi_coll_base_allreduce_intra_ring`, MPICH's `MPIR_Allreduce_intra_ring`); `bytes / copy_bandwidth` is paid before the first message, e.g. a host's single-core `memcpy` rate; `0`: no copy (in place, NCCL; see [Validation data sets](validation-data.md), "MPI over TCP"))doc",
        .default_text = "`0` (no copy)",
        .zero_off = true};
    p.exclusive = true;
    return {bind_param(std::move(p), &CollectiveGroup::copy_Bps)};
  }
  bool delays_start(const CollectiveGroup& g) const override { return g.copy_Bps > 0; }

  double message_count(const CollectiveGroup& g, double bytes) const override {
    const int p = g.ranks, c = channels_of(g);
    if (p <= 1) return 0;
    return 1.0 * rounds_of(g).total * p * c * pipeline_pieces(bytes / c / p, g.chunk_bytes);
  }
  bool runs_among_leaders() const override { return true; }
  std::optional<std::string> unsupported(CollectiveOp, const CollectiveGroup&) const override {
    return std::nullopt;
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    return with_copy(build(g, bytes, 0), g, bytes);
  }

  // Every rank does the same with its right neighbour, so the messages of ranks 0 to block - 1
  // are the ring's loops over those senders, rank 0's left neighbour standing in for rank P-1.
  std::optional<Schedule> block_schedule(const CollectiveGroup& g, double bytes,
                                         int block) const override {
    if (block < 1 || g.ranks % block != 0) return std::nullopt;
    return with_copy(build(g, bytes, block), g, bytes);
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& cost) const override {
    const int p = g.ranks;
    if (p < 2) return 0.0;
    const int c = channels_of(g);
    const double g_pieces = pipeline_pieces(n / c / p, g.chunk_bytes);
    // Every link carries 2(p-1) g messages in sequence, each of n/(p g) bytes over all channels;
    // the critical path stays on the slowest link class the ring uses.
    const double message = n / (p * g_pieces);
    const int d = std::max(1, std::min(g.ranks_per_node, p));
    const AlphaBeta* slow = nullptr;
    auto consider = [&](const AlphaBeta& ab) {
      if (!slow || ab.alpha_s + message * ab.beta_s_per_byte >
                       slow->alpha_s + message * slow->beta_s_per_byte)
        slow = &ab;
    };
    if (d < p) consider(cost.inter);
    if (d > 1) consider(cost.intra);
    const Rounds rounds = rounds_of(g);
    return copy_s(g, n) + 1.0 * rounds.total * g_pieces * slow->alpha_s +
           1.0 * rounds.total / p * n * slow->beta_s_per_byte +
           1.0 * rounds.reducing / p * n * slow->gamma_s_per_byte;
  }

 private:
  static Schedule with_copy(Schedule s, const CollectiveGroup& g, double bytes) {
    if (!s.steps.empty()) s.start_delay_s = copy_s(g, bytes);
    return s;
  }

  /// The schedule, or with `block` > 0 the messages of ranks 0 to block - 1 only.
  static Schedule build(const CollectiveGroup& g, double bytes, int block) {
    const int p = g.ranks, c = channels_of(g), senders = block > 0 ? block : p;
    const double segment = bytes / c / p;
    const int pieces = pipeline_pieces(segment, g.chunk_bytes);
    const Rounds rounds = rounds_of(g);
    if (c == 1 && pieces == 1) return unpipelined(p, segment, rounds, block);
    // Message (s, j) of link i -> i+1 (step s, piece j) follows the previous message on the
    // same link and piece j of step s-1, which arrived from the left neighbour.
    ScheduleBuilder b(p, block);
    const double piece = segment / pieces;
    std::vector<std::vector<uint32_t>> last(static_cast<size_t>(senders));  // per link, piece
    std::vector<std::optional<uint32_t>> prev_on_link(static_cast<size_t>(senders));
    for (auto& l : last) l.assign(static_cast<size_t>(pieces), UINT32_MAX);
    for (int s = 0; p > 1 && s < rounds.total; ++s) {
      std::vector<std::vector<uint32_t>> now = last;
      for (int j = 0; j < pieces; ++j)
        for (int i = 0; i < senders; ++i) {
          std::vector<uint32_t> preds;
          if (prev_on_link[i]) preds.push_back(*prev_on_link[i]);
          const uint32_t data = last[(i + senders - 1) % senders][j];
          if (data != UINT32_MAX) preds.push_back(data);
          now[i][j] =
              b.add(i, (i + 1) % p, piece, s < rounds.reducing ? piece : 0.0, std::move(preds));
          prev_on_link[i] = now[i][j];
        }
      last = std::move(now);
    }
    return replicate_channels(b.build(), c);
  }

  static Schedule unpipelined(int p, double chunk, Rounds rounds, int block) {
    ScheduleBuilder b(p, block);
    // A rank forwards what it received last round, after its own previous send; the reducing
    // rounds (allreduce's first p-1) reduce what arrives, the others only copy it.
    for (int r = 0; p > 1 && r < rounds.total; ++r) {
      b.next_round();
      for (int i = 0; i < (block > 0 ? block : p); ++i)
        b.add_mpi(i, (i + 1) % p, chunk, r < rounds.reducing ? chunk : 0.0);
    }
    return b.build();
  }
};

const CollectiveRegistration ring_registration{std::make_unique<Ring>()};

}  // namespace

}  // namespace sgdsim
