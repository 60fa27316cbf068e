#pragma once
/// Link technologies (tcp, rdma, nvlink, pcie, custom) and the transport model of each: what a
/// message pays on top of the links' latency and bandwidth (network_model "links"). SimGrid-free:
/// the engine applies it per message, `sgdsim predict` and analytic fidelity per route.
#include <string>
#include <vector>

namespace sgdsim {

/// Transport parameters of one link class.
struct TransportParams {
  std::string technology = "custom";  ///< tcp, rdma, nvlink, pcie or custom
  double overhead_s = 0;              ///< software/protocol cost per message, paid once per message
  double efficiency = 1;              ///< payload fraction of the link bandwidth (headers, framing)
  /// goodput limit of one stream (message); 0 = none. Generated platforms model it as a
  /// FATPIPE link per node on every route between nodes (each message limited, none shared).
  double stream_bandwidth_Bps = 0;
  double window_bytes = 0;  ///< flow-control window: rate <= window / RTT; 0 = none
};

/// The documented defaults of `technology`; throws std::out_of_range for an unknown name.
TransportParams transport_defaults(const std::string& technology);

/// NCCL's per-step latency on a link class (Simple protocol; NCCL src/graph/tuning.cc, hwLat,
/// ring): NVLink 3.4 us, PCIe 5.7 us, network (rdma, tcp, custom) 14 us. Used by nccl_tuner.
double nccl_step_latency_s(const std::string& technology);

/// Every technology name, in documentation order.
std::vector<std::string> technology_names();

/// What one message pays on a route whose links have the given transports.
struct RouteTransport {
  double overhead_s = 0;      ///< the largest per-message overhead on the route (paid once)
  double efficiency = 1;      ///< the bottleneck link's efficiency
  double rate_bound_Bps = 0;  ///< window limit of the message (window / 2 x latency); 0 = none
};

/// Combines the transports of a route's links: `links[i]` has bandwidth `bandwidth_Bps[i]`, and
/// the route's one-way latency is `latency_s` (before the overhead is added).
RouteTransport combine_route(const std::vector<const TransportParams*>& links,
                             const std::vector<double>& bandwidth_Bps, double latency_s);

/// Contention-free time of a message of `bytes` on that route.
double message_time_s(const RouteTransport& t, double latency_s, double bottleneck_Bps,
                      double bytes);

}  // namespace sgdsim
