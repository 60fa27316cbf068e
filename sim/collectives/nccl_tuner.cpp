// "nccl_tuner": an allreduce timed the way NCCL's tuner models it (src/graph/tuning.cc, Simple
// protocol): a latency, paid once, plus the data movement. The latency is NCCL's base latency
// (CollectiveGroup::launch_latency_s) plus its per-step hardware latency (step_latency_intra_s
// inside a node, step_latency_inter_s between nodes) along the cheaper of NCCL's two algorithms:
//   ring: 2(p-1) steps, of which 2N cross nodes (N nodes; none on one node);
//   tree: NCCL's chain through a node's d ranks and double binary tree across nodes, up and
//         down: 2((d-1) intra + floor(log2 N) inter) steps.
// Device memory: an out-of-place allreduce reads its input and writes its output once, 2 x bytes
// at memory_Bps (0 = not modelled), paid with the latency: NCCL's bus bandwidth grows with the
// ranks on one node (A100 NVSwitch: 206, 225, 231 GB/s at 2, 4, 8 GPUs), as a link term 2(p-1)/p
// plus a term that does not depend on p predicts, and that term matches the GPU's memory
// bandwidth (1,555 GB/s on the A100 40 GB).
// The latency is the schedule's start_delay_s; the data then moves as the messages of the
// algorithm NCCL's tuner picks (nccl_tuner_choice below, NCCL 2.8.4 src/graph/tuning.cc, on 2+
// nodes): the ring's (chunk_bytes and channels pipeline them), or the tree's volumes
// (tree_schedule: a chain in each node, two binary trees among the nodes, every link busy for
// its volume). Per NIC the ring moves 2 (p - 1) / p x bytes, the tree bytes on two nodes and up
// to 2 x bytes on more: NCCL's search (src/graph/search.cc, "increase speedIntra for trees (2
// nodes)") gives the tree on two nodes an intra-node speed up to twice the network's
// (tuner_intra_channel_Bps), which is why NCCL picks the tree there for large messages and the
// ring from three nodes on. Why a delay rather than link latencies: NCCL pipelines its
// steps, so a step's latency is paid along the data's path, not once per message and link
// (the fitted per-message alpha of `ring` grows with 2(p-1), which nccl-tests logs refute).
// Tree with the LL protocol (on when tree_ll_level_Bps > 0, as calibrate nccl-tests sets it):
// where NCCL's own tuner (nccl_tuner_choice, NCCL 2.8's published model) picks tree/LL on two
// or more nodes, the latency is instead tree_ll_latency_s + 2 (D - 1) x 5 us + (D + s - 1) / s
// x bytes / tree_ll_level_Bps, D = floor(log2 nodes) inter-node levels, s = the LL steps of a
// channel. Why per level: an LL step carries 32 KiB of data per channel
// (NCCL_LL_LINES_PER_THREAD 8 x 512 threads x 8 bytes), so up to channels x 32 KiB the message
// is one step, and each level forwards it whole through the network proxy before the next
// level starts (no pipelining across levels; s steps pipeline with each other). 5 us is NCCL's
// hardware latency of a network tree/LL step (tuning.cc, hwLat), paid up and down per extra level.
// NCCL picks by its model, which can be far off: this is what makes measured times jump where
// the tuner still picks tree/LL (128 KiB on 8 and 16 A100 nodes) and fall back once it switches.
// Staged network path (on when staged_host_Bps > 0, as calibrate nccl-tests sets it for
// --technology tcp; one GPU per node, where NCCL runs its ring): without GPUDirect RDMA the
// kernel writes each step into host memory and reads it back over PCIe, and the network proxy
// sends it from there. The ring then runs as NCCL's kernel does (staged_ring_s): per channel,
// loops of 2p - 1 primitives on chunks of 4 steps, each primitive in slices of 2 steps (NCCL
// 2.4.8 - 2.8 src/collectives/device/all_reduce.h and primitives.h; steps of NCCL_BUFFSIZE /
// NCCL_STEPS), every slice a GPU operation at staged_host_Bps that waits for the previous
// rank's slice to cross the network. Below one loop (channels x ranks x chunk bytes) the chunk
// shrinks to bytes / (channels x ranks), the host side cannot overlap the network, and the
// time is their sum; from two slices per chunk on, the network of one slice overlaps the host
// side of the next.
// LL and LL128 (protocols "auto", the default): where NCCL's tuner picks ring/LL or ring/LL128
// for an allreduce whose ranks share one node (its model with the intra-node rows of hwLat,
// NVLink or PCI; LL128 only over NVLink, as NCCL enables it), or LL (ring or tree) across nodes
// outside the calibrated tree/LL model, the latency is NCCL's own for that algorithm and
// protocol (baseLat + its steps' hwLat) instead of the Simple model's launch latency, and the
// data term of the Simple model's messages (their links' alphas excluded) is multiplied by
// NCCL's ratio of Simple's bus bandwidth to the protocol's (ring LL 4; ring LL128 1 / 0.92, up
// to 16.7 GB/s per channel; tree LL 3.8; NCCL's llMaxBw cap on LL does not bind under its 235 GB/s
// Ampere cap on the bus). Why: NCCL picks these for small
// messages, where their latency (3.6 us + 0.47 us per step over NVLink) is far below Simple's;
// a Simple latency fitted on large messages put 1-64 KiB on one node 2-4 x too slow. LL128
// across nodes is left to the Simple model: NCCL 2.8's model picks it from 1 MB on multi-node
// A100 graphs, where the shipped InfiniBand logs follow the Simple model (tried with LL128's
// ratio: experiments/validation/nccl-tests.sh's medians at >= 1 MB went from 3.7-8.8 % to
// 9.6-32.4 %).
// Allgather and reduce-scatter (CollectiveGroup::op; bytes is the gathered or the reduced
// buffer, as nccl-tests' size): NCCL runs them on its ring alone, so they move as the ring's
// messages for that operation, after NCCL's latency of p - 1 steps, of which n - 1 cross nodes
// (tuning.cc's nsteps and nInterSteps), with the same protocol choice (LL inside one node at a
// third of Simple's bandwidth, not a quarter; LL128 capped at 18.3 and 15.2 GB/s per channel)
// and a memory term of the 1/p share and the whole buffer, read and written once.
// Channels (channel_launch > 0, one node): NCCL runs an operation on fewer channels (thread
// blocks) the smaller it is (size_channels), and each costs channel_launch per call, which
// NCCL's tuner does not count: LL and LL128 pay it for their channels on top of NCCL's latency;
// Simple's launch latency, fitted on large messages, holds it for all of the communicator's
// channels and pays less for fewer. Why: on the shipped one-node A100 logs the time of the
// sizes where NCCL's tuner picks LL rises with the channels its rule gives them and stops where
// they reach the communicator's (docs/calibration.md).
// NVLS (nvls_link_Bps > 0: a node preset whose NVSwitch has NVLink SHARP): an allreduce on one
// node that NCCL 2.17 and later run as NVLS where their model puts it below the ring's best
// protocol (nvls_picked) runs as the `nvls` collective (sim/collectives/nvls.cpp), whose
// options nccl_tuner declares too; no memory term (its copies are stages of its pipeline).
// Leaves out: LL128 across nodes, the tree's pipeline fill and its rotation of chain positions
// over channels (the busiest rank carries 2 x bytes), the tree on one node (its data stays on
// the ring), CollNet, NVLS across nodes (NVLSTree), and the channel cost across nodes.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "sim/collectives/nccl_staged_ring.hpp"
#include "sim/collectives/nccl_tuner_params.hpp"
#include "sim/collectives/pipeline.hpp"

