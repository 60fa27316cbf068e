#pragma once
/// The scenario contract (DESIGN.md §8): parsed, validated, with defaults from one table.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/learn/compressor.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/param.hpp"
#include "sim/scenario/network_model.hpp"
#include "sim/scenario/transport.hpp"

namespace sgdsim {

/// One network link class: bandwidth and latency of a single physical link.
struct LinkSpec {
  double bandwidth_Bps = 0;   ///< bytes per second
  double latency_s = 0;       ///< seconds
  TransportParams transport;  ///< technology and its per-message costs (network_model "links")
};

/// A platform generated from a few numbers instead of an XML file.
struct GeneratedPlatform {
  Topology topology = Topology::star;  ///< the platform's shape
  int nodes = 1;                       ///< number of nodes
  int devices_per_node = 1;            ///< devices (SimGrid hosts) per node
  LinkSpec node_link;                  ///< node NIC to its switch, full duplex
  LinkSpec intra_node_link;            ///< device to the node's internal switch (PCIe/NVLink)
  /// The node link's `sockets`, which set its transport.stream_bandwidth_Bps; none without.
  std::optional<SocketSpec> node_sockets;
  /// Concurrent messages between two nodes that share that stream limit: at flow fidelity the
  /// collective's channels, each over its own connection (each gets 1/this of the limit).
  int stream_sharing_messages = 1;
  /// A node preset's ring runs over NVLink (NCCL's P2P): nccl_tuner takes NCCL's NVLink rows.
  bool intra_ring_nvlink = false;
  /// A node preset's GPUs share an NVSwitch with NVLink SHARP: each GPU's NVLink rate (bytes/s),
  /// for nccl_tuner's NVLS on one node; 0 = no NVLS.
  double intra_nvls_Bps = 0;
  double device_speed_flops = 0;  ///< peak FLOP/s of one device
  /// device.overlap_slowdown: > 0 gives every device a second pstate, its speed / (1 + this).
  double overlap_slowdown = 0;
  int nodes_per_leaf = 1;       ///< fat_tree: nodes under one leaf switch
  double oversubscription = 1;  ///< fat_tree: leaf downlink / uplink bandwidth ratio
  /// fat_tree: spine switches; > 1 splits each leaf's uplink into one link per spine, and
  /// every route between hosts under different leaves takes the spine its ECMP hash picks.
  int spines = 1;
  uint64_t ecmp_seed = 1;  ///< fat_tree with spines > 1: seed of the ECMP hash
  /// fat_tree with spines > 1: 0 hashes each host pair onto one spine (both ways); N >= 1
  /// hashes each of N connections per ordered host pair by itself, a message split equally
  /// over them (NCCL's sockets or QPs: each a 5-tuple of its own).
  int ecmp_connections = 0;
  std::vector<int> torus_dims;  ///< torus: size of each dimension (product = nodes)
  /// dragonfly: groups, chassis per group, routers per chassis, nodes per router, and the
  /// number of links between groups, between chassis and between routers (SimGrid's order).
  std::vector<int> dragonfly;
};

/// Where the platform comes from: an XML file or a generator.
struct PlatformSource {
  std::string file;                ///< resolved path of an XML file, or empty
  TransportParams file_transport;  ///< file: transport of links without a technology property
  std::optional<GeneratedPlatform> generate;  ///< set when generated
};

/// Device compute settings.
struct DeviceSpec {
  double efficiency = 1.0;            ///< fraction of peak speed achieved by FLOP profiles
  std::optional<double> speed_flops;  ///< overrides the platform's device speed
  std::optional<double> calibrate_iteration_time_s;  ///< measured fwd+bwd time of one worker
  int calibrate_batch_size = 0;                      ///< batch size of that measurement
  /// The measured time holds one optimizer step too (a published step time or throughput).
  bool calibrate_includes_optimizer = false;
  double io_time_per_sample_s = 0;  ///< input pipeline time per sample (0 = no io task)
  /// Optimizer whose step is memory-bound ("sgd", "adam", "adamw_loop", "adam_amp"); empty: the
  /// step is 4 FLOPs per parameter at the device's speed.
  std::string optimizer;
  double memory_bandwidth_Bps = 0;        ///< device memory bandwidth that times `optimizer`'s step
  double memory_bytes = 0;                ///< device memory capacity per GPU; 0 = not checked
  std::string memory_overflow = "error";  ///< a run that does not fit: "error" (exit 2) or "flag"
  /// Compute runs 1 + this times slower while a collective of the training is under way
  /// (NCCL's kernels beside it take SMs and memory bandwidth); 0 = no slowdown.
  double overlap_slowdown = 0;
};

/// The scheme (how workers synchronize) and its options.
struct SchemeSpec {
  std::string type;                  ///< a registered scheme (sim/schemes)
  std::string overlap;               ///< "wfbp" or "none"
  double fusion_bytes = 0;           ///< bucket size; 0 = one bucket per layer
  double first_bucket_bytes = 0;     ///< the first bucket's size; 0 = fusion_bytes
  std::string merge = "none";        ///< sync: "none" or "mgwfbp" (Shi et al.'s merge rule)
  int accumulation_steps = 1;        ///< sync: micro-batches of batch_size per step
  std::string predictor = "arrses";  ///< pseudo_sync: a registered predictor (models/learn)
  int staleness = 1;                 ///< ssp: bound s
  int period = 4;                    ///< local_sgd: H steps between synchronizations
  int servers = 1;                   ///< async: parameter-server shards
  std::string server_placement = "colocated";  ///< async: "colocated" or "dedicated" hosts
  std::string granularity = "model";  ///< async: push/pull per "model", "layer" or "bucket"
  /// The values of the scheme type's declared options (SchemeType::params), by key; the
  /// built-in ones are also in the typed fields above.
  ParamValues params{};
  /// Gradient compression (`scheme.compression`, the sync family): a registered compressor
  /// (models/learn/compressors) and its options; type "none" (the default) compresses nothing.
  learn::CompressionOptions compression{"none", {}};
  /// The compressor of `compression`, nullptr without compression.
  const learn::CompressorKind* compressor() const {
    return learn::find_compressor(compression.type);
  }
};

/// Seeded variability of compute.
struct VariabilitySpec {
  double compute_jitter_cv = 0;                   ///< coefficient of variation of each compute task
  std::string jitter_distribution = "lognormal";  ///< "lognormal", "normal" or "uniform"
  double straggler_fraction = 0;                  ///< fraction of workers that are slow
  double straggler_slowdown = 1.0;                ///< compute time factor of a slow worker
  bool straggler_redraw = false;                  ///< pick the slow workers anew every iteration
  double link_noise_cv = 0;  ///< coefficient of variation of each link's bandwidth
  /// Whether every worker's compute tasks last the same (no jitter, no slow workers).
  bool uniform_compute() const {
    return compute_jitter_cv == 0 && (straggler_fraction == 0 || straggler_slowdown == 1);
  }
};

/// Other jobs' collectives sharing the network with the training (absent: none).
struct BackgroundSpec {
  int jobs = 0;         ///< concurrent other jobs, each one operation after another (0: none)
  double bytes = 0;     ///< size of each of their operations (the scenario's collective)
  double gap_s = 0;     ///< idle time between a job's operations
  double offset_s = 0;  ///< job j starts at j x offset_s
};

/// Real training math run alongside the simulation (absent: timing only).
struct TrainingSpec {
  bool enabled = false;         ///< the scenario has a "training" section
  std::string model = "mlp";    ///< "mlp", "softmax" or "cnn"
  std::vector<int> hidden;      ///< hidden layer widths (mlp; cnn after its convs)
  std::vector<int> channels;    ///< cnn: output channels of each conv layer
  int kernel = 5;               ///< cnn: square kernel side
  std::string dataset;          ///< "fashion-mnist" or "synthetic"
  double learning_rate = 0.05;  ///< SGD step size
  double momentum = 0.9;        ///< SGD momentum
  double weight_decay = 0;      ///< L2 weight decay
  int eval_every = 20;          ///< evaluate every this many iterations
  double target_accuracy = 0;   ///< stop once test accuracy reaches it (0 = never)
  /// pseudo_sync: the values of the options the registered predictors declare
  /// (training.predictor_* keys, models/learn/predictors), by key.
  ParamValues predictor_values;
  std::string shards = "iid";            ///< "iid" or "by_label" (each worker sees few classes)
  std::string lr_schedule = "constant";  ///< "constant", "step" or "warmup" (linear scaling rule)
  int lr_step_every = 1;                 ///< step: iterations between decays
  double lr_step_factor = 0.1;           ///< step: decay factor
  int warmup_iterations = 1;             ///< warmup: iterations to ramp lr up to lr x workers
  int synthetic_dimension = 32;          ///< synthetic: features per sample
  double synthetic_overlap = 1.5;        ///< synthetic: within-class std (class centers: std 2)
  double synthetic_label_noise = 0;      ///< synthetic: fraction of labels redrawn at random
  /// Learning rate at `iteration` for `workers` workers.
  double learning_rate_at(int iteration, int workers) const;
  /// Features per sample of the dataset (784 for Fashion-MNIST, synthetic_dimension otherwise).
  int input_dim() const { return dataset == "fashion-mnist" ? 784 : synthetic_dimension; }
  /// Number of classes of the dataset.
  int classes() const { return 10; }
  /// cnn: side of the square input of each conv layer (28x28 images), then after the last pool.
  std::vector<int> cnn_sides() const;
  /// The layer widths joined by '-', conv layers as c<channels>k<kernel> ("784-c8k5-64-10").
  std::string layers_name() const;
};

/// A FLOPs model profile (models/profiles format) of the trained network itself, for
/// `model: "same"`: dense layers cost 2 in x out FLOPs per sample forward, conv layers
/// 2 out_c x in_c k^2 x output pixels (pooling and ReLU ignored); backward twice forward.
nlohmann::json training_model_profile(const TrainingSpec& t);

/// A fully validated scenario.
struct Scenario {
  std::string source_file;  ///< path the scenario was read from (for messages)
  std::string name;         ///< run name
  std::string description;  ///< free text for people
  uint64_t seed = 1;        ///< seed for every random choice
  PlatformSource platform;  ///< platform description
  NetworkModel network_model = NetworkModel::links;  ///< what a message pays on top
  double gradient_bytes_per_parameter = 4;           ///< gradient precision (fp32 4, fp16/bf16 2)
  std::string model_path;       ///< resolved profile path, or empty when inline
  nlohmann::json model_inline;  ///< inline profile when `model` is an object
  DeviceSpec device;            ///< compute device settings
  int workers = 1;              ///< number of data-parallel workers
  int workers_per_node = 1;     ///< workers placed on one node
  std::string placement;        ///< "block" (fill a node first) or "cyclic"
  int batch_size = 1;           ///< per-worker mini-batch
  int iterations = 1;           ///< iterations to simulate
  int warmup_iterations = 0;    ///< iterations excluded from steady-state statistics
  /// End the run once this many consecutive iterations after warm-up took the same time
  /// (0 = off); inactive when jitter, redrawn stragglers or training make iterations differ.
  int steady_state = 0;
  SchemeSpec scheme;            ///< scheme and options
  std::string collective;       ///< collective algorithm name
  int collective_servers = 0;   ///< ps: shards (0 = one per worker)
  double chunk_bytes = 0;       ///< NCCL-style pipelining chunk (0 = off)
  int collective_channels = 1;  ///< NCCL channels
  double reduction_Bps = 0;     ///< reduction throughput (0 = reductions take no time)
  /// The options the registered algorithms declare (Collective::params), read from the
  /// `collective` object into their fields (hierarchical's levels, byteps's, nccl_tuner's) and
  /// into params; collective_group() adds the ranks and the common options above.
  CollectiveGroup collective_options;
  /// Bytes of tensors a synchronizing step keeps in flight: -1 for collectives that run one
  /// tensor at a time, infinity without a credit, else the credit's partitions of the bound.
  double tensors_in_flight_bytes() const;
  /// Dedicated servers: how many (collective.servers, 0 = one per worker node).
  int dedicated_servers() const;
  /// Samples one worker trains per iteration: its micro-batches of batch_size.
  double samples_per_iteration() const {
    return static_cast<double>(batch_size) * scheme.accumulation_steps;
  }

