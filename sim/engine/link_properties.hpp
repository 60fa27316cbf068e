#pragma once
/// Link properties on SimGrid (network_model "links"): every link's transport, read once
/// through read_link_properties (sim/scenario/transport.hpp, the one reader and validator of
/// link properties, which the SimGrid-free platform check uses too), and what a message pays
/// on a route, which SimGrid 3.32 asks per message through its NetworkModelIntf callbacks.
/// Internal to sim/engine.
#include <simgrid/forward.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/scenario/transport.hpp"

namespace sgdsim {

/// A link's transport: its `technology` property (else `fallback`), then any of the
/// properties overhead, efficiency and window overriding its defaults; InputError (naming
/// `file`) for a bad property. A SPLITDUPLEX link's halves read the declared link's properties.
/// (A per-stream limit is a FATPIPE link on the route: SimGrid 3.32 cannot bound one
/// host-to-host message's rate.)
TransportParams link_transport(const simgrid::s4u::Link& route_link,
                               const TransportParams& fallback, const std::string& file);

/// The transports of a loaded platform's links and the per-message costs of its routes.
class LinkTransports {
 public:
  LinkTransports() = default;
  LinkTransports(const LinkTransports&) = delete;  // SimGrid's callbacks hold `this`
  LinkTransports& operator=(const LinkTransports&) = delete;

  /// What a message between two hosts pays (cached per pair).
  struct RouteInfo {
    double latency_factor = 1;         ///< (route latency + overhead) / route latency
    double bandwidth_factor = 1;       ///< the bottleneck link's efficiency
    double rate_bound_Bps = 0;         ///< stream / window limit in real bytes per second; 0 = none
    double latency_s = 0;              ///< route latency with the overhead
    double bottleneck_Bps = 0;         ///< smallest link bandwidth, real bytes per second
    bool connection_per_pair = false;  ///< its messages share one connection (in send order)
  };

  /// Reads every link of `engine` (`fallback` for links without a technology; `file` for
  /// messages), bounds messages by the smallest window through TCP-gamma, refuses --cfg
  /// factors and lets SimGrid ask each message's latency and bandwidth factors.
  void install(simgrid::s4u::Engine& engine, const TransportParams& fallback,
               const std::string& file);

  /// True once installed (network_model "links").
  bool installed() const { return !transport_.empty(); }

  /// Without install(): lets SimGrid ask each message's latency factor, `factor` unless
  /// set_next_latency() says otherwise (the other bandwidth-sharing models).
  void install_latency_only(simgrid::s4u::Engine& engine, double factor);

  /// The next message SimGrid starts pays `latency_s` instead of its route's latency (once).
  void set_next_latency(double latency_s) { next_latency_s_ = latency_s; }

  /// The transport of the route between two hosts over `links`, computed once per pair.
  const RouteInfo& route_info(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                              const std::vector<simgrid::s4u::Link*>& links);

  /// route_info() for a pair whose links are not at hand (SimGrid routes it once).
  const RouteInfo& route_info(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst);

  /// Whether any link gives its messages one connection per pair of hosts.
  bool has_connections() const { return has_connections_; }

  /// Whether two links carry the same overhead, efficiency and window (true when none is
  /// installed).
  bool same_transport(const simgrid::s4u::Link& a, const simgrid::s4u::Link& b) const;

 private:
  struct PairHash {
    size_t operator()(
        const std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  /// The factor giving the next message set_next_latency()'s latency over `links`, once.
  double take_next_latency(const std::vector<simgrid::s4u::Link*>& links);

  std::unordered_map<const simgrid::s4u::Link*, TransportParams> transport_;
  double next_latency_s_ = -1;  // set_next_latency, < 0: none
  bool has_connections_ = false;
  std::unordered_map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, RouteInfo,
                     PairHash>
      route_info_;
};

}  // namespace sgdsim