namespace sgdsim {

namespace {

int floor_log2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

int ranks_per_node(const CollectiveGroup& g) {
  return std::max(1, std::min(g.ranks_per_node, g.ranks));
}
int nodes(const CollectiveGroup& g) {
  const int d = ranks_per_node(g);
  return (g.ranks + d - 1) / d;
}

// NCCL 2.8 src/graph/tuning.cc, indexed [protocol] = LL, LL128, Simple (microseconds).
constexpr std::array<double, 3> kTreeBaseLat{4.4, 4.4, 0.0}, kRingBaseLat{3.6, 10.0, 8.4};
constexpr std::array<double, 3> kTreeNvlLat{0.52, 1.2, 28.0}, kRingNvlLat{0.47, 1.9, 3.4};
constexpr std::array<double, 3> kTreeNetLat{5.0, 8.5, 50.0}, kRingNetLat{2.7, 4.0, 9.6};
constexpr std::array<double, 3> kTreePciLat{1.0, 1.9, 28.0}, kRingPciLat{1.0, 2.5, 5.7};
constexpr double kLlIntraFactor = 1.8;               // NCCL: LL intra latency x1.8 across nodes
constexpr double kLl128MaxBwPerChannel_GBps = 16.7;  // ll128MaxBwPerCh, allreduce
// ll128MaxBwPerCh of allgather and reduce-scatter (NCCL 2.8.4; GB/s per channel).
constexpr double kLl128AllGatherMaxBwPerChannel_GBps = 18.3;
constexpr double kLl128ReduceScatterMaxBwPerChannel_GBps = 15.2;
constexpr double kComputeCap80MaxBw_GBps = 235.0;  // Ampere's busBw cap
// Data in one LL step of a channel: NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512
// lines of 16 bytes, half of each a flag (src/include/devcomm.h).
constexpr double kLlStepBytes = 8 * 512 * 8;
// Per-thread work before NCCL adds a channel (src/include/comm.h NCCL_*_THREAD_THRESHOLD, the
// ring's LL one times the ranks in src/graph/tuning.cc) and threads per channel (devcomm.h
// NCCL_*_MAX_NTHREADS), [protocol] = LL, LL128, Simple; the same from 2.8 to 2.12.
constexpr std::array<double, 3> kThreadThreshold{8, 8, 64};
constexpr std::array<double, 3> kThreadsPerChannel{512, 640, 512};
constexpr double kTreeCorrection[3][22] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}};

