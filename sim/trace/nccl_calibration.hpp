#pragma once
/// Calibration of link classes from nccl-tests logs: the alpha-beta of the intra-node class
/// from a one-node log, of the inter-node class from a multi-node log (given the intra-node
/// class), each through the closed form of the collective algorithm the scenario will use.
#include <limits>
#include <optional>
#include <string>

#include "sim/collectives/collective.hpp"
#include "sim/trace/nccl_tests.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

/// Layout of an nccl-tests run, read from its rank lines.
struct NcclLayout {
  int ranks = 0;            ///< ranks (GPUs)
  int gpus_per_node = 1;    ///< ranks on one host
  int nodes = 1;            ///< distinct hosts
  int gpus_per_thread = 1;  ///< GPUs one thread launches (nccl-tests' -g)
};

/// How the collective runs, beyond the layout (pipelining and hierarchical choices).
struct NcclOptions {
  std::string inter_algorithm = "ring";      ///< hierarchical: among node leaders
  std::string intra_algorithm = "binomial";  ///< hierarchical: inside a node
  double chunk_bytes = 0;                    ///< pipelining chunk (0 = messages whole)
  int channels = 1;                          ///< concurrent channels
  double launch_latency_s = 8.4e-6;          ///< nccl_tuner: latency paid once (fitted)
  double channel_launch_s = 0;           ///< nccl_tuner: per channel on one node (fitted; 0 = off)
  bool fit_channel_launch = true;        ///< nccl_tuner: fit channel_launch_s from a one-node log
  double step_latency_intra_s = 3.4e-6;  ///< nccl_tuner: NCCL's step latency in a node
  double step_latency_inter_s = 14e-6;   ///< nccl_tuner: NCCL's step latency across nodes
  bool intra_nvlink = true;              ///< nccl_tuner: NVLink inside a node (else PCIe)
  std::string protocols = "auto";        ///< nccl_tuner: "auto" (NCCL's choice) or "simple"
  double memory_Bps = 0;                 ///< nccl_tuner: device memory bandwidth (0 = off)
  double staged_host_Bps = 0;  ///< nccl_tuner: host side of the staged network path (0 = off)
  double nccl_buffer_bytes = 4194304;  ///< nccl_tuner: NCCL_BUFFSIZE (with staged_host_Bps)
  bool fit_tree_ll = true;             ///< nccl_tuner: fit tree/LL from a multi-node log
  double tree_ll_latency_s = 0;        ///< nccl_tuner: tree/LL latency (fitted)
  double tree_ll_level_Bps = 0;        ///< nccl_tuner: tree/LL per level (0 = off)
  int tuner_channels = 8;              ///< nccl_tuner: NCCL's graph, for its choice
  double tuner_channel_Bps = 24e9;     ///< nccl_tuner: one channel, for its choice
  double tuner_intra_channel_Bps = 0;  ///< nccl_tuner: tree graph inside a node (0 = net's)
  std::string nccl_algo = "auto";      ///< nccl_tuner: NCCL_ALGO (auto, ring, tree)
  /// nccl-tests' host side: a thread launches its GPUs' kernels one after the other, so a run of
  /// G GPUs per thread (`-g G`, G >= 2) takes at least G x this per operation (fitted from the
  /// smallest sizes of a log with G >= 2; 4.36 us: the shipped 2-GPU A100 log).
  double launch_per_gpu_s = 4.36e-6;
  bool fit_launch_per_gpu = true;  ///< fit launch_per_gpu_s from a log with 2+ GPUs per thread
  /// Fit only sizes <= this (pipelined formulas walk their schedule, so 16 GB logs are slow).
  double fit_max_bytes = std::numeric_limits<double>::infinity();
};

/// The group a collective formula sees for that layout.
CollectiveGroup nccl_group(const NcclLayout& layout, const NcclOptions& options);

/// The memory bandwidth of a GPU named in an nccl-tests rank line ("A100-SXM4-40GB"), from
/// NVIDIA's datasheets; 0 when the name is not in the table.
double gpu_memory_Bps(const std::string& device);

/// The layout of `log`; throws InputError when it lists no ranks or uneven hosts.
NcclLayout nccl_layout(const NcclTestsLog& log);

/// A fitted link class.
struct NcclFit {
  std::string algorithm;            ///< collective whose formula was fitted
  NcclOptions options;              ///< how the collective runs
  NcclLayout layout;                ///< of the fitted log
  std::string fitted;               ///< "intra" (one-node log) or "inter"
  NetworkCost cost;                 ///< the fitted class and the given (or equal) other one
  double min_bytes = 0;             ///< sizes fitted
  size_t points = 0;                ///< measurements fitted
  double median_abs_rel_error = 0;  ///< over the fitted sizes
  double rms_rel_error = 0;         ///< over the fitted sizes
  size_t tree_ll_points = 0;        ///< sizes where NCCL's tuner picks tree/LL (fitted apart)
};

/// Fits alpha and beta of one link class to the sizes >= `min_bytes` of `log` by minimizing
/// (for a collective whose latency is its start delay, nccl_tuner: the launch latency, with
/// the class's alpha 0, in options.launch_latency_s of the result)
/// the sum of squared relative errors of `collective.formula_s` (a log-space grid, then a
/// pattern search: formulas that choose between algorithms are only piecewise smooth). A
/// one-node log fits the intra-node class (used for both); a multi-node log fits the
/// inter-node class with `intra` as the intra-node class (or one class for both if absent).
/// nccl_tuner on a one-node log (NCCL's protocol choice on, fit_channel_launch) also fits
/// channel_launch_s on every size >= 32 KiB, the nccl-tests floor applied, alternating twice
/// with the fit above (channel_launch_s changes the sizes where NCCL picks LL128).
NcclFit fit_nccl_tests(const NcclTestsLog& log, const Collective& collective,
                       const NcclOptions& options, double min_bytes,
                       const std::optional<AlphaBeta>& intra);

/// nccl-tests' floor for a log of `gpus_per_thread` GPUs per thread: gpus_per_thread x
/// launch_per_gpu_s where a thread launches 2 or more GPUs, else 0.
double nccl_tests_floor_s(int gpus_per_thread, double launch_per_gpu_s);

/// The host launch time per GPU of a log with 2+ GPUs per thread: the median time of its sizes
/// <= 4 KiB (where NCCL's own latency on one node is at most a few us) over its GPUs per
/// thread; nullopt for one GPU per thread or no such size.
std::optional<double> nccl_tests_launch_per_gpu_s(const NcclTestsLog& log);

/// Predicts every size of `log` with the formula at `cost`, at least nccl_tests_floor_s and
/// summarizes the relative error over sizes >= `min_bytes` (ranks and GPUs per node from the log).
LogCheck check_nccl_tests(const NcclTestsLog& log, const Collective& collective,
                          const NcclOptions& options, const NetworkCost& cost, double min_bytes);

}  // namespace sgdsim
