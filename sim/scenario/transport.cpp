// The transport model of each link technology. Every default is a public specification or a
// measurement shipped in data/ (README, "Link technologies"); nothing is fitted to results.
#include "sim/scenario/transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "sim/core/units.hpp"
#include "sim/scenario/host_path.hpp"

namespace sgdsim {

namespace {

TransportParams tcp() {
  // Kernel TCP sockets over Ethernet. Overhead: the OSU 4-byte allreduce between two nodes of
  // the B-Caffe 10 GbE cluster (data/validation/bcaffe-googlenet/allreduce2.log) takes 31.9 us,
  // of which about 7 us is NIC-to-NIC wire and switch latency: 25 us of host stack per message.
  // Efficiency: 1448 payload bytes per 1538-byte frame at MTU 1500 (TCP timestamps, Ethernet
  // header, FCS, preamble and inter-frame gap). Window: Linux's default tcp_rmem maximum,
  // 6 MiB (Documentation/networking/ip-sysctl). No per-stream limit by default.
  return {"tcp", 25e-6, 1448.0 / 1538.0, 0.0, 6291456.0};
}

TransportParams rdma() {
  // InfiniBand verbs: about 1 us to post a work request and see its completion (ib_send_lat on
  // ConnectX adapters is 1-2 us end to end, wire included); 4096-byte MTU packets carry 30
  // bytes of LRH, BTH, ICRC and VCRC headers. Hardware flow control: no window.
  return {"rdma", 1e-6, 4096.0 / 4126.0, 0.0, 0.0};
}

TransportParams nvlink() {
  // NVLink as NCCL's kernels drive it: SMs write 128-byte payloads (copy engines 256), which
  // turn a link's 25 GB/s line rate into about 20 GB/s (NCCL's developer, NVIDIA/nccl-tests#149
  // and #212: "~20% protocol overhead"); NCCL plans with the same, 20 GB/s per NVLink 2 and 3
  // link, 40.1 of NVLink 5's 50 (SM70/SM80/SM100_NVLINK_BW, src/graph/topo.h). About 1 us per
  // GPU-to-GPU step (a flag written and seen through peer memory).
  return {"nvlink", 1e-6, 20.0 / 25.0, 0.0, 0.0};
}

TransportParams pcie() {
  // PCIe as NCCL plans with it: width x 60 / 80 GB/s for Gen3 (12 GB/s at x16; 24 and 48 for
  // Gen4 and Gen5: src/graph/topo.cc, PCI_BW in topo.h) against the line rate after 128b/130b
  // encoding, 15.754 GB/s at Gen3 x16: the node presets' PCIe rates from a line rate (TLP
  // framing, flow-control updates and read completions). About 1 us to start a DMA and see it
  // complete.
  const double gen3_x16_line_Bps = 16 * 8e9 * 128.0 / 130.0 / 8;
  return {"pcie", 1e-6, pcie_dma_Bps(3, 16) / gen3_x16_line_Bps, 0.0, 0.0};
}

}  // namespace

TransportParams transport_defaults(const std::string& technology) {
  if (technology == "tcp") return tcp();
  if (technology == "rdma") return rdma();
  if (technology == "nvlink") return nvlink();
  if (technology == "pcie") return pcie();
  if (technology == "custom") return TransportParams{};
  throw std::out_of_range("unknown link technology: " + technology);
}

namespace {
// NCCL's socket transport (src/transport/net_socket.cc, ncclNetSocketGetNsockNthread, the same
// from v2.4.8 to v2.30): NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD are autodetected from
// the NIC's PCI vendor, 0x1d0f (AWS ENA) giving 2 threads x 8 sockets and 0x1ae0 (Google
// gVNIC, since v2.5) 4 x 1; any other NIC gets no helper thread: one socket. MAX_THREADS 16,
// MAX_SOCKETS 64. Two channels per NIC (NVIDIA/nccl#438, to hide the bubbles of one channel).
constexpr int kNcclMaxThreads = 16;
constexpr int kNcclMaxSockets = 64;
constexpr int kNcclChannelsPerNic = 2;
// AWS EC2 caps one flow at 10 Gbps inside a cluster placement group (5 Gbps outside one):
// docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html.
constexpr double kAwsPlacementGroupFlow_Bps = 10e9 / 8;
}  // namespace

SocketParams socket_defaults(const std::string& library) {
  if (library == "nccl") return {library, 0, 1, kNcclChannelsPerNic, 0.0, true};
  if (library == "nccl-aws")
    return {library, 2, 8, kNcclChannelsPerNic, kAwsPlacementGroupFlow_Bps, true};
  if (library == "nccl-gcp") return {library, 4, 1, kNcclChannelsPerNic, 0.0, true};
  // Gloo's TCP transport: one socket per pair of ranks (gloo/transport/tcp/pair.h); Open MPI's
  // TCP BTL: btl_tcp_links = 1 connection per peer by default (Open MPI FAQ, TCP); ps-lite
  // (BytePS's and MXNet's parameter-server transport): one ZMQ DEALER socket per peer node
  // (bytedance/ps-lite src/zmq_van.h, senders_[id]), which BytePS's docs/best-practice.md says
  // "usually cannot run up to 25Gbps" (more server instances: more connections); TensorFlow's
  // gRPC runtime: one cached channel (an HTTP/2 connection) per remote task
  // (tensorflow/core/distributed_runtime/rpc/grpc_channel.cc, CachingGrpcChannelCache;
  // RPCOptions.num_channels_per_target 0 = one).
  if (library == "gloo" || library == "mpi" || library == "ps-lite" || library == "grpc")
    return {library, 0, 1, 1, 0.0};
  throw std::out_of_range("unknown socket library: " + library);
}

NcclRingDefaults nccl_ring_defaults(int minor, bool multi_node_nvlink) {
  if (minor < kNcclOldestMinor || minor > kNcclNewestMinor)
    throw std::out_of_range("NCCL 2." + std::to_string(minor) + " not read");
  // From v2.4.8 to v2.28.3: NCCL_BUFFSIZE 4 MiB (comm.h / init.cc), NCCL_STEPS 8 (devcomm.h,
  // device.h), ALLREDUCE_CHUNKSTEPS NCCL_STEPS / 2 (collectives.h): a 2 MiB chunk. Channels:
  // 2.4 doubles the rings it found only on several nodes with NVLink (misc/rings.cc); from 2.5
  // graph/connect.cc always doubles them (nChannels*2), one ring per NIC giving 2.
  // v2.3.5 and v2.3.7 (the first open NCCL 2 releases): the same 4 MiB buffer (core.h) cut
  // into ALLREDUCE_BUFCHUNKS = 2 slices of 2 MiB (collectives.h, device/all_reduce.h); one ring
  // per NIC (transport/net.cu netGetRings) and no doubling (misc/rings.cu).
  constexpr double kChunk_bytes = 4194304.0 / 8 * 4;
  if (minor == 3) return {kChunk_bytes, 1};
  if (minor == 4) return {kChunk_bytes, multi_node_nvlink ? 2 : 1};
  return {kChunk_bytes, 2};
}

bool uses_sockets(const std::string& technology) {
  return technology == "tcp";
}

bool is_nvlink(const std::string& technology) {
  return technology == "nvlink";
}

std::vector<std::string> socket_library_names() {
  return {"nccl", "nccl-aws", "nccl-gcp", "gloo", "mpi", "ps-lite", "grpc"};
}

bool one_connection_per_pair(const SocketParams& s) {
  return !s.channels_are_nccls;  // NCCL's rings keep each channel's connection in order
}

int socket_streams(const SocketParams& s) {
  const int threads = std::min(s.threads, kNcclMaxThreads);
  if (threads <= 0) return 1;
  const int per_thread = std::min(s.sockets_per_thread, kNcclMaxSockets / threads);
  return std::max(1, threads * per_thread);
}

double socket_connection_Bps(const SocketParams& s, double stream_goodput_Bps) {
  const double stream =
      s.flow_cap_Bps > 0 ? std::min(stream_goodput_Bps, s.flow_cap_Bps) : stream_goodput_Bps;
  return socket_streams(s) * stream;
}

double socket_peer_Bps(const SocketParams& s, double stream_goodput_Bps) {
  return std::max(1, s.channels) * socket_connection_Bps(s, stream_goodput_Bps);
}

double socket_stream_cap_Bps(const SocketSpec& s) {
  const double peer_Bps = socket_peer_Bps(s.params, s.goodput_Bps);
  return s.stream_limit_Bps > 0 ? std::min(s.stream_limit_Bps, peer_Bps) : peer_Bps;
}

double nccl_step_latency_s(const std::string& technology) {
  // NCCL's hardware latency table gives one row per path type: NVLink, PCI and the network
  // (it does not tell InfiniBand from sockets), so every link between nodes is the network row.
  if (technology == "nvlink") return 3.4e-6;
  if (technology == "pcie") return 5.7e-6;
  return 14e-6;
}

double nccl_channel_Bps(const std::string& technology) {
  // topo.h (2.8.4): SM70/SM80_NVLINK_WIDTH 21.0, PCI_WIDTH 12.0 ("PCI Gen3 x16"), NET_WIDTH 12.0
  // ("100Gbit"); 24 GB/s is the graph search's step for a 200 Gb/s HDR NIC.
  if (technology == "nvlink") return 21e9;
  if (technology == "pcie" || technology == "tcp") return 12e9;
  if (technology == "rdma") return 24e9;
  return 0;
}

int nccl_net_channels(const std::string& technology) {
  return technology == "tcp" ? 2 : 8;
}

std::vector<std::string> technology_names() {
  return {"tcp", "rdma", "nvlink", "pcie", "custom"};
}

RouteTransport combine_route(const std::vector<const TransportParams*>& links,
                             const std::vector<double>& bandwidth_Bps, double latency_s) {
  RouteTransport r;
  double bottleneck = 0;
  double window = 0;
  for (size_t i = 0; i < links.size(); ++i) {
    const TransportParams& t = *links[i];
    r.overhead_s = std::max(r.overhead_s, t.overhead_s);
    if (i == 0 || bandwidth_Bps[i] < bottleneck) {
      bottleneck = bandwidth_Bps[i];
      r.efficiency = t.efficiency;
    }
    if (t.window_bytes > 0) window = window > 0 ? std::min(window, t.window_bytes) : t.window_bytes;
    r.connection_per_pair = r.connection_per_pair || t.connection_per_pair;
  }
  // A window-limited stream moves one window per round trip of the links (SimGrid's TCP-gamma
  // rule, which the engine uses: bound = window / (2 x route latency)).
  const double rtt_s = 2 * latency_s;
  if (window > 0 && rtt_s > 0) {
    const double w = window / rtt_s;
    r.rate_bound_Bps = r.rate_bound_Bps > 0 ? std::min(r.rate_bound_Bps, w) : w;
  }
  return r;
}

double message_time_s(const RouteTransport& t, double latency_s, double bottleneck_Bps,
                      double bytes) {
  double rate = bottleneck_Bps * t.efficiency;
  if (t.rate_bound_Bps > 0) rate = std::min(rate, t.rate_bound_Bps);
  return latency_s + t.overhead_s + bytes / rate;
}

LinkProperties read_link_properties(const std::string& link, double latency_s,
                                    const std::function<const char*(const char*)>& property,
                                    const TransportParams& fallback) {
  LinkProperties out{fallback, std::nullopt};
  TransportParams& t = out.transport;
  auto bad = [&](const char* key, const char* value, const std::string& expected) {
    out.problem = LinkPropertyProblem{
        key, fmt::format("link \"{}\", property \"{}\": expected {}, got \"{}\"", link, key,
                         expected, value)};
    return out;
  };
  if (const char* tech = property("technology")) {
    try {
      t = transport_defaults(tech);
    } catch (const std::out_of_range&) {
      return bad("technology", tech, "tcp, rdma, nvlink, pcie or custom");
    }
  }
  if (const char* v = property("overhead")) {
    const auto x = units::parse_time_s(v);
    if (!x || *x < 0) return bad("overhead", v, "a time >= 0 such as \"25us\"");
    t.overhead_s = *x;
  }
  if (const char* v = property("efficiency")) {
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(x > 0 && x <= 1))
      return bad("efficiency", v, "a number in (0, 1]");
    t.efficiency = x;
  }
  if (const char* v = property("window")) {
    const auto x =
        std::string(v) == "none" ? std::optional<double>(0.0) : units::parse_size_bytes(v);
    if (!x || *x < 0) return bad("window", v, "\"none\" or a size such as \"6MiB\"");
    t.window_bytes = *x;
  }
  if (const char* v = property("connection")) {
    const std::string c = v;
    if (c != "per_pair" && c != "per_message")
      return bad("connection", v, "\"per_pair\" or \"per_message\"");
    t.connection_per_pair = c == "per_pair";
  }
  if (t.overhead_s > 0 && latency_s <= 0)
    out.problem = LinkPropertyProblem{
        "",
        fmt::format("link \"{}\" has latency 0 but its transport ({}) costs {} per message: give "
                    "the link a latency > 0 (the per-message cost is applied as a factor of the "
                    "route latency)",
                    link, t.technology, units::format_time_s(t.overhead_s))};
  return out;
}

std::string link_properties_xml(const TransportParams& t) {
  std::string props = fmt::format(
      "<prop id=\"technology\" value=\"{}\"/><prop id=\"overhead\" value=\"{}\"/>"
      "<prop id=\"efficiency\" value=\"{}\"/>",
      t.technology, units::format_time_s(t.overhead_s), t.efficiency);
  if (t.window_bytes > 0)
    props += fmt::format("<prop id=\"window\" value=\"{}B\"/>", t.window_bytes);
  if (t.connection_per_pair) props += "<prop id=\"connection\" value=\"per_pair\"/>";
  return props;
}

}  // namespace sgdsim