/// The steps of NCCL's ring for `op` over `ranks` ranks: 2 (ranks - 1) for an allreduce, ranks - 1
/// for an allgather or a reduce-scatter.
int ring_steps(CollectiveOp op, int ranks) {
  return op == CollectiveOp::allreduce ? 2 * (ranks - 1) : ranks - 1;
}

/// Of those, the steps NCCL's tuner counts as crossing the network on `n` nodes: 2n for an
/// allreduce (NCCL 2.12 to 2.24; 2.8 to 2.11 and 2.25 on count 2(n - 1)), n - 1 for an allgather
/// or a reduce-scatter (every version from 2.8).
int ring_inter_steps(CollectiveOp op, int n) {
  if (n < 2) return 0;
  return op == CollectiveOp::allreduce ? 2 * n : n - 1;
}

/// NCCL's latency of one operation `op` (us; the tree for allreduces only): base plus its
/// steps' hardware latencies, inside a node on NCCL's NVLink rows of hwLat (else its PCI rows).
double tuner_latency_us(bool tree, int p, int ranks, int per_node, int n, bool nvlink = true,
                        CollectiveOp op = CollectiveOp::allreduce) {
  double intra =
      nvlink ? (tree ? kTreeNvlLat : kRingNvlLat)[p] : (tree ? kTreePciLat : kRingPciLat)[p];
  if (p == 0 && n > 1) intra *= kLlIntraFactor;
  const double inter = n > 1 ? (tree ? kTreeNetLat : kRingNetLat)[p] : intra;
  if (tree) return kTreeBaseLat[p] + 2 * ((per_node - 1) * intra + floor_log2(n) * inter);
  const int steps = ring_steps(op, ranks), inter_steps = std::min(steps, ring_inter_steps(op, n));
  return kRingBaseLat[p] + (steps - inter_steps) * intra + inter_steps * inter;
}

/// NCCL's bus bandwidth (GB/s) of an algorithm and protocol for `op`, refined as tuning.cc
/// does (the tree for allreduces only).
double tuner_bus_GBps(bool tree, int p, int n, int channels, double channel_GBps, double intra_GBps,
                      CollectiveOp op = CollectiveOp::allreduce) {
  // On two nodes the tree runs at its graph's speedIntra (tuning.cc: nNodes <= 2 ? speedIntra
  // : speedInter), which NCCL's search raises while it is below twice speedInter (search.cc,
  // "increase speedIntra for trees (2 nodes)"): the tree's network then carries half the
  // ring's volume, so only the path inside the node limits it.
  if (tree && n == 2 && intra_GBps > channel_GBps)
    channel_GBps = std::min(intra_GBps, 2 * channel_GBps);
  double bus = std::min(channels * channel_GBps, kComputeCap80MaxBw_GBps);
  if (!tree) {
    // LL: a quarter of Simple's, a third for an allgather or reduce-scatter inside one node.
    if (p == 0) bus *= n > 1 || op == CollectiveOp::allreduce ? 0.25 : 1.0 / 3.0;
    const double ll128_cap_GBps =
        op == CollectiveOp::allgather        ? kLl128AllGatherMaxBwPerChannel_GBps
        : op == CollectiveOp::reduce_scatter ? kLl128ReduceScatterMaxBwPerChannel_GBps
                                             : kLl128MaxBwPerChannel_GBps;
    if (p == 1) bus = std::min(bus * 0.92, ll128_cap_GBps * channels);
    return bus;
  }
  const double max_tree = n > 2 ? (p == 1 ? 105.0 : 80.0) : (p == 1 ? 130.0 : 110.0);
  bus = std::min(bus * 0.9, max_tree);
  if (p == 0) bus /= 3.8;
  if (p == 1)
    bus = std::min(bus * (n == 1 ? 7.0 / 9.0 : 0.915),
                   kLl128MaxBwPerChannel_GBps * channels * 7.0 / 9.0);
  return bus;
}

