// Link technologies: per-message overhead paid once per message, the bottleneck's efficiency,
// the TCP window, and the generated platform's routes and XML that carry them.
#include "sim/scenario/transport.hpp"

#include <gtest/gtest.h>

#include "sim/analytic/platform_model.hpp"

using namespace sgdsim;

TEST(Transport, EveryTechnologyHasDocumentedDefaults) {
  for (const auto& name : technology_names()) {
    TransportParams t = transport_defaults(name);
    EXPECT_EQ(t.technology, name);
    EXPECT_GE(t.efficiency, 0.75) << name;
    EXPECT_LE(t.efficiency, 1.0) << name;
  }
  // NCCL's kernels get 20 of an NVLink's 25 GB/s (128-byte payloads from the SMs).
  EXPECT_DOUBLE_EQ(transport_defaults("nvlink").efficiency, 20.0 / 25.0);
  // NCCL's 12 GB/s of a PCIe Gen3 x16 link's 15.754 GB/s line rate.
  EXPECT_NEAR(transport_defaults("pcie").efficiency * 15.754e9, 12e9, 1e6);
  EXPECT_DOUBLE_EQ(transport_defaults("tcp").overhead_s, 25e-6);
  EXPECT_DOUBLE_EQ(transport_defaults("tcp").efficiency, 1448.0 / 1538.0);
  EXPECT_DOUBLE_EQ(transport_defaults("tcp").window_bytes, 6291456.0);
  EXPECT_DOUBLE_EQ(transport_defaults("rdma").overhead_s, 1e-6);
  EXPECT_EQ(transport_defaults("custom").overhead_s, 0.0);
  EXPECT_THROW(transport_defaults("ethernet"), std::out_of_range);
}

TEST(Transport, OverheadIsPaidOncePerMessageNotPerHop) {
  const TransportParams tcp = transport_defaults("tcp"), pcie = transport_defaults("pcie");
  // PCIe, TCP NIC, TCP NIC, PCIe: one TCP overhead, not four (LV08 multiplied every hop).
  RouteTransport r = combine_route({&pcie, &tcp, &tcp, &pcie}, {16e9, 1.25e9, 1.25e9, 16e9}, 62e-6);
  EXPECT_DOUBLE_EQ(r.overhead_s, 25e-6);
  EXPECT_DOUBLE_EQ(r.efficiency, tcp.efficiency);  // the NIC is the bottleneck
  EXPECT_DOUBLE_EQ(r.rate_bound_Bps, 6291456.0 / (2 * 62e-6));
  // Inside a node only PCIe counts: PCIe's own overhead and efficiency, no window.
  RouteTransport in = combine_route({&pcie, &pcie}, {16e9, 16e9}, 2e-6);
  EXPECT_DOUBLE_EQ(in.overhead_s, 1e-6);
  EXPECT_DOUBLE_EQ(in.efficiency, pcie.efficiency);
  EXPECT_EQ(in.rate_bound_Bps, 0.0);
  EXPECT_DOUBLE_EQ(message_time_s(in, 2e-6, 16e9, 1e6), 3e-6 + 1e6 / (16e9 * pcie.efficiency));
}

TEST(Transport, WindowCapsLongRoutes) {
  const TransportParams tcp = transport_defaults("tcp");
  // 10 ms of latency: a 6 MiB window moves 6 MiB per 20 ms round trip, far below 100 Gb/s.
  RouteTransport r = combine_route({&tcp, &tcp}, {12.5e9, 12.5e9}, 10e-3);
  const double rate = 6291456.0 / 20e-3;
  EXPECT_NEAR(message_time_s(r, 10e-3, 12.5e9, 1e9), 10e-3 + 25e-6 + 1e9 / rate, 1e-12);
}

namespace {
GeneratedPlatform pcie_nodes_over_tcp() {
  GeneratedPlatform g;
  g.topology = Topology::star;
  g.nodes = 4;
  g.devices_per_node = 4;
  g.node_link = {10e9 / 8, 15e-6, transport_defaults("tcp")};
  g.intra_node_link = {16e9, 1e-6, transport_defaults("pcie")};
  g.device_speed_flops = 1e12;
  return g;
}
}  // namespace

TEST(Transport, GeneratedRoutesCarryTheirLinksTransports) {
  PlatformModel p(pcie_nodes_over_tcp());
  RouteCost across = p.route(0, 4), inside = p.route(0, 1);
  EXPECT_DOUBLE_EQ(across.latency_s, 32e-6);
  EXPECT_DOUBLE_EQ(across.transport.overhead_s, 25e-6);
  EXPECT_DOUBLE_EQ(across.links_alpha_beta().alpha_s, 57e-6);
  EXPECT_DOUBLE_EQ(across.links_alpha_beta().beta_s_per_byte,
                   1.0 / (10e9 / 8 * transport_defaults("tcp").efficiency));
  EXPECT_DOUBLE_EQ(inside.links_alpha_beta().alpha_s, 3e-6);
  const std::string xml = p.xml();
  EXPECT_NE(xml.find("<prop id=\"technology\" value=\"tcp\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<prop id=\"technology\" value=\"pcie\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<prop id=\"window\" value=\"6291456B\"/>"), std::string::npos);
  EXPECT_EQ(xml.find("-stream"), std::string::npos);
}

