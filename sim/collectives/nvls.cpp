// "nvls": NCCL's NVLS allreduce on one node of GPUs under an NVSwitch with NVLink SHARP
// (third-generation NVSwitch: H100, H200; NCCL 2.17 and later, NCCL_ALGO=NVLS).
// Models: the switch reduces. Each GPU asks the switch for its 1/p share of the sum
// (multimem.ld_reduce: the switch reads that share from every GPU, itself included, and
// returns the sum) and stores the result back through the switch, which multicasts it to
// every GPU (multimem.st). So each GPU's NVLink carries n + n/p each way (NCCL's search gives
// an NVLS channel 1/(p+1) of the GPU's NVLink bandwidth for the same reason, src/graph/
// search.cc ncclTopoSearchTryNvls), at nvls_efficiency of the link's rate (NCCL's
// nvlsEfficiency, src/graph/tuning.cc: 0.85 Hopper, 0.74 Blackwell). NCCL's kernel (src/device/
// all_reduce.h, the oneNode branch) runs three warp groups as a pipeline over loops of
// nvls_channels x p chunks: scatter (input to the NVLS buffer), reduce-and-multicast, gather
// (NVLS buffer to output); the chunk shrinks for smaller messages (src/enqueue.cc,
// calcCollChunking: 128 KiB, then 64, 32 and 16 KiB below 64, 8 and 2 loops). The time is
// NCCL's NVLS latency, the data at that rate, and the pipeline's fill: two more loops (the
// scatter of the first and the gather of the last), each at the switch stage's pace.
// As messages: every GPU sends every other GPU (n + n/p) / (p - 1) bytes divided by the
// efficiency, all at once (on a node whose GPUs each have one link to the switch, every link
// then carries p - 1 of them each way and they end together, at the formula's time); the
// latency and the fill are the schedule's start delay.
// Leaves out: NVLS across nodes (NVLSTree, CollNet/SHARP), allgather and reduce-scatter, the
// user-buffer registration path, and the copies' own speed (taken as the switch stage's).
#include <fmt/format.h>

#include <algorithm>

#include "sim/collectives/collective.hpp"

namespace sgdsim {
namespace {

/// nvls_efficiency: the fraction of the NVLink rate NVLS reaches.
double efficiency(const CollectiveGroup& g) {
  return g.params.number("nvls_efficiency");
}

/// Bytes each GPU's link carries each way, divided by the efficiency: n (1 + 1/p) / eff.
double link_bytes(const CollectiveGroup& g, double bytes) {
  return bytes * (1.0 + 1.0 / g.ranks) / efficiency(g);
}

/// NCCL's NVLS chunk for a message of `bytes` (calcCollChunking) and the bytes of one loop
/// (channels x heads x chunk, a head per GPU on one node).
double loop_bytes(const CollectiveGroup& g, double bytes) {
  const double ops = g.params.number("nvls_channels") * g.ranks;
  double chunk = g.params.number("nvls_chunk_bytes");
  if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return ops * chunk;
}

/// NCCL's latency plus the pipeline's fill (two loops, or the whole message if smaller) at
/// the link's inverse bandwidth `beta`.
double delay_s(const CollectiveGroup& g, double bytes, double beta_s_per_byte) {
  const double fill = 2 * link_bytes(g, std::min(bytes, loop_bytes(g, bytes)));
  return g.params.number("nvls_latency") + fill * beta_s_per_byte;
}

class Nvls final : public Collective {
 public:
  std::string name() const override { return "nvls"; }
  int oldest_nccl_minor() const override { return 17; }  // NCCL 2.17's NVLS