/// NCCL's algorithm bandwidth of its ring for `op`: the bus bandwidth x ranks / steps.
double ring_algbw_ratio(CollectiveOp op, int ranks) {
  return static_cast<double>(ranks) / ring_steps(op, ranks);
}

/// NCCL's predicted time (us) of one (algorithm, protocol) for the group's operation.
double tuner_time_us(const CollectiveGroup& g, double bytes, bool tree, int p) {
  const int per_node = ranks_per_node(g), n = nodes(g);
  double algbw = tuner_bus_GBps(tree, p, n, g.tuner_channels, g.tuner_channel_Bps * 1e-9,
                                g.tuner_intra_channel_Bps * 1e-9, g.op) *
                 (tree ? 0.5 : ring_algbw_ratio(g.op, g.ranks));
  double lat = tuner_latency_us(tree, p, g.ranks, per_node, n, true, g.op);
  const int log_size = floor_log2(
      static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(bytes) >> 6, 1u << 30)));
  if (tree && log_size < 22) algbw *= kTreeCorrection[p][log_size];
  if (!tree && p == 2 && n > 1 && g.op == CollectiveOp::allreduce &&
      bytes >= g.ranks / 16.0 * 65536)
    lat *= 1.9;  // NCCL's "plateau effect of ring", allreduce only
  return lat + bytes / (1000 * algbw);
}

/// The channels NCCL runs the group's ring with protocol p on for a message of `bytes`
/// (getAlgoInfo, src/enqueue.cc): from the communicator's, twice the graph's (connect.cc
/// duplicates the rings), one fewer while the message is below channels x threads x threshold.
int size_channels(const CollectiveGroup& g, double bytes, int p) {
  const double per_channel = kThreadsPerChannel[p] * kThreadThreshold[p] * (p == 0 ? g.ranks : 1);
  int channels = 2 * g.tuner_channels;
  while (channels > 1 && bytes < channels * per_channel) --channels;
  return channels;
}

/// What the channels of a one-node operation cost beyond those Simple's launch latency holds
/// (all of the communicator's): channel_launch x (channels for this size - all of them) for
/// Simple, channel_launch x channels for LL and LL128 (whose latency is NCCL's own); 0 across
/// nodes or without channel_launch.
double channel_cost_s(const CollectiveGroup& g, double bytes, int p) {
  if (g.channel_launch_s <= 0 || nodes(g) != 1 || g.ranks < 2) return 0.0;
  const int used = size_channels(g, bytes, p);
  return g.channel_launch_s * (p == 2 ? used - 2 * g.tuner_channels : used);
}

/// An (algorithm, protocol) NCCL's tuner picks other than Simple: LL (p 0) or LL128 (p 1).
struct ProtocolPick {
  bool tree = false;  ///< NCCL's tree (else its ring)
  int p = 0;          ///< 0 LL, 1 LL128
};

/// NCCL's ring bus bandwidth (GB/s) of protocol p on one node: its graph's channels at the
/// intra-node channel speed (else the network's).
double one_node_bus_GBps(const CollectiveGroup& g, int p) {
  const double channel_Bps =
      g.tuner_intra_channel_Bps > 0 ? g.tuner_intra_channel_Bps : g.tuner_channel_Bps;
  return tuner_bus_GBps(false, p, 1, g.tuner_channels, channel_Bps * 1e-9, 0, g.op);
}

/// NCCL's latency (us) of the group's operation on its ring with protocol p on one node.
double one_node_latency_us(const CollectiveGroup& g, int p) {
  return tuner_latency_us(false, p, g.ranks, g.ranks, 1, g.intra_nvlink, g.op);
}

/// The protocol (0 LL, 1 LL128, 2 Simple) NCCL's tuner picks for the group's operation on its
/// ring on one node.
int one_node_protocol(const CollectiveGroup& g, double bytes) {
  int best = 2;
  double best_us = 0;
  for (int p = 2; p >= 0; --p) {
    if (p == 1 && !g.intra_nvlink) continue;  // NCCL enables LL128 over NVLink only
    const double algbw = one_node_bus_GBps(g, p) * ring_algbw_ratio(g.op, g.ranks);
    const double t = one_node_latency_us(g, p) + bytes / (1000 * algbw);
    if (p == 2 || t < best_us) best = p, best_us = t;
  }
  return best;
}