TEST(Transport, StreamLimitIsAFatpipeOnTheNodesSide) {
  GeneratedPlatform g = pcie_nodes_over_tcp();
  g.node_link.transport.stream_bandwidth_Bps = 5e9 / 8;
  PlatformModel p(g);
  EXPECT_DOUBLE_EQ(p.route(0, 4).bandwidth_Bps, 5e9 / 8);
  EXPECT_DOUBLE_EQ(p.route(0, 4).links_alpha_beta().beta_s_per_byte, 8 / 5e9);  // a goodput
  EXPECT_DOUBLE_EQ(p.route(0, 1).bandwidth_Bps, 16e9);                          // not inside a node
  const std::string xml = p.xml();
  EXPECT_NE(xml.find("<link id=\"node-0-stream\" bandwidth=\"625000000Bps\" latency=\"0s\" "
                     "sharing_policy=\"FATPIPE\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<link_ctn id=\"node-0-stream\"/>"), std::string::npos);
}

TEST(Transport, LinkPropertiesReadBackWhatTheirWriterWrote) {
  // Generated platforms carry each link's transport as the properties link_properties_xml
  // writes; read_link_properties must give back every field.
  TransportParams t = transport_defaults("tcp");
  t.overhead_s = 3e-6;
  t.efficiency = 0.5;
  t.window_bytes = 1048576;
  t.connection_per_pair = true;
  const std::string xml = link_properties_xml(t);
  auto value_of = [&](const char* key) -> std::string {
    const std::string open = std::string("<prop id=\"") + key + "\" value=\"";
    const size_t at = xml.find(open);
    if (at == std::string::npos) return "";
    const size_t from = at + open.size();
    return xml.substr(from, xml.find('"', from) - from);
  };
  std::string held;
  const LinkProperties read = read_link_properties(
      "x", 1e-6,
      [&](const char* key) -> const char* {
        held = value_of(key);
        return held.empty() ? nullptr : held.c_str();
      },
      TransportParams{});
  ASSERT_FALSE(read.problem) << read.problem->message;
  EXPECT_EQ(read.transport.technology, "tcp");
  EXPECT_DOUBLE_EQ(read.transport.overhead_s, 3e-6);
  EXPECT_DOUBLE_EQ(read.transport.efficiency, 0.5);
  EXPECT_DOUBLE_EQ(read.transport.window_bytes, 1048576);
  EXPECT_TRUE(read.transport.connection_per_pair);
  // No window: no <prop id="window">, and the reader keeps the technology's (none for rdma).
  EXPECT_EQ(link_properties_xml(transport_defaults("rdma")).find("window"), std::string::npos);
  EXPECT_EQ(link_properties_xml(transport_defaults("tcp")).find("connection"), std::string::npos);
}

TEST(Transport, ConnectionPropertyIsPerPairOrPerMessage) {
  auto read = [](const char* connection) {
    return read_link_properties(
        "l0", 1e-6,
        [=](const char* key) -> const char* {
          return std::string(key) == "connection" ? connection : nullptr;
        },
        transport_defaults("tcp"));
  };
  EXPECT_TRUE(read("per_pair").transport.connection_per_pair);
  EXPECT_FALSE(read("per_message").transport.connection_per_pair);
  EXPECT_FALSE(read(nullptr).transport.connection_per_pair);  // the default: flows apart
  const LinkProperties bad = read("shared");
  ASSERT_TRUE(bad.problem);
  EXPECT_EQ(bad.problem->property, "connection");
  EXPECT_EQ(bad.problem->message,
            "link \"l0\", property \"connection\": expected \"per_pair\" or \"per_message\", "
            "got \"shared\"");
  // A route shares a connection where any of its links does.
  TransportParams plain = transport_defaults("tcp"), shared = plain;
  shared.connection_per_pair = true;
  EXPECT_TRUE(combine_route({&plain, &shared}, {1e9, 1e9}, 1e-6).connection_per_pair);
  EXPECT_FALSE(combine_route({&plain, &plain}, {1e9, 1e9}, 1e-6).connection_per_pair);
}

TEST(Transport, LinkPropertyProblemsNameTheLinkAndWhatIsExpected) {
  auto read = [](double latency_s, const char* technology, const char* overhead) {
    return read_link_properties(
        "l0", latency_s,
        [=](const char* key) -> const char* {
          if (std::string(key) == "technology") return technology;
          if (std::string(key) == "overhead") return overhead;
          return nullptr;
        },
        transport_defaults("custom"));
  };
  const LinkProperties bad_tech = read(1e-6, "ethernet", nullptr);
  ASSERT_TRUE(bad_tech.problem);
  EXPECT_EQ(bad_tech.problem->property, "technology");
  EXPECT_EQ(bad_tech.problem->message,
            "link \"l0\", property \"technology\": expected tcp, rdma, nvlink, pcie or custom, "
            "got \"ethernet\"");
  // A per-message overhead needs a latency to be a factor of: the problem is the link's.
  const LinkProperties zero = read(0, "rdma", nullptr);
  ASSERT_TRUE(zero.problem);
  EXPECT_EQ(zero.problem->property, "");
  EXPECT_NE(zero.problem->message.find("link \"l0\" has latency 0 but its transport (rdma) costs "
                                       "1e-06s per message"),
            std::string::npos)
      << zero.problem->message;
  EXPECT_FALSE(read(0, "rdma", "0s").problem);  // no overhead: latency 0 is fine
  EXPECT_FALSE(read(0, nullptr, nullptr).problem);
}
