#pragma once
/// Collective algorithms as pure schedules of point-to-point steps plus their cost formulas.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/collective_op.hpp"
#include "sim/core/param.hpp"

namespace sgdsim {

/// One point-to-point message of a collective, between ranks.
struct CommStep {
  int src = 0;              ///< sending rank
  int dst = 0;              ///< receiving rank
  double bytes = 0;         ///< message size (fractional: per-rank chunks of N/P bytes are exact)
  double reduce_bytes = 0;  ///< bytes the receiver reduces once the message has arrived
  bool server_reduce = false;  ///< the receiver is a parameter server: it reduces on its CPU at
                               ///< CollectiveGroup::server_reduction_Bps (byteps)
  int lockstep = 1;  ///< identical copies of this message (NCCL channels) sharing its links
  /// Sent by the parameter server on the sender's host (byteps' pulls): where messages share a
  /// connection per pair of hosts, a co-located server's are apart from its worker's (a process
  /// with sockets of its own).
  bool from_server = false;
};

/// A collective as a DAG of steps: a step may start once all its predecessors are done
/// (including the predecessor's reduction, if any).
struct Schedule {
  int ranks = 0;                       ///< participating ranks
  std::vector<CommStep> steps;         ///< all messages, in a topological order
  std::vector<uint32_t> pred_count;    ///< predecessors of each step
  std::vector<uint32_t> succ_offsets;  ///< CSR offsets into `succ` (size steps + 1)
  std::vector<uint32_t> succ;          ///< successors, grouped by step
  double start_delay_s = 0;            ///< latency paid once before the first steps (nccl_tuner)
  /// Builds the CSR successor lists from per-step predecessor lists.
  void set_dependencies(const std::vector<std::vector<uint32_t>>& preds);
  /// Each step's predecessors, in increasing order (the inverse of set_dependencies).
  std::vector<std::vector<uint32_t>> predecessors() const;
};

/// Alpha-beta(-gamma) parameters of a homogeneous network.
struct AlphaBeta {
  double alpha_s = 0;           ///< per-message latency
  double beta_s_per_byte = 0;   ///< inverse bandwidth
  double gamma_s_per_byte = 0;  ///< reduction compute per byte (0 = not modeled)
};

/// Cost parameters between ranks on different nodes and on the same node.
struct NetworkCost {
  AlphaBeta inter;  ///< between nodes (every flat algorithm uses this one)
  AlphaBeta intra;  ///< within a node (hierarchical algorithms)
};

/// Who takes part and how they are laid out.
struct CollectiveGroup {
  int ranks = 1;                         ///< participating ranks, numbered node-major
  int ranks_per_node = 1;                ///< consecutive ranks sharing a node (hierarchical)
  int servers = 0;                       ///< parameter-server shards (ps); 0 = one per rank
  std::string inter_algorithm = "ring";  ///< hierarchical: algorithm among node leaders
  double partition_bytes = 4096000;      ///< byteps: largest partition (BYTEPS_PARTITION_BYTES)
  std::string server_placement = "colocated";  ///< byteps: "colocated" (one server per node, on
                                               ///< its first rank) or "dedicated" (ranks after
                                               ///< the workers, hosts of their own)
  double server_reduction_Bps = 0;  ///< byteps: server summation throughput; 0 = not modelled
  std::string key_hash = "djb2";    ///< byteps: BYTEPS_KEY_HASH_FN (sim/collectives/byteps.hpp)
  int tensor_key = 0;  ///< byteps: the tensor's declared key (its place in the declaration order)
  int pipeline_partitions = 1;  ///< byteps: 1 = waves of parts pipeline through the stages
  double chunk_bytes = 0;       ///< NCCL-style pipelining chunk; 0 = messages unsplit
  int channels = 1;             ///< NCCL channels: concurrent copies on N/channels each
  std::string intra_algorithm = "binomial";  ///< hierarchical: binomial or chain inside a node
  /// Alpha-beta the `nccl` selector ranks its candidates with (NCCL's tuner: latency + bytes /
  /// bandwidth of the topology); unset: the cost formula_s is given.
  std::optional<NetworkCost> tuning_cost = std::nullopt;
  /// nccl_tuner: NCCL's base latency of a collective (launch), paid once; 8.4 us is NCCL's
  /// Simple-protocol ring base latency (src/graph/tuning.cc, baseLat).
  double launch_latency_s = 8.4e-6;
  /// nccl_tuner: cost of each channel (thread block) NCCL gives an operation on one node, per
  /// call, for the channels of its size (NCCL's getAlgoInfo); 0 = not modelled.
  double channel_launch_s = 0;
  double step_latency_intra_s = 0;  ///< nccl_tuner: NCCL's per-step latency inside a node
  double step_latency_inter_s = 0;  ///< nccl_tuner: NCCL's per-step latency between nodes
  /// nccl_tuner: device memory bandwidth; an out-of-place allreduce reads its input and writes
  /// its output once, 2 x bytes at this rate, paid with the latency. 0 = not modelled.
  double memory_Bps = 0;
  /// ring: rate at which an MPI ring copies the send buffer into the receive buffer before its
  /// first message (bytes copied per second); 0 = no copy (in place, or NCCL).
  double copy_Bps = 0;
  /// nccl_tuner: latency of an allreduce on NCCL's tree with the LL protocol across two nodes
  /// (fitted by calibrate nccl-tests; used only where NCCL's tuner picks tree/LL).
  double tree_ll_latency_s = 0;
  /// nccl_tuner: bandwidth at which each inter-node level of NCCL's tree/LL moves the message
  /// (store-and-forward: it fits one LL step per channel); 0 = LL not modelled.
  double tree_ll_level_Bps = 0;
  int tuner_channels = 8;           ///< nccl_tuner: channels of NCCL's graph, for its choice
  double tuner_channel_Bps = 24e9;  ///< nccl_tuner: bandwidth of one channel, for its choice
  /// nccl_tuner: one channel's path inside a node in NCCL's tree graph, for its choice on <= 2
  /// nodes (the tree's speedIntra, raised up to twice the network's); 0 = no faster than the
  /// network's channel (tuner_channel_Bps).
  double tuner_intra_channel_Bps = 0;
  /// nccl_tuner: the algorithms NCCL may choose from (NCCL_ALGO): "auto" (both), "ring", "tree".
  std::string nccl_algo = "auto";
  /// nccl_tuner: whether the links inside a node are NVLink (NCCL's NVLink rows of hwLat, LL128
  /// allowed) or not (its PCI rows, no LL128); set from the intra-node link's technology.
  bool intra_nvlink = true;
  /// nccl_tuner: each GPU's NVLink rate to an NVSwitch with NVLink SHARP (a node preset's
  /// `nvls`), where NCCL may run its NVLS algorithm on one node; 0 = no NVLS.
  double nvls_link_Bps = 0;
  /// nccl_tuner: the protocols of an allreduce on one node: "auto" (LL, LL128 or Simple, as
  /// NCCL's tuner picks) or "simple" (Simple only).
  std::string protocols = "auto";
  /// nccl_tuner: host-side rate of NCCL's staged network path (no GPUDirect RDMA: the kernel
  /// writes each step to host memory and reads it back over PCIe), all channels together; the
  /// ring then runs slice by slice (staged_ring_s). 0 = not modelled.
  double staged_host_Bps = 0;
  /// nccl_tuner: NCCL_BUFFSIZE, the Simple protocol's buffer of one connection (NCCL_STEPS
  /// steps); with staged_host_Bps it sets the ring's chunk (4 steps) and slice (2 steps).
  double nccl_buffer_bytes = 4194304;
  int scheduling_credit = 0;  ///< byteps: push-pull window in partitions (0 = no limit)
  /// Every declared option's value by key (Collective::params), the typed fields' included:
  /// an algorithm without a typed field reads its own options here.
  ParamValues params{};
  /// What the collective computes; an algorithm runs another than allreduce only where
  /// Collective::unsupported says nothing against it.
  CollectiveOp op = CollectiveOp::allreduce;
};

/// An option a collective declares in its own file (Collective::params).
struct CollectiveParam {
  Param param{};  ///< key, type, default, range and documentation
  /// Stores a value in a typed field of the group (null: the value is only in group.params).
  std::function<void(CollectiveGroup&, const ParamValue&)> apply = nullptr;
};

/// A declared option stored in a double field (a quantity or a number) of CollectiveGroup.
CollectiveParam bind_param(Param param, double CollectiveGroup::*field);
/// A declared option stored in an int field of CollectiveGroup.
CollectiveParam bind_param(Param param, int CollectiveGroup::*field);
/// A declared option stored in a string field (a choice) of CollectiveGroup.
CollectiveParam bind_param(Param param, std::string CollectiveGroup::*field);
/// Sets a declared option's value in `group`: in group.params and its typed field, if any.
void apply_param(CollectiveGroup& group, const CollectiveParam& param, const ParamValue& value);

/// The (algorithm, protocol) NCCL 2.8's tuner picks for an allreduce of `bytes` over `group`
/// (src/graph/tuning.cc: "tree"/"ring", "LL"/"LL128"/"Simple"), with the group's tuner
/// channels; A100 (compute capability 8.0) caps.
std::pair<std::string, std::string> nccl_tuner_choice(const CollectiveGroup& group, double bytes);
/// nccl_tuner's nccl_algo for an NCCL_ALGO value as NCCL prints it ("Ring", "tree"): "ring" or
/// "tree" when it names one of them alone, else "auto" (both, or others such as CollNet).
std::string nccl_algo_from_env(const std::string& value);
/// Whether NCCL's tuner runs this allreduce on its tree (chain in each node, double binary
/// tree among nodes) rather than its ring; nccl_tuner then moves the tree's volumes.
bool nccl_tuner_picks_tree(const CollectiveGroup& group, double bytes);
/// Whether that choice is NCCL's tree with the LL protocol (where nccl_tuner's tree/LL model
/// applies on 2+ nodes).
bool nccl_tuner_picks_tree_ll(const CollectiveGroup& group, double bytes);

/// NCCL keeps at most this many chunks of one connection in flight: its buffer holds
/// NCCL_STEPS = 8 slots and an allreduce chunk is ALLREDUCE_CHUNKSTEPS = 4 of them
/// (src/device/common.h, src/include/collectives.h). On a fluid network the chunks posted
/// together share the link and end together, exactly like one message of their sum, so a
/// pipelined message carries up to this many chunks.
inline constexpr int kChunksInFlight = 2;

/// How many messages a pipelined algorithm splits `bytes` into so that each carries at most
/// kChunksInFlight chunks of `chunk_bytes`; 1 when chunk_bytes is 0.
int pipeline_pieces(double bytes, double chunk_bytes);

/// What a collective objects to in its options: the option at fault and what it expects.
struct OptionProblem {
  /// "ranks" (the participating ranks), "ranks_per_node", or a CollectiveGroup option:
  /// "servers", "intra_algorithm", "server_placement".
  std::string option;
  std::string message;  ///< what is wrong and what is expected, for one line
};

/// A collective algorithm: its schedule and its closed-form cost, for allreduce and for the
/// other operations it supports (CollectiveGroup::op: allgather, reduce_scatter).
class Collective {
 public:
  virtual ~Collective() = default;
  /// Registered name (DESIGN.md §8).
  virtual std::string name() const = 0;
  /// Why it cannot run `op` on the group (nullopt: it can). Allreduce only, unless overridden.
  virtual std::optional<std::string> unsupported(CollectiveOp op,
                                                 const CollectiveGroup& /*group*/) const {
    if (op == CollectiveOp::allreduce) return std::nullopt;
    return name() + " runs allreduce only";
  }
  /// The point-to-point steps of the group's operation (group.op) on `bytes` over the group.
  virtual Schedule schedule(const CollectiveGroup& group, double bytes) const = 0;
  /// The messages of ranks 0 to block - 1 of that schedule, as rotation_reduced(schedule,
  /// block) gives them (possibly in another order) but built without the others', where the
  /// collective knows its schedule rotates with blocks of `block` ranks; nullopt where it does
  /// not know (the caller reduces the full schedule then).
  virtual std::optional<Schedule> block_schedule(const CollectiveGroup& /*group*/, double /*bytes*/,
                                                 int /*block*/) const {
    return std::nullopt;
  }
  /// The closed-form cost of the same operation on a contention-free network.
  virtual double formula_s(const CollectiveGroup& group, double bytes,
                           const NetworkCost& cost) const = 0;
  /// Ranks the schedule uses beyond the group's (dedicated servers, numbered after them).
  virtual int extra_ranks(const CollectiveGroup& /*group*/) const { return 0; }
  /// Whether the schedule pays the collective's latency once, as Schedule::start_delay_s
  /// (NCCL's tuner model), so a calibration fits the launch latency rather than link alphas.
  virtual bool latency_in_start_delay() const { return false; }
  /// Whether schedules for `group` may carry a Schedule::start_delay_s (the engine then gives
  /// start delays a timer): those that pay their latency there, and any other with a delay.
  virtual bool delays_start(const CollectiveGroup& /*group*/) const {
    return latency_in_start_delay();
  }
  /// Whether schedule and formula depend on CollectiveGroup::tensor_key (byteps hashes it), so
  /// the engine builds one per tensor rather than one per size.
  virtual bool per_tensor() const { return false; }
  /// Whether a scheme may run several tensors' collectives at once (byteps's scheduling
  /// queue); the others run one after the other.
  virtual bool overlaps_tensors() const { return false; }
  /// The algorithm that runs for `bytes` on the group: this one, or the one a selector picks.
  virtual std::string chosen(const CollectiveGroup& /*group*/, double /*bytes*/) const {
    return name();
  }
  /// The oldest NCCL 2.x minor version that has this algorithm (0: any; NCCL's trees came in
  /// 2.4), for collective.nccl_version.
  virtual int oldest_nccl_minor() const { return 0; }
  /// Other names a scenario or the CLI may use for this algorithm ("rhd").
  virtual std::vector<std::string> aliases() const { return {}; }
  /// Point-to-point messages one operation of `bytes` sends, without building the schedule
  /// (the resource guard's estimate; CollectiveRegistry.MessageCountMatchesSchedule).
  virtual double message_count(const CollectiveGroup& group, double bytes) const = 0;
  /// Whether it can run among node leaders (hierarchical's inter_algorithm): a flat algorithm.
  virtual bool runs_among_leaders() const { return false; }
  /// Whether it reads group.inter_algorithm (hierarchical).
  virtual bool uses_inter_algorithm() const { return false; }
  /// Whether it needs group.tuning_cost, the platform's route costs (a generated platform).
  virtual bool needs_route_costs() const { return false; }
  /// Whether its flow-level schedule of `group` reads group.tuning_cost, which the engine then
  /// fills from the simulated platform's routes (any platform, generated or a file).
  virtual bool flow_needs_route_costs(const CollectiveGroup& /*group*/) const { return false; }
  /// Whether a node's ranks must be consecutive (workers.placement "block").
  virtual bool needs_block_placement() const { return false; }
  /// Nodes of their own that its servers need beyond the workers' (-1: one per worker node),
  /// from the `servers` and `server_placement` options as given (sizing a generated platform).
  virtual int server_nodes(int /*servers*/, const std::string& /*placement*/) const { return 0; }
  /// The options it declares (keys of the scenario's `collective` object and `collective`
  /// flags); an `exclusive` one is refused with another value than its default elsewhere.
  virtual std::vector<CollectiveParam> params() const { return {}; }
  /// What is wrong with the group's options for this algorithm, if anything.
  virtual std::optional<OptionProblem> check(const CollectiveGroup& /*group*/) const {
    return std::nullopt;
  }
  /// The schedule on `ranks` ranks, one per node.
  Schedule schedule(int ranks, double bytes) const {
    return schedule(CollectiveGroup{ranks}, bytes);
  }
  /// The formula on `ranks` ranks, one per node, with one alpha-beta-gamma.
  double formula_s(int ranks, double bytes, const AlphaBeta& ab) const {
    return formula_s(CollectiveGroup{ranks}, bytes, NetworkCost{ab, ab});
  }
};

/// The collective registered under `name` or an alias ("rhd"); throws std::out_of_range.
const Collective& collective_by_name(const std::string& name);
/// All registered names, sorted.
std::vector<std::string> collective_names();
/// The registered name `name` stands for (itself, or the algorithm it is an alias of);
/// throws std::out_of_range if it names none.
std::string canonical_collective_name(const std::string& name);
/// Every name a user may write: registered names and aliases, sorted.
std::vector<std::string> collective_names_and_aliases();
/// The names and aliases of the algorithms that run among node leaders (runs_among_leaders),
/// sorted: what hierarchical's inter_algorithm accepts.
std::vector<std::string> leader_algorithm_names();

/// One declared option and the algorithms that declare it.
struct DeclaredCollectiveParam {
  std::vector<std::string> owners;  ///< the registered names of the algorithms that declare it
  CollectiveParam param;            ///< the declaration (the first algorithm's)
  /// For messages: `algorithm "a" uses it` or `algorithms "a", "b" use it`.
  std::string users() const;
};
/// Every registered algorithm's declared options, by algorithm name then declaration order;
/// a key declared by several algorithms is listed once, where the first declares it, with
/// every one of them among its owners.
std::vector<DeclaredCollectiveParam> collective_params();

/// What hierarchical runs inside a node (CollectiveGroup::intra_algorithm): binomial, chain, ring.
std::vector<std::string> intra_node_algorithms();

/// Adds a collective to the registry during static initialization, so a collective is
/// registered by one line next to its definition; a second one of the same name throws.
class CollectiveRegistration {
 public:
  /// Registers `collective` under its name() and aliases().
  explicit CollectiveRegistration(std::unique_ptr<Collective> collective);
};

/// The group of each of the collectives a comm task with Task::subgroup `subgroup` runs at
/// once: s > 0, blocks of s consecutive ranks; -s, the ranks equal modulo s; 0, the group.
CollectiveGroup subgroup_of(const CollectiveGroup& group, int subgroup);
/// All of those collectives as one schedule on the group's ranks (rank k of block b is rank
/// b s + k; rank k of residue j is j + k s). The group's ranks must be a multiple of s.
Schedule subgroup_schedule(const Collective& collective, const CollectiveGroup& group, double bytes,
                           int subgroup);
/// Their closed-form cost: one of them, where the ranks equal modulo s of a node (min(s,
/// ranks_per_node) of them, in as many groups) share its link to the others: inter-node beta
/// times that count.
double subgroup_formula_s(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const NetworkCost& cost, int subgroup);
/// Messages of those collectives together.
double subgroup_message_count(const Collective& collective, const CollectiveGroup& group,
                              double bytes, int subgroup);

/// Contention-free time of a schedule: each step lasts `cost(step)` (message and reduction)
/// once its predecessors end.
double schedule_time_s(const Schedule& schedule,
                       const std::function<double(const CommStep&)>& cost);

/// Rank 0's messages of a schedule that rotating the ranks by one maps onto itself, every
/// message going to the next rank (a ring's shape), or nullopt (with the reason in `why`).
/// Message k of rank 0 stands for its P images, one per rank, which on a platform with the
/// same symmetry start and end at the same instants; its predecessors are the representatives
/// of its predecessors' images (sim/collectives/rotation.cpp).
std::optional<Schedule> rotation_reduced(const Schedule& schedule, std::string* why = nullptr);
/// The same for rotations by `period` ranks (a block: a node or a leaf of a generated
/// platform): the messages of ranks 0 to period - 1, to any receiver, each standing for its
/// images in every block; nullopt unless every block sends each class alike.
std::optional<Schedule> rotation_reduced(const Schedule& schedule, int period,
                                         std::string* why = nullptr);

/// Accumulates steps and tracks each rank's latest send and receive.
class ScheduleBuilder {
 public:
  /// A builder for `ranks` ranks; with `block` > 0, for the messages of ranks 0 to block - 1
  /// only (Collective::block_schedule): each rank's latest send and receive are then those of
  /// its image in the first block (rank modulo block).
  explicit ScheduleBuilder(int ranks, int block = 0);
  /// Adds a message with explicit predecessors; returns its index.
  uint32_t add(int src, int dst, double bytes, double reduce_bytes, std::vector<uint32_t> preds);
  /// Adds a message ordered the way MPI point-to-point orders it: after the sender's previous
  /// send and receive, and after the receiver's previous receive (posted receives, in order),
  /// as they stood when the current round began.
  uint32_t add_mpi(int src, int dst, double bytes, double reduce_bytes);
  /// Starts a round: messages added by add_mpi from now on follow everything added before.
  void next_round() {
    round_send_ = last_send_;
    round_recv_ = last_recv_;
  }
  /// The latest message sent by `rank`, if any.
  std::optional<uint32_t> last_send(int rank) const { return last_send_[key(rank)]; }
  /// The latest message received by `rank`, if any.
  std::optional<uint32_t> last_recv(int rank) const { return last_recv_[key(rank)]; }
  /// Marks `step`'s reduction as a parameter server's (on its CPU, not its device).
  void set_server_reduce(uint32_t step) { steps_[step].server_reduce = true; }
  /// Marks `step` as sent by a parameter server (CommStep::from_server).
  void set_from_server(uint32_t step) { steps_[step].from_server = true; }
  /// Number of steps so far.
  uint32_t size() const { return static_cast<uint32_t>(steps_.size()); }
  /// Finishes the schedule.
  Schedule build();

 private:
  /// Where `rank`'s latest messages are kept: its image in the first block.
  size_t key(int rank) const { return static_cast<size_t>(block_ > 0 ? rank % block_ : rank); }

  int ranks_, block_;
  std::vector<CommStep> steps_;
  std::vector<std::vector<uint32_t>> preds_;
  std::vector<std::optional<uint32_t>> last_send_, last_recv_;
  std::vector<std::optional<uint32_t>> round_send_, round_recv_;
};

/// ceil(log2(p)) for p >= 1.
int ceil_log2(int p);
/// Largest power of two <= p.
int floor_pow2(int p);

}  // namespace sgdsim