/// The time (us) NCCL's model gives the group's operation on one node with the best ring
/// protocol it may use (LL, LL128 over NVLink, Simple; Simple alone with protocols "simple").
double one_node_ring_us(const CollectiveGroup& g, double bytes) {
  const int p = g.protocols == "auto" ? one_node_protocol(g, bytes) : 2;
  const double algbw = one_node_bus_GBps(g, p) * ring_algbw_ratio(g.op, g.ranks);
  return one_node_latency_us(g, p) + bytes / (1000 * algbw);
}

/// Whether NCCL runs this operation as NVLS (2.17 and later): an allreduce on one node whose
/// NVSwitch has NVLink SHARP, NCCL_ALGO unrestricted, where NCCL's model puts NVLS (its
/// latency, then n (1 + 1/p) bytes per GPU link at nvls_efficiency of the NVLink rate, the
/// bandwidth NCCL's search and tuning.cc give it) below its ring's best protocol.
bool nvls_picked(const CollectiveGroup& g, double bytes) {
  if (g.nvls_link_Bps <= 0 || g.ranks < 2 || nodes(g) != 1 || g.op != CollectiveOp::allreduce ||
      g.nccl_algo != "auto")
    return false;
  const double algbw_GBps =
      g.params.number("nvls_efficiency") * g.nvls_link_Bps * 1e-9 * g.ranks / (g.ranks + 1.0);
  const double nvls_us = 1e6 * g.params.number("nvls_latency") + bytes / (1000 * algbw_GBps);
  return nvls_us < one_node_ring_us(g, bytes);
}

/// NCCL's tree allreduce as the volumes it moves, every message at once (NCCL pipelines the
/// whole tree, so each link is busy for its volume; the fill is in the latency): a chain
/// through each node's ranks (each link carries the message up, reduced, and back down), and
/// two binary trees over the nodes' first ranks (ncclGetDtree), each carrying half of it up and
/// down every edge. A node of a tree moves half the message per tree edge it has each way:
/// on two nodes that is the message once (the ring: 2 (p - 1) / p of it), on more nodes up to
/// twice (an inner node of one tree with two children, a leaf of the other).
Schedule tree_schedule(const CollectiveGroup& g, double bytes) {
  const int d = ranks_per_node(g), n = nodes(g);
  Schedule s;
  s.ranks = g.ranks;
  for (int base = 0; base < g.ranks; base += d)
    for (int r = base; r + 1 < std::min(g.ranks, base + d); ++r) {
      s.steps.push_back({.src = r + 1, .dst = r, .bytes = bytes, .reduce_bytes = bytes});
      s.steps.push_back({.src = r, .dst = r + 1, .bytes = bytes});
    }
  const DoubleBinaryTree trees(n);
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < n; ++c)
      if (const int q = trees.parent[t][c]; q >= 0) {
        s.steps.push_back(
            {.src = c * d, .dst = q * d, .bytes = bytes / 2, .reduce_bytes = bytes / 2});
        s.steps.push_back({.src = q * d, .dst = c * d, .bytes = bytes / 2});
      }
  s.set_dependencies(std::vector<std::vector<uint32_t>>(s.steps.size()));
  return s;
}

/// The time of tree_schedule when every link is busy for its volume: the busiest rank's send or
/// receive volume inside its node, and the busiest node's between nodes, at their classes'
/// beta, plus one alpha and the largest reduction.
double tree_data_s(const CollectiveGroup& g, double bytes, const NetworkCost& c) {
  const Schedule s = tree_schedule(g, bytes);
  const int d = ranks_per_node(g);
  std::vector<double> intra(2 * static_cast<size_t>(g.ranks)),
      inter(2 * static_cast<size_t>(nodes(g)));
  double reduce = 0;
  bool crosses = false;
  for (const CommStep& st : s.steps) {
    const bool same = st.src / d == st.dst / d;
    crosses = crosses || !same;
    std::vector<double>& v = same ? intra : inter;
    const int src = same ? st.src : st.src / d, dst = same ? st.dst : st.dst / d;
    v[2 * src] += st.bytes;
    v[2 * dst + 1] += st.bytes;
    reduce = std::max(reduce, st.reduce_bytes);
  }
  const AlphaBeta& a = crosses ? c.inter : c.intra;
  return a.alpha_s + reduce * a.gamma_s_per_byte +
         std::max(*std::max_element(intra.begin(), intra.end()) * c.intra.beta_s_per_byte,
                  *std::max_element(inter.begin(), inter.end()) * c.inter.beta_s_per_byte);
}

class NcclTuner final : public Collective {
 public:
  std::string name() const override { return "nccl_tuner"; }
  int oldest_nccl_minor() const override { return 4; }  // its tree came in NCCL 2.4

