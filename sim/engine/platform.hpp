#pragma once
/// Platform construction on SimGrid: the engine with the network model's and the user's
/// options, the platform file or generated XML loaded (first in a child process when the
/// input is the user's), the link transports and byte-scaled noisy bandwidths, the run's
/// hosts, the helper hosts (server CPUs, the timer host), and the contention-free route costs
/// the analytic runs and the flow symmetry check ask of it. Internal to sim/engine.
#include <simgrid/forward.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/link_properties.hpp"
#include "sim/engine/private_routes.hpp"

namespace sgdsim {

/// A SimGrid engine set up with the platform, the network model and the byte scale.
class Platform {
 public:
  /// Creates the engine and loads the platform; InputError for bad options or files.
  explicit Platform(const EngineConfig& c);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  /// Contention-free cost of the route between two workers, with the model's factors.
  AlphaBeta route_cost(int from, int to);

  /// Worst-case alpha-beta between neighbouring ranks on different nodes (inter) and on the
  /// same node (intra): exact for a ring on a contention-free platform.
  NetworkCost network_cost(const CollectiveGroup& g, double reduction_Bps);

  /// Why the run's messages would not be the same seen from every rank (empty if they are):
  /// the routes r -> r+1 must cross links of their own (FATPIPE links may be shared) with the
  /// same properties in the same order, and nothing may couple the ranks' messages to other
  /// resources (cross traffic on the reverse route, reductions on the receiver's CPU).
  std::string rotation_asymmetry(const EngineConfig& c);

  /// Why rotations by blocks of c.rotation_block_ranks ranks would not map the run onto
  /// itself though the generated platform does (empty if they do): reductions on the
  /// receivers' CPUs, per-link noise.
  std::string block_asymmetry(const EngineConfig& c) const;
  /// Why messages cannot be timed in closed form on private routes (flow_private_routes;
  /// empty if they can): rotation, SimGrid's cross traffic or SMPI's size-dependent factors.
  std::string private_routes_refusal(const EngineConfig& c) const;
  /// The route between two hosts when its messages share one connection (a link with the
  /// `connection` property "per_pair"), else null: most platforms have none.
  const LinkTransports::RouteInfo* connection_route(const simgrid::s4u::Host* from,
                                                    const simgrid::s4u::Host* to);
  /// Whether any link makes messages share connections.
  bool has_connections() const { return transports_.has_connections(); }
  /// The closed-form timing of messages on private routes, with this platform's factors.
  std::unique_ptr<PrivateRoutes> private_routes();
  /// The next message started pays `latency_s` instead of its route's latency (a handover).
  void set_next_message_latency(double latency_s) { transports_.set_next_latency(latency_s); }
  /// Ghost receiver `j` (a receiver in another block, on the first block's links).
  simgrid::s4u::Host* ghost(int j) const { return ghosts_[j]; }
  /// The CPU of host `index` that runs parameter-server sums (when they are modelled).
  simgrid::s4u::Host* cpu(int index) const { return cpus_[index]; }
  /// The host that runs analytic collectives.
  simgrid::s4u::Host* timer() const { return timer_; }
  /// The SimGrid engine.
  simgrid::s4u::Engine& engine() { return *engine_; }
  /// Host of rank (or dedicated server) `index`.
  simgrid::s4u::Host* host(int index) const { return hosts_[index]; }
  /// Speed of host `index` in flop/s, as loaded (its first pstate).
  double speed(int index) const { return speed_[index]; }
  /// Speed of host `index` while a collective runs (its second pstate; its speed if none).
  double slowed_speed(int index) const { return slowed_speed_[index]; }
  /// Switches the workers' hosts to their slowed (true) or first (false) pstate.
  void set_workers_slowed(bool slowed);
  /// Number of hosts the run uses (workers, then dedicated servers).
  int hosts() const { return static_cast<int>(hosts_.size()); }
  /// Number of ranks (workers); dedicated servers come after them.
  int size() const { return workers_; }

 private:
  void create_engine(const EngineConfig& c);
  void load_platform(const EngineConfig& c);
  void set_link_factors(const EngineConfig& c);
  void pick_hosts(const EngineConfig& c);
  void add_helper_hosts(const EngineConfig& c);
  /// What a message between two ranks (hosts_ indices) pays, routing once per pair.
  const LinkTransports::RouteInfo& rank_route_info(int from, int to);
  /// Links that share flows the same way: bandwidth, latency, sharing policy and transport.
  bool same_link(const simgrid::s4u::Link& a, const simgrid::s4u::Link& b) const;

  LinkTransports transports_;  // network_model "links" only
  std::unordered_map<int64_t, const LinkTransports::RouteInfo*> rank_info_;  // into transports_
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<double> speed_, slowed_speed_;
  int workers_;
  simgrid::s4u::Host* timer_ = nullptr;
  std::vector<simgrid::s4u::Host*> created_;  // every host, in creation (declaration) order
  std::vector<simgrid::s4u::Host*> cpus_;     // parameter-server CPUs, one per host (byteps sums)
  std::vector<simgrid::s4u::Host*> ghosts_;   // ghost receivers (rotation by blocks)
  double latency_factor_ = 1, bandwidth_factor_ = 1, tcp_gamma_bytes_ = 0;
};

}  // namespace sgdsim