  std::vector<CollectiveParam> params() const override {
    return {
        {{.key = "nvls_efficiency",
          .type = ParamType::number,
          .default_value = 0.85,
          .brief = "fraction of the NVLink rate the switch's multimem "
                   "operations reach",
          .doc = "`nvls`, and `nccl_tuner` where it runs NVLS: fraction of each GPU's NVLink "
                 "rate that NVLS's multimem reduce and multicast reach (NCCL's nvlsEfficiency, "
                 "src/graph/tuning.cc: 0.85 on Hopper, 0.74 on Blackwell)",
          .min = 0,
          .min_exclusive = true,
          .max = 1,
          .exclusive = true}},
        {{.key = "nvls_channels",
          .type = ParamType::integer,
          .default_value = 16,
          .brief = "NCCL's NVLS channels (NCCL_NVLS_NCHANNELS)",
          .doc = "`nvls`, and `nccl_tuner` where it runs NVLS: channels NCCL runs NVLS on "
                 "(NCCL_NVLS_NCHANNELS, 16 in NCCL 2.17-2.20, src/transport/nvls.cc); with the "
                 "GPUs they set the loop NCCL's chunk size is chosen for",
          .min = 1,
          .max = 64,
          .exclusive = true}},
        {{.key = "nvls_chunk_bytes",
          .type = ParamType::size,
          .default_value = 131072,
          .brief = "NCCL's largest NVLS chunk",
          .doc = "`nvls`, and `nccl_tuner` where it runs NVLS: NCCL's largest NVLS chunk "
                 "(131072 bytes, src/enqueue.cc calcCollChunking; 64, 32 and 16 KiB below 64, 8 "
                 "and 2 loops)",
          .default_text = "`131072` (128 KiB)",
          .min = 16384,
          .exclusive = true}},
        {{.key = "nvls_latency",
          .type = ParamType::time,
          .default_value = "23us",
          .brief = "NCCL's latency of an NVLS allreduce on one node",
          .doc = "`nvls`, and `nccl_tuner` where it runs NVLS: NCCL's latency of an NVLS "
                 "allreduce on one node (23 us in NCCL 2.18-2.20, 25 us from 2.27; "
                 "src/graph/tuning.cc), paid once before the messages",
          .exclusive = true}}};
  }

  std::optional<OptionProblem> check(const CollectiveGroup& g) const override {
    if (g.ranks > 1 && g.ranks_per_node < g.ranks)
      return OptionProblem{"ranks_per_node",
                           fmt::format("nvls runs on one node (NVLS across nodes is not "
                                       "modelled); expected {} ranks per node, got {}",
                                       g.ranks, g.ranks_per_node)};
    return std::nullopt;
  }

  bool delays_start(const CollectiveGroup& /*g*/) const override { return true; }
  /// The fill is reckoned on the route's bandwidth.
  bool flow_needs_route_costs(const CollectiveGroup& /*g*/) const override { return true; }

  double message_count(const CollectiveGroup& g, double /*bytes*/) const override {
    return g.ranks < 2 ? 0.0 : static_cast<double>(g.ranks) * (g.ranks - 1);
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    Schedule s;
    s.ranks = g.ranks;
    if (g.ranks < 2) return s;
    const double each = link_bytes(g, bytes) / (g.ranks - 1);
    for (int src = 0; src < g.ranks; ++src)
      for (int dst = 0; dst < g.ranks; ++dst)
        if (src != dst) s.steps.push_back({.src = src, .dst = dst, .bytes = each});
    s.set_dependencies(std::vector<std::vector<uint32_t>>(s.steps.size()));
    const double beta = g.tuning_cost ? g.tuning_cost->intra.beta_s_per_byte : 0.0;
    s.start_delay_s = delay_s(g, bytes, beta);
    return s;
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& c) const override {
    if (g.ranks < 2) return 0.0;
    const AlphaBeta& ab = c.intra;
    return delay_s(g, n, ab.beta_s_per_byte) + ab.alpha_s + link_bytes(g, n) * ab.beta_s_per_byte;
  }
};

const CollectiveRegistration nvls_registration{std::make_unique<Nvls>()};

}  // namespace
}  // namespace sgdsim