  double message_count(const CollectiveGroup& g, double bytes) const override {
    // Whichever algorithm NCCL picks: at most the larger of the two.
    const double tree = nodes(g) > 1 && g.op == CollectiveOp::allreduce
                            ? static_cast<double>(tree_schedule(g, 0).steps.size())
                            : 0;
    const double nvls =
        g.nvls_link_Bps > 0 ? collective_by_name("nvls").message_count(g, bytes) : 0;
    return std::max({collective_by_name("ring").message_count(g, bytes), tree, nvls});
  }
  /// Its own options and nvls's (it runs NVLS as that collective does).
  std::vector<CollectiveParam> params() const override {
    std::vector<CollectiveParam> p = nccl_tuner_params();
    for (CollectiveParam& c : collective_by_name("nvls").params()) p.push_back(std::move(c));
    return p;
  }
  /// Allreduce, allgather and reduce-scatter: NCCL's tuner models all three (the last two on
  /// its ring alone).
  std::optional<std::string> unsupported(CollectiveOp, const CollectiveGroup&) const override {
    return std::nullopt;
  }

  bool latency_in_start_delay() const override { return true; }
  /// The staged ring's slices are reckoned on the routes' costs.
  bool flow_needs_route_costs(const CollectiveGroup& g) const override {
    return g.staged_host_Bps > 0 || protocols_auto(g) || g.nvls_link_Bps > 0;
  }
  /// A buffer too small to hold one byte per NCCL step cannot be sliced: an error, not the
  /// flat ring in its place.
  std::optional<OptionProblem> check(const CollectiveGroup& g) const override {
    if (g.staged_host_Bps > 0 && g.nccl_buffer_bytes < kNcclSteps)
      return OptionProblem{"nccl_buffer_size",
                           fmt::format("expected at least {} bytes (one per NCCL step) with "
                                       "staged_host_bandwidth, got {}",
                                       kNcclSteps, g.nccl_buffer_bytes)};
    return std::nullopt;
  }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    if (nvls_picked(g, bytes)) return collective_by_name("nvls").schedule(g, bytes);
    Schedule s = tree_data(g, bytes) ? tree_schedule(g, bytes)
                                     : collective_by_name("ring").schedule(g, bytes);
    if (!s.steps.empty()) s.start_delay_s = latency_s(g, bytes) + memory_s(g, bytes);
    // The staged ring's messages move the ring's volumes; the delay adds what its slices add
    // beyond them on the route costs the group was tuned with (else the delay above stands).
    if (!s.steps.empty() && staged(g, bytes) && g.tuning_cost)
      s.start_delay_s =
          std::max(0.0, staged_s(g, bytes, *g.tuning_cost) -
                            collective_by_name("ring").formula_s(g, bytes, *g.tuning_cost));
    // LL and LL128: the same, what their latency and bandwidth ratio add or save.
    if (const auto k = protocol_pick(g, bytes); !s.steps.empty() && k && g.tuning_cost)
      s.start_delay_s = std::max(0.0, pick_s(g, *k, bytes, *g.tuning_cost) -
                                          simple_data_s(g, bytes, *g.tuning_cost, bytes));
    return s;
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& cost) const override {
    if (g.ranks < 2) return 0.0;
    if (nvls_picked(g, n)) return collective_by_name("nvls").formula_s(g, n, cost);
    if (staged(g, n)) return staged_s(g, n, cost);
    if (const auto k = protocol_pick(g, n)) return pick_s(g, *k, n, cost);
    return latency_s(g, n) + memory_s(g, n) +
           (tree_data(g, n) ? tree_data_s(g, n, cost)
                            : collective_by_name("ring").formula_s(g, n, cost));
  }

  std::string chosen(const CollectiveGroup& g, double bytes) const override {
    if (nvls_picked(g, bytes)) return "nccl_tuner(nvls)";
    if (tree_ll(g, bytes)) return "nccl_tuner(tree/LL)";
    if (const auto k = protocol_pick(g, bytes))
      return fmt::format("nccl_tuner({}/{})", k->tree ? "tree" : "ring",
                         k->p == 0 ? "LL" : "LL128");
    if (tree_data(g, bytes)) return "nccl_tuner(tree)";
    if (staged(g, bytes)) return "nccl_tuner(ring, staged)";
    return ring_latency(g) ? "nccl_tuner(ring latency)" : "nccl_tuner(tree latency)";
  }

 private:
  static double ring_latency_s(const CollectiveGroup& g) {
    const int steps = ring_steps(g.op, g.ranks);
    const int inter = std::min(steps, ring_inter_steps(g.op, nodes(g)));
    return (steps - inter) * g.step_latency_intra_s + inter * g.step_latency_inter_s;
  }
  /// The tree's latency; an allgather or reduce-scatter has none (NCCL runs them on its ring).
  static double tree_latency_s(const CollectiveGroup& g) {
    if (g.op != CollectiveOp::allreduce) return std::numeric_limits<double>::infinity();
    return 2.0 * ((ranks_per_node(g) - 1) * g.step_latency_intra_s +
                  floor_log2(nodes(g)) * g.step_latency_inter_s);
  }
  /// Whether the ring runs on the staged network path: on, one GPU per node, an allreduce that
  /// NCCL runs on its ring (Simple protocol).
  static bool staged(const CollectiveGroup& g, double bytes) {
    return g.staged_host_Bps > 0 && g.nccl_buffer_bytes >= kNcclSteps && g.ranks > 1 &&
           ranks_per_node(g) == 1 && g.op == CollectiveOp::allreduce && !tree_ll(g, bytes) &&
           !tree_data(g, bytes);
  }
  /// The staged ring's time: the launch latency, then its slices (staged_ring_s) with NCCL's
  /// per-step latency between nodes added to the route's on every slice's way. The memory term
  /// is left out: the kernel's device-memory traffic runs under its PCIe traffic.
  static double staged_s(const CollectiveGroup& g, double bytes, const NetworkCost& cost) {
    return g.launch_latency_s + staged_ring_s(g.ranks, g.tuner_channels, bytes, g.nccl_buffer_bytes,
                                              g.staged_host_Bps, 1.0 / cost.inter.beta_s_per_byte,
                                              cost.inter.alpha_s + g.step_latency_inter_s);
  }
  /// Whether NCCL's protocol choice applies: on, 2+ ranks (every operation nccl_tuner runs).
  static bool protocols_auto(const CollectiveGroup& g) {
    return g.protocols == "auto" && g.ranks > 1;
  }
  /// The LL or LL128 protocol NCCL's tuner picks for this allreduce, if any: on one node its
  /// ring's; across nodes its (algorithm, protocol), outside the calibrated tree/LL model and
  /// the staged ring (which model those kernels themselves).
  static std::optional<ProtocolPick> protocol_pick(const CollectiveGroup& g, double bytes) {
    if (!protocols_auto(g)) return std::nullopt;
    if (nodes(g) == 1) {
      const int p = one_node_protocol(g, bytes);
      return p == 2 ? std::nullopt : std::optional<ProtocolPick>(ProtocolPick{false, p});
    }
    if (g.staged_host_Bps > 0 || tree_ll(g, bytes)) return std::nullopt;
    const auto [algo, proto] = nccl_tuner_choice(g, bytes);
    if (proto != "LL") return std::nullopt;
    return ProtocolPick{algo == "tree", 0};
  }
  /// NCCL's latency (s) of the pick: its base latency and its steps' hardware latencies.
  static double pick_latency_s(const CollectiveGroup& g, const ProtocolPick& k, double bytes) {
    const int n = nodes(g);
    return 1e-6 * (n == 1
                       ? one_node_latency_us(g, k.p)
                       : tuner_latency_us(k.tree, k.p, g.ranks, ranks_per_node(g), n, true, g.op)) +
           channel_cost_s(g, bytes, k.p);
  }
  /// NCCL's ratio of Simple's bus bandwidth to the pick's (how much slower its data moves).
  static double pick_slowdown(const CollectiveGroup& g, const ProtocolPick& k) {
    if (nodes(g) == 1) return one_node_bus_GBps(g, 2) / one_node_bus_GBps(g, k.p);
    auto bus = [&](int p) {
      return tuner_bus_GBps(k.tree, p, nodes(g), g.tuner_channels, g.tuner_channel_Bps * 1e-9,
                            g.tuner_intra_channel_Bps * 1e-9, g.op);
    };
    return bus(2) / bus(k.p);
  }
  /// The data movement of the Simple model at `cost` for a message of `bytes`, of `size` bytes
  /// (the tree's volumes or the ring's messages, as NCCL picks for `bytes`).
  static double simple_data_s(const CollectiveGroup& g, double bytes, const NetworkCost& cost,
                              double size) {
    return tree_data(g, bytes) ? tree_data_s(g, size, cost)
                               : collective_by_name("ring").formula_s(g, size, cost);
  }
  /// LL or LL128: NCCL's latency of the pick, the memory term, and the Simple model's data
  /// movement with its data term (the links' alphas excluded) times NCCL's slowdown.
  static double pick_s(const CollectiveGroup& g, const ProtocolPick& k, double bytes,
                       const NetworkCost& cost) {
    const double alphas = simple_data_s(g, bytes, cost, 0),
                 data = simple_data_s(g, bytes, cost, bytes) - alphas;
    return pick_latency_s(g, k, bytes) + memory_s(g, bytes) + alphas + data * pick_slowdown(g, k);
  }
  /// The device memory an out-of-place operation reads and writes once: an allreduce its
  /// input and output of `bytes` each, an allgather its 1/p share and the `bytes` gathered, a
  /// reduce-scatter the reverse.
  static double memory_s(const CollectiveGroup& g, double bytes) {
    if (g.memory_Bps <= 0) return 0.0;
    const double moved =
        g.op == CollectiveOp::allreduce ? 2 * bytes : bytes + bytes / std::max(1, g.ranks);
    return moved / g.memory_Bps;
  }
  /// Whether the data moves on NCCL's tree: NCCL picks it, on 2+ nodes, outside the tree/LL
  /// model (whose fitted level bandwidth already carries the data on the ring's messages).
  static bool tree_data(const CollectiveGroup& g, double bytes) {
    return g.ranks > 1 && nodes(g) > 1 && g.op == CollectiveOp::allreduce && !tree_ll(g, bytes) &&
           nccl_tuner_picks_tree(g, bytes);
  }
  /// Whether the tree/LL model times this allreduce (on, >= 2 nodes, NCCL picks tree/LL).
  static bool tree_ll(const CollectiveGroup& g, double bytes) {
    if (g.tree_ll_level_Bps <= 0 || g.ranks < 2 || nodes(g) < 2) return false;
    if (g.op != CollectiveOp::allreduce) return false;
    return nccl_tuner_picks_tree_ll(g, bytes);
  }
  static double latency_s(const CollectiveGroup& g, double bytes) {
    if (tree_ll(g, bytes)) {
      // A message of s LL steps per channel pipelines them through the levels: levels + s - 1
      // step times of bytes / s each.
      const int levels = floor_log2(nodes(g));
      const double steps = std::max(1.0, std::ceil(bytes / (g.tuner_channels * kLlStepBytes)));
      return g.tree_ll_latency_s + 2 * (levels - 1) * kTreeNetLat[0] * 1e-6 +
             (levels + steps - 1) / steps * bytes / g.tree_ll_level_Bps;
    }
    if (const auto k = protocol_pick(g, bytes))  // without route costs: its latency only
      return pick_latency_s(g, *k, bytes);
    return std::max(0.0, g.launch_latency_s + channel_cost_s(g, bytes, 2)) +
           (ring_latency(g) ? ring_latency_s(g) : tree_latency_s(g));
  }
  /// Whether the Simple protocol pays the ring's latency, not the tree's: the lower of the two
  /// as the tuner's table gives them, or the one NCCL_ALGO leaves (a tree for allreduces only).
  static bool ring_latency(const CollectiveGroup& g) {
    if (g.nccl_algo == "ring") return true;
    if (g.nccl_algo == "tree") return g.op != CollectiveOp::allreduce;
    return ring_latency_s(g) <= tree_latency_s(g);
  }
};

