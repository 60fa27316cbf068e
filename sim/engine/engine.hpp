#pragma once
/// Runs task DAGs and single collectives on SimGrid (the only layer that includes SimGrid).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/analytic/observer.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/dag/task_graph.hpp"
#include "sim/scenario/transport.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// Other jobs' collectives sharing the network with a training run (scenario "background").
struct BackgroundTraffic {
  int jobs = 0;         ///< chains of operations (0: none)
  double bytes = 0;     ///< each operation's size, > 0
  double gap_s = 0;     ///< idle time after each operation
  double offset_s = 0;  ///< chain j starts at j x offset_s
};

/// Where and how to simulate.
struct EngineConfig {
  std::string platform_file;  ///< SimGrid XML file to load (or empty when `platform_xml` is set)
  std::string platform_xml;   ///< generated XML text
  std::vector<std::string> worker_hosts;            ///< host of each worker, then of each dedicated
                                                    ///< server; empty: the file's first hosts
  int workers = 1;                                  ///< number of workers (ranks)
  int extra_hosts = 0;                              ///< hosts after the workers (dedicated servers)
  NetworkModel network_model = NetworkModel::lv08;  ///< what a message pays on top
  /// "links": the transport of links without a `technology` property (platform files).
  TransportParams default_transport = transport_defaults("tcp");
  bool start_delays = false;  ///< the collective delays its start (Schedule::start_delay_s)
  Fidelity fidelity = Fidelity::flow;  ///< every message, or one timed activity per collective
  /// "analytic" on SimGrid (one Exec per timed task) instead of sim/analytic's scheduler:
  /// kept for the tests that show both equal (environment SGDSIM_ANALYTIC_ON_SIMGRID=1).
  bool analytic_on_simgrid = false;
  CollectiveGroup group;     ///< layout of the ranks (ranks = workers)
  double reduction_Bps = 0;  ///< reduction throughput; 0 = reductions take no time
  /// device.overlap_slowdown s (> 0: on): the workers' hosts switch to their second pstate,
  /// speed / (1 + s), while a collective of the training is under way.
  double overlap_slowdown = 0;
  double link_noise_cv = 0;      ///< each link's bandwidth times a seeded mean-one factor
  uint64_t seed = 1;             ///< seed of the link noise
  BackgroundTraffic background;  ///< run_training at flow fidelity: other jobs' traffic
  /// flow: simulate rank 0's messages only, which is exact when the platform and every
  /// collective are symmetric under rotating the ranks (scenario flow_symmetry "rotation").
  bool rotation_symmetry = false;
  /// flow: time messages on routes no other pair uses in closed form where the network model
  /// allows (PrivateRoutes; scenario flow_private_routes "auto" and "closed_form").
  bool private_routes = false;
  /// With private_routes: an InputError where it cannot (flow_private_routes "closed_form").
  bool private_routes_required = false;
  /// With rotation_symmetry: ranks in one block of the generated platform's symmetry (a node
  /// or a leaf); above 1 the platform has ghost receivers (PlatformModel::xml_with_ghosts) and
  /// ranks 0 to rotation_block_ranks - 1 send, to a ghost for a receiver in another block.
  int rotation_block_ranks = 1;
  /// With rotation_block_ranks > 1: every worker's compute tasks take what their image's in
  /// the first block take (no jitter, no stragglers), so workers outside the first block
  /// follow their image instead of being simulated.
  bool uniform_compute = false;
  std::vector<std::string> cfg;  ///< extra SimGrid options ("name:value")
  /// Where each of `cfg` comes from, for messages: a scenario's {file, "/simgrid_cfg/N"}, or
  /// {"--cfg", ""} (also for entries past its end).
  std::vector<std::pair<std::string, std::string>> cfg_origin;
  std::string scenario_file;  ///< for error messages
  /// The process ends right after the run (`sgdsim run`'s simulating child, which `_exit`s once
  /// its outputs are written): run_training leaves SimGrid's engine and platform to the exit
  /// instead of tearing them down, a deliberate leak that saves seconds at 10^5 hosts. A
  /// second run in the same process would then find SimGrid's engine still there.
  bool keep_platform_at_exit = false;
};

/// Simulated payloads are in units of 1/kByteScale byte, so per-rank chunks of N/P bytes are
/// exact; link bandwidths and byte-valued SimGrid options are scaled to match (SimGrid reads
/// SMPI's factor thresholds as int, which caps the scale at 2^31 / 65472).
inline constexpr double kByteScale = 16384.0;

/// Simulates `iterations` iterations of `scheme` with `collective` for the comm tasks,
/// building fragments just in time; reports every task to `observer`. Fidelity "analytic"
/// runs on sim/analytic's scheduler with the route costs SimGrid gives the platform.
EngineResult run_training(const EngineConfig& config, const Scheme& scheme, int iterations,
                          const Collective& collective, TaskObserver& observer);

/// Simulates one allreduce of `bytes` over the configured workers; returns its duration.
EngineResult run_single_collective(const EngineConfig& config, const Collective& collective,
                                   double bytes);

/// What run_concurrent_jobs measured.
struct JobsResult {
  /// Per job: (end of its last operation - its start) / its operations.
  std::vector<double> mean_operation_s;
  uint64_t activities = 0;  ///< activities executed (SimGrid Exec + Comm)
};

/// `jobs` identical jobs on the configured workers, each running `operations` of the operation
/// of `bytes` one after the other, job j starting at j x `offset_s` (a delay on the timer
/// host): jobs sharing the network, as concurrent training jobs on the same nodes do.
JobsResult run_concurrent_jobs(const EngineConfig& config, const Collective& collective,
                               double bytes, int jobs, int operations, double offset_s);

/// SimGrid options sgdsim runs with: exact sharing and time precision, plus those of the
/// network model ("ideal" and "links" -> CM02 without cross-traffic or TCP window, "smpi" -> SMPI;
/// "links" then sets each message's factors from its route's link technologies).
std::vector<std::string> network_model_cfg(NetworkModel model);

/// Multiplies the size thresholds of a SimGrid piecewise factor ("65472:0.94;0:0.81") by
/// `scale`; throws std::invalid_argument if malformed.
std::string scale_factor_thresholds(const std::string& spec, double scale);

}  // namespace sgdsim
