// `node_link.end_to_end_latency`: a measured host-to-host small-message latency becomes the
// per-hop latency of the node links, so that a message between two nodes pays it back.
#include <gtest/gtest.h>

#include "sim/analytic/platform_model.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {
json with_node_link(const json& node_link, int per_node = 1) {
  json j = json::parse(R"({"model": "mlp"})");
  j["workers"] = {{"count", 4}, {"per_node", per_node}};
  j["platform"]["generate"]["node_link"] = node_link;
  return j;
}

Scenario parse_link(const json& node_link, int per_node = 1) {
  return parse_scenario(with_node_link(node_link, per_node), "s.json");
}

std::string latency_error_of(const json& node_link) {
  try {
    parse_link(node_link);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(EndToEndLatency, EachNodeLinkGetsHalfOfWhatTheOverheadLeaves) {
  // rdma: 1 us overhead, so a 2 us ib_write_lat leaves 0.5 us per hop.
  Scenario ib =
      parse_link({{"bandwidth", "100Gbps"}, {"end_to_end_latency", "2us"}, {"technology", "rdma"}});
  EXPECT_NEAR(ib.platform.generate->node_link.latency_s, 0.5e-6, 1e-15);
  // tcp: 25 us overhead, 45 us leaves 10 us per hop.
  Scenario eth =
      parse_link({{"bandwidth", "10Gbps"}, {"end_to_end_latency", "45us"}, {"technology", "tcp"}});
  EXPECT_NEAR(eth.platform.generate->node_link.latency_s, 10e-6, 1e-15);
  // An overridden overhead is the one taken off.
  Scenario own = parse_link({{"bandwidth", "10Gbps"},
                             {"end_to_end_latency", "45us"},
                             {"technology", "tcp"},
                             {"overhead", "15us"}});
  EXPECT_NEAR(own.platform.generate->node_link.latency_s, 15e-6, 1e-15);
  // The resolved scenario keeps the form it was given, so rerunning it gives the same links.
  EXPECT_TRUE(eth.resolved["platform"]["generate"]["node_link"].contains("end_to_end_latency"));
  EXPECT_FALSE(eth.resolved["platform"]["generate"]["node_link"].contains("latency"));
}

TEST(EndToEndLatency, AMessageBetweenTwoNodesPaysItBack) {
  for (const std::string tech : {"tcp", "rdma"}) {
    Scenario s =
        parse_link({{"bandwidth", "25Gbps"}, {"end_to_end_latency", "30us"}, {"technology", tech}});
    const RouteCost r = PlatformModel(*s.platform.generate).route(0, 1);
    EXPECT_NEAR(r.latency_s + r.transport.overhead_s, 30e-6, 1e-12) << tech;
  }
  // With several devices per node the two intra-node hops come on top (GPU to NIC and back).
  Scenario multi = parse_link(
      {{"bandwidth", "25Gbps"}, {"end_to_end_latency", "30us"}, {"technology", "tcp"}}, 2);
  const RouteCost r = PlatformModel(*multi.platform.generate).route(0, 2);
  const double intra_s = multi.platform.generate->intra_node_link.latency_s;
  EXPECT_GT(intra_s, 0);
  EXPECT_NEAR(r.latency_s + r.transport.overhead_s, 30e-6 + 2 * intra_s, 1e-12);
}

TEST(EndToEndLatency, BadInputNamesTheField) {
  EXPECT_NE(latency_error_of({{"bandwidth", "10Gbps"},
                              {"latency", "5us"},
                              {"end_to_end_latency", "40us"},
                              {"technology", "tcp"}})
                .find("/platform/generate/node_link/end_to_end_latency: expected either "
                      "`latency`"),
            std::string::npos);
  EXPECT_NE(latency_error_of(
                {{"bandwidth", "10Gbps"}, {"end_to_end_latency", "20us"}, {"technology", "tcp"}})
                .find("expected a time above the tcp link's per-message overhead of 25 us"),
            std::string::npos);
  EXPECT_NE(latency_error_of(
                {{"bandwidth", "10Gbps"}, {"end_to_end_latency", "0s"}, {"technology", "rdma"}})
                .find("/platform/generate/node_link/end_to_end_latency"),
            std::string::npos);
}