const CollectiveRegistration nccl_tuner_registration{std::make_unique<NcclTuner>()};

}  // namespace

std::pair<std::string, std::string> nccl_tuner_choice(const CollectiveGroup& g, double bytes) {
  if (g.ranks < 2) return {"ring", "Simple"};
  static const char* const protocols[3] = {"LL", "LL128", "Simple"};
  std::pair<std::string, std::string> best;
  double best_us = 0;
  for (const bool tree : {true, false}) {
    if (tree && g.op != CollectiveOp::allreduce) continue;  // NCCL's ring alone runs the others
    if (g.nccl_algo != "auto" && (g.nccl_algo == "tree") != tree) continue;  // NCCL_ALGO
    for (int p = 0; p < 3; ++p) {
      const double t = tuner_time_us(g, bytes, tree, p);
      if (best.first.empty() || t < best_us) {
        best = {tree ? "tree" : "ring", protocols[p]};
        best_us = t;
      }
    }
  }
  if (best.first.empty()) return {"ring", "Simple"};  // NCCL_ALGO tree for a ring-only operation
  return best;
}

std::string nccl_algo_from_env(const std::string& value) {
  std::string v;
  for (const char c : value) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "ring" || v == "tree" ? v : "auto";
}

bool nccl_tuner_picks_tree(const CollectiveGroup& g, double bytes) {
  return nccl_tuner_choice(g, bytes).first == "tree";
}

bool nccl_tuner_picks_tree_ll(const CollectiveGroup& g, double bytes) {
  return nccl_tuner_choice(g, bytes) == std::pair<std::string, std::string>{"tree", "LL"};
}

}  // namespace sgdsim
