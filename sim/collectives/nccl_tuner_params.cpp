// The options of nccl_tuner (sim/collectives/nccl_tuner.cpp, which says what each models):
// their keys, types, defaults and documentation, bound to CollectiveGroup's fields.
#include "sim/collectives/nccl_tuner_params.hpp"

namespace sgdsim {

namespace {

/// A declaration only nccl_tuner accepts other values than the default of.
Param only(Param p) {
  p.exclusive = true;
  return p;
}

/// nccl_tuner's latency model: its launch and per-step latencies and the memory term.
std::vector<CollectiveParam> latency_params() {
  return {
      bind_param(
          only(
              {.key = "launch_latency",
               .type = ParamType::time,
               .default_value = "8.4us",
               .brief = "latency paid once per collective (NCCL's base latency)",
               .doc =
                   R"doc(`nccl_tuner` only: latency paid once per collective (NCCL's base latency of the Simple-protocol ring, `src/graph/tuning.cc` `baseLat`); `sgdsim calibrate nccl-tests` fits it)doc"}),
          &CollectiveGroup::launch_latency_s),
      bind_param(
          only(
              {.key = "channel_launch",
               .type = ParamType::time,
               .default_value = "0s",
               .brief = "cost per channel NCCL gives an operation on one node (0 = off)",
               .doc =
                   R"doc(`nccl_tuner` only: on one node, the cost per call of each channel (thread block) NCCL runs the operation on; NCCL gives a message fewer channels the smaller it is (`src/enqueue.cc`, getAlgoInfo: below channels x threads x 8 bytes for LL and LL128, x 64 for Simple, LL's times the ranks), out of twice `tuner_channels` (`src/graph/connect.cc` duplicates the ring's channels). LL and LL128 pay it for their channels on top of NCCL's latency; Simple's `launch_latency` holds it for all channels and pays less for fewer. `sgdsim calibrate nccl-tests` fits it from a one-node log (2.2 us on the shipped 2-GPU A100 log; see Calibration))doc",
               .default_text = "`\"0s\"` (not modelled)"}),
          &CollectiveGroup::channel_launch_s),
      bind_param(
          only(
              {.key = "step_latency_intra",
               .type = ParamType::time,
               .default_value = "auto",
               .brief = "per-step latency inside a node (auto: NCCL's hwLat of the "
                        "intra-node technology)",
               .doc =
                   R"doc(`nccl_tuner` only: NCCL's per-step latency inside a node; `auto` = NCCL's `hwLat` (Simple, ring) for the intra-node link's technology: `nvlink` 3.4 us, `pcie` 5.7 us, others 14 us)doc",
               .choices = {"auto"}}),
          &CollectiveGroup::step_latency_intra_s),
      bind_param(
          only(
              {.key = "memory_bandwidth",
               .type = ParamType::bandwidth,
               .default_value = 0,
               .brief = "GPU memory bandwidth: an allreduce's 2 x bytes read and written (0 = "
                        "not modelled)",
               .doc =
                   R"doc(`nccl_tuner` only: the GPU's memory bandwidth, e.g. `"1555GBps"` (A100 40 GB datasheet): an out-of-place allreduce reads its input and writes its output once, `2 x bytes / memory_bandwidth`, an allgather or reduce-scatter its 1/p share and the whole buffer, `(bytes + bytes / p) / memory_bandwidth`, paid with the latency)doc",
               .default_text = "`0` (not modelled)",
               .zero_off = true}),
          &CollectiveGroup::memory_Bps),
      bind_param(
          only(
              {.key = "step_latency_inter",
               .type = ParamType::time,
               .default_value = "auto",
               .brief = "per-step latency between nodes (auto: NCCL's network row, 14 us)",
               .doc =
                   R"doc(`nccl_tuner` only: per-step latency between nodes; `auto` = NCCL's network row, 14 us (for every technology: NCCL's table does not tell InfiniBand from sockets))doc",
               .choices = {"auto"}}),
          &CollectiveGroup::step_latency_inter_s)};
}

/// The tree/LL model and the inputs of NCCL's own choice between algorithms and protocols.
std::vector<CollectiveParam> tree_ll_params() {
  return {
      bind_param(
          only(
              {.key = "tree_ll_level_bandwidth",
               .type = ParamType::bandwidth,
               .default_value = 0,
               .brief = "tree/LL: bandwidth of each inter-node level (0 = not modelled)",
               .doc =
                   R"doc(`nccl_tuner` only: where NCCL's own tuner (2.8's published model, `tuner_channels`) picks tree with the LL protocol on 2+ nodes, each of the floor(log2 nodes) inter-node levels forwards the whole message at this bandwidth (store-and-forward: up to channels x 32 KiB it is one LL step); `sgdsim calibrate nccl-tests` fits it from a multi-node log (see Collectives))doc",
               .default_text = "`0` (not modelled)",
               .zero_off = true}),
          &CollectiveGroup::tree_ll_level_Bps),
      bind_param(
          only(
              {.key = "tree_ll_latency",
               .type = ParamType::time,
               .default_value = "0s",
               .brief = "tree/LL latency across two nodes",
               .doc =
                   R"doc(`nccl_tuner` only, with `tree_ll_level_bandwidth`: the tree/LL latency across two nodes; each further level adds 2 x 5 us (NCCL's network `hwLat` of tree/LL); fitted with it)doc"}),
          &CollectiveGroup::tree_ll_latency_s),
      bind_param(
          only(
              {.key = "tuner_channels",
               .type = ParamType::integer,
               .default_value = 8,
               .brief = "channels of the graph NCCL's tuner assumes for its choice",
               .doc =
                   R"doc(`nccl_tuner` only, with `tree_ll_level_bandwidth`: channels of the graph NCCL's tuner assumes when it chooses an algorithm and protocol (8 = one per 200 Gb/s HDR NIC of a DGX A100 / Azure NDv4 node))doc",
               .min = 1,
               .max = 64}),
          &CollectiveGroup::tuner_channels),
      bind_param(
          only(
              {.key = "tuner_channel_bandwidth",
               .type = ParamType::bandwidth,
               .default_value = "24GBps",
               .brief = "one channel's bandwidth in NCCL's choice",
               .doc =
                   R"doc(`nccl_tuner` only, with `tree_ll_level_bandwidth`: one channel's bandwidth in that choice (24 GB/s: NCCL's graph search speed for an HDR 200 Gb/s NIC))doc"}),
          &CollectiveGroup::tuner_channel_Bps)};
}

/// The inputs of NCCL's choice between its ring and its tree (whose volumes nccl_tuner moves).
std::vector<CollectiveParam> algorithm_params() {
  return {
      bind_param(
          only(
              {.key = "tuner_intra_channel_bandwidth",
               .type = ParamType::bandwidth,
               .default_value = 0,
               .brief = "one channel's path inside a node in NCCL's tree graph (2 nodes)",
               .doc =
                   R"doc(`nccl_tuner` only: one channel's bandwidth inside a node in NCCL's tree graph, which its tuner uses for the tree on two nodes, raised at most to twice `tuner_channel_bandwidth` (NCCL's `search.cc`; its `topo.h` gives 21 GB/s per NVLink of a V100 or A100, 12 GB/s for PCIe Gen3 x16); `0`: no faster than `tuner_channel_bandwidth`, so on two nodes NCCL keeps the ring for large messages)doc",
               .default_text = "`0` (the network channel's)",
               .zero_off = true}),
          &CollectiveGroup::tuner_intra_channel_Bps),
      bind_param(
          only(
              {.key = "nccl_algo",
               .type = ParamType::choice,
               .default_value = "auto",
               .brief = "the algorithms NCCL may pick (NCCL_ALGO)",
               .doc =
                   R"doc(`nccl_tuner` only: the algorithms NCCL's tuner chooses from, as `NCCL_ALGO` sets them: `auto` (ring and tree), `ring`, `tree`)doc",
               .choices = {"auto", "ring", "tree"}}),
          &CollectiveGroup::nccl_algo),
      bind_param(
          only(
              {.key = "protocols",
               .type = ParamType::choice,
               .default_value = "auto",
               .brief = "protocols of an allreduce (auto: LL or LL128 where NCCL's tuner picks "
                        "them, else Simple)",
               .doc =
                   R"doc(`nccl_tuner` only: `auto` times an allreduce with the protocol NCCL's tuner picks (its 2.8 model): on one node LL or LL128 (LL128 only over NVLink), across nodes LL (ring or tree, where the calibrated tree/LL model does not), each with NCCL's latency and its bandwidth ratio to Simple; `simple` with the Simple protocol at every size (see Collectives))doc",
               .choices = {"auto", "simple"}}),
          &CollectiveGroup::protocols)};
}

/// The staged network path (staged_ring_s): its host-side rate and NCCL's buffer size.
std::vector<CollectiveParam> staged_params() {
  return {
      bind_param(
          only(
              {.key = "staged_host_bandwidth",
               .type = ParamType::bandwidth,
               .default_value = 0,
               .brief = "host side of NCCL's staged network path, all channels (0 = not "
                        "modelled)",
               .doc =
                   R"doc(`nccl_tuner` only, one GPU per node: the rate at which the GPU writes each step to host memory and reads it back over PCIe when the network has no GPUDirect RDMA (sockets always), all channels together; the ring then runs slice by slice as NCCL's kernel does, host side and network overlapping only from two slices per chunk on (see Calibration). `sgdsim calibrate nccl-tests --technology tcp` sets 12 GB/s, NCCL's rate of a PCIe Gen3 x16 link (`topo.h`, the host path's `net_staged`))doc",
               .default_text = "`0` (not modelled)",
               .zero_off = true}),
          &CollectiveGroup::staged_host_Bps),
      bind_param(
          only(
              {.key = "nccl_buffer_size",
               .type = ParamType::size,
               .default_value = 4194304,
               .brief = "NCCL_BUFFSIZE: one connection's buffer (with staged_host_bandwidth)",
               .doc =
                   R"doc(`nccl_tuner` only, with `staged_host_bandwidth`: `NCCL_BUFFSIZE`, the Simple protocol's buffer of one connection, 8 steps (`NCCL_STEPS`); the ring's chunk is 4 steps and its slice 2 (default 4 MiB: `DEFAULT_BUFFER_SIZE_BYTES`, NCCL 2.4.8 `src/include/comm.h`), so a loop is channels x ranks x 2 MiB)doc",
               .default_text = "`4194304` (4 MiB)"}),
          &CollectiveGroup::nccl_buffer_bytes)};
}

}  // namespace

/// nccl_tuner's options; only nccl_tuner accepts other values than their defaults.
std::vector<CollectiveParam> nccl_tuner_params() {
  std::vector<CollectiveParam> p = latency_params();
  for (CollectiveParam& t : tree_ll_params()) p.push_back(std::move(t));
  for (CollectiveParam& t : algorithm_params()) p.push_back(std::move(t));
  for (CollectiveParam& t : staged_params()) p.push_back(std::move(t));
  return p;
}

}  // namespace sgdsim
