#pragma once
/// Link technologies (tcp, rdma, nvlink, pcie, custom) and the transport model of each: what a
/// message pays on top of the links' latency and bandwidth (network_model "links"). SimGrid-free:
/// the engine applies it per message, `sgdsim predict` and analytic fidelity per route.
#include <functional>
#include <optional>
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
  /// Messages between the same two hosts whose route crosses this link share one connection
  /// (a TCP byte stream): they cross one after another, in the order sent. Libraries with one
  /// socket per peer (ps-lite, gRPC, Gloo, MPI); false: every message is a flow of its own.
  bool connection_per_pair = false;
};

/// How a communication library drives kernel TCP sockets between two nodes (a `tcp` link's
/// `sockets` object; docs/nccl-sockets.md). A connection is `threads` x `sockets_per_thread`
/// streams, each at most min(stream goodput, the cloud's per-flow cap); a library opens
/// `channels` connections per NIC and peer.
struct SocketParams {
  std::string library;         ///< nccl, nccl-aws, nccl-gcp, gloo, mpi, ps-lite or grpc
  int threads = 0;             ///< helper threads (NCCL_SOCKET_NTHREADS; 0 = the main thread)
  int sockets_per_thread = 1;  ///< NCCL_NSOCKS_PERTHREAD
  int channels = 1;            ///< connections per NIC and peer (NCCL: 2 channels per NIC)
  double flow_cap_Bps = 0;     ///< the network's cap on one TCP flow (5-tuple); 0 = none
  /// NCCL: a connection per channel and peer, so collective.nccl_version sets `channels`.
  bool channels_are_nccls = false;
};

/// A node link's sockets as read: kept so that collective.nccl_version, read after the
/// platform, can set NCCL's connections per peer (its channels) where `channels` was not given.
struct SocketSpec {
  SocketParams params;          ///< the library's defaults with the scenario's values
  double goodput_Bps = 0;       ///< one stream's goodput (`stream_goodput`)
  double stream_limit_Bps = 0;  ///< the link's own `stream_bandwidth`; 0 = none
  bool channels_given = false;  ///< `channels` was given
};

/// Per-stream goodput of kernel TCP sockets when `stream_goodput` is not given: 10 Gb/s, one
/// CPU core's send/receive copy (docs/nccl-sockets.md has the measurement).
constexpr double kDefaultStreamGoodput_Bps = 10e9 / 8;

/// The documented defaults of `library`; throws std::out_of_range for an unknown name.
SocketParams socket_defaults(const std::string& library);
/// The cap on one message between two nodes that sockets `s` give: the peer's streams
/// (socket_peer_Bps), under the link's own stream limit.
double socket_stream_cap_Bps(const SocketSpec& s);

/// NCCL's ring allreduce pipelining (Simple protocol) for one NCCL version.
struct NcclRingDefaults {
  double chunk_bytes = 0;  ///< NCCL_BUFFSIZE / NCCL_STEPS x ALLREDUCE_CHUNKSTEPS
  int channels = 1;        ///< channels on a node of one NIC
};

/// The oldest and newest NCCL 2.x minor versions whose source these defaults were read from.
constexpr int kNcclOldestMinor = 3;
constexpr int kNcclNewestMinor = 28;

/// NCCL 2.`minor`'s ring chunk and channels for a node with one NIC; `multi_node_nvlink`: the
/// ranks span several nodes and the GPUs of a node are linked by NVLink (NCCL 2.4 doubles its
/// rings only then; 2.3 never does). Throws std::out_of_range outside [kNcclOldestMinor,
/// kNcclNewestMinor].
NcclRingDefaults nccl_ring_defaults(int minor, bool multi_node_nvlink);

/// Whether links of `technology` are kernel TCP sockets (they take a `sockets` object).
bool uses_sockets(const std::string& technology);
/// Whether `technology` is NVLink (NCCL 2.4 doubles its rings across NVLink nodes).
bool is_nvlink(const std::string& technology);

/// Every socket library name, in documentation order.
std::vector<std::string> socket_library_names();