  Fidelity fidelity = Fidelity::flow;  ///< how collectives are simulated
  /// flow fidelity: every rank's messages, or rank 0's standing for all
  FlowSymmetry flow_symmetry = FlowSymmetry::none;
  /// flow fidelity: messages on routes no other pair uses timed in closed form ("auto",
  /// "closed_form"), where it applies
  bool flow_closed_form_private_routes = false;
  /// ... and the run refused where it does not ("closed_form")
  bool flow_closed_form_required = false;
  VariabilitySpec variability;  ///< seeded variability
  BackgroundSpec background;    ///< other jobs' traffic, if any
  bool output_timeline = true;  ///< write timeline.json
  TrainingSpec training;        ///< real math, if any
  nlohmann::json resolved;      ///< the scenario with every default filled in

  /// SimGrid options ("name:value") from "simgrid_cfg"; --cfg's follow them in the engine.
  std::vector<std::string> simgrid_cfg;

  /// workload.chakra: rank r's Chakra ET file (empty: the workload is the profile).
  std::vector<std::string> chakra_files;
  /// workload.optimizer: "sgdsim" (sgdsim's update step) or "trace" (the traces hold it).
  std::string chakra_optimizer = "sgdsim";
};

/// The defaults table: every optional field's default, in one place.
const nlohmann::json& scenario_defaults();

/// Applies one `--set a.b.c=VALUE` override to raw scenario JSON (VALUE parsed as JSON, else
/// taken as a string); throws InputError on a malformed override.
void apply_override(nlohmann::json& raw, const std::string& assignment);

/// Validates raw scenario JSON read from `file` (relative paths resolve against its folder).
Scenario parse_scenario(const nlohmann::json& raw, const std::string& file);

/// Reads, overrides and validates a scenario file.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});

/// The folder relative data paths ("models/profiles/x.json", "platforms/y.xml") fall back to:
/// $SGDSIM_DATA_DIR when set, else <executable>/../share/sgdsim when it holds models/profiles
/// (an installed or moved prefix), else the source tree the binary was built from.
std::string data_dir();

/// Resolves a data file path: relative to `base_dir`, as given (the working directory), then
/// to data_dir(); throws InputError naming `file` and `pointer` if none exists.
std::string resolve_data_path(const std::string& path, const std::string& base_dir,
                              const std::string& file, const std::string& pointer);

/// The collective group a scenario's workers form (ranks, layout and collective options).
CollectiveGroup collective_group(const Scenario& scenario);

}  // namespace sgdsim
