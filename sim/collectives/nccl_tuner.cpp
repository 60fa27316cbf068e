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
// The latency is the schedule's start_delay_s; the data then moves as the ring's messages
// (chunk_bytes and channels pipeline them), sharing links with all other traffic at flow level.
// Both NCCL algorithms move about 2 x bytes through each node's links, so the ring's messages
// carry the tree's volume too. Why a delay rather than link latencies: NCCL pipelines its
// steps, so a step's latency is paid along the data's path, not once per message and link
// (the fitted per-message alpha of `ring` grows with 2(p-1), which nccl-tests logs refute).
// Leaves out: the LL and LL128 protocols (their lower latency for small messages), the tree's
// own link usage and pipeline fill, CollNet/NVLS, and NCCL's per-size channel counts.
#include <algorithm>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

namespace {

int floor_log2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

class NcclTuner final : public Collective {
 public:
  std::string name() const override { return "nccl_tuner"; }

  double message_count(const CollectiveGroup& g, double bytes) const override {
    return collective_by_name("ring").message_count(g, bytes);
  }
  std::vector<std::string> own_options() const override {
    return {"launch_latency", "step_latency_intra", "step_latency_inter", "memory_bandwidth"};
  }

  bool latency_in_start_delay() const override { return true; }

  Schedule schedule(const CollectiveGroup& g, double bytes) const override {
    Schedule s = collective_by_name("ring").schedule(g, bytes);
    if (!s.steps.empty()) s.start_delay_s = latency_s(g) + memory_s(g, bytes);
    return s;
  }

  double formula_s(const CollectiveGroup& g, double n, const NetworkCost& cost) const override {
    if (g.ranks < 2) return 0.0;
    return latency_s(g) + memory_s(g, n) + collective_by_name("ring").formula_s(g, n, cost);
  }

  std::string chosen(const CollectiveGroup& g, double /*bytes*/) const override {
    return ring_latency_s(g) <= tree_latency_s(g) ? "nccl_tuner(ring latency)"
                                                  : "nccl_tuner(tree latency)";
  }

 private:
  static int ranks_per_node(const CollectiveGroup& g) {
    return std::max(1, std::min(g.ranks_per_node, g.ranks));
  }
  static int nodes(const CollectiveGroup& g) {
    const int d = ranks_per_node(g);
    return (g.ranks + d - 1) / d;
  }
  static double ring_latency_s(const CollectiveGroup& g) {
    const int steps = 2 * (g.ranks - 1), n = nodes(g);
    const int inter = n > 1 ? std::min(steps, 2 * n) : 0;
    return (steps - inter) * g.step_latency_intra_s + inter * g.step_latency_inter_s;
  }
  static double tree_latency_s(const CollectiveGroup& g) {
    return 2.0 * ((ranks_per_node(g) - 1) * g.step_latency_intra_s +
                  floor_log2(nodes(g)) * g.step_latency_inter_s);
  }
  static double memory_s(const CollectiveGroup& g, double bytes) {
    return g.memory_Bps > 0 ? 2 * bytes / g.memory_Bps : 0.0;
  }
  static double latency_s(const CollectiveGroup& g) {
    return g.launch_latency_s + std::min(ring_latency_s(g), tree_latency_s(g));
  }
};

const CollectiveRegistration registration{std::make_unique<NcclTuner>()};

}  // namespace

}  // namespace sgdsim