/// TCP streams of one connection: threads x sockets per thread after NCCL's limits (16
/// threads, 64 sockets); with no helper thread NCCL sends on its one control socket.
int socket_streams(const SocketParams& s);

/// Whether the library sends every message between two processes over one connection (the
/// one-socket libraries), so that they cross it in order; NCCL opens one per channel instead.
bool one_connection_per_pair(const SocketParams& s);

/// Goodput of one connection: streams x min(stream goodput, flow cap).
double socket_connection_Bps(const SocketParams& s, double stream_goodput_Bps);

/// Goodput between two nodes: channels x one connection's (the link rate is applied apart).
double socket_peer_Bps(const SocketParams& s, double stream_goodput_Bps);

/// The documented defaults of `technology`; throws std::out_of_range for an unknown name.
TransportParams transport_defaults(const std::string& technology);

/// A link property with a value sgdsim cannot read, or a latency its transport cannot use.
struct LinkPropertyProblem {
  std::string property;  ///< technology, overhead, efficiency, window or connection; empty: latency
  std::string message;   ///< the one line saying what is wrong, naming the link
};

/// A link's transport as its properties say, or the first problem.
struct LinkProperties {
  TransportParams transport;                   ///< the transport (when no problem)
  std::optional<LinkPropertyProblem> problem;  ///< the first problem, if any
};

/// The only reader and validator of link properties (the XML platform check and the engine
/// alike): the `technology` property (else `fallback`) gives the defaults, which `overhead`,
/// `efficiency`, `window` and `connection` override, whatever their order; a transport with a
/// per-message overhead needs `latency_s` > 0 (the engine applies the overhead as a factor of the
/// route latency). `property(key)` is link `link`'s value of `key`, nullptr when it has none.
LinkProperties read_link_properties(const std::string& link, double latency_s,
                                    const std::function<const char*(const char*)>& property,
                                    const TransportParams& fallback);

/// The `<prop>` elements that read_link_properties reads back as `t` (technology, overhead,
/// efficiency; window and connection where set): how generated platforms carry their transports.
std::string link_properties_xml(const TransportParams& t);

/// NCCL's per-step latency on a link class (Simple protocol; NCCL src/graph/tuning.cc, hwLat,
/// ring): NVLink 3.4 us, PCIe 5.7 us, network (rdma, tcp, custom) 14 us. Used by nccl_tuner.
double nccl_step_latency_s(const std::string& technology);
/// One channel's speed in NCCL's topology graph for a path of this technology (NCCL 2.8
/// src/graph/topo.h: NVLink 21 GB/s, PCIe Gen3 x16 12 GB/s, a 100 Gb/s socket NIC 12 GB/s; an
/// HDR InfiniBand NIC 24 GB/s); 0 for `custom`.
double nccl_channel_Bps(const std::string& technology);
/// NCCL's channels per network interface for this technology between nodes: 2 over sockets
/// (NVIDIA/nccl#438), else 8 (one per HDR NIC of an 8-NIC A100 node).
int nccl_net_channels(const std::string& technology);

/// Every technology name, in documentation order.
std::vector<std::string> technology_names();

/// What one message pays on a route whose links have the given transports.
struct RouteTransport {
  double overhead_s = 0;      ///< the largest per-message overhead on the route (paid once)
  double efficiency = 1;      ///< the bottleneck link's efficiency
  double rate_bound_Bps = 0;  ///< window limit of the message (window / 2 x latency); 0 = none
  bool connection_per_pair = false;  ///< a link of the route has `connection_per_pair`
};

/// Combines the transports of a route's links: `links[i]` has bandwidth `bandwidth_Bps[i]`, and
/// the route's one-way latency is `latency_s` (before the overhead is added).
RouteTransport combine_route(const std::vector<const TransportParams*>& links,
                             const std::vector<double>& bandwidth_Bps, double latency_s);

/// Contention-free time of a message of `bytes` on that route.
double message_time_s(const RouteTransport& t, double latency_s, double bottleneck_Bps,
                      double bytes);

}  // namespace sgdsim
