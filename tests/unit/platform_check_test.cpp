// The SimGrid-free platform reader (first stage of the platform check): it accepts every
// shipped platform and every platform sgdsim generates, reports the hosts in declaration
// order, follows routes only between the hosts a run uses, and names the line of a problem.
#include "sim/scenario/platform_check.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/analytic/platform_model.hpp"
#include "sim/core/errors.hpp"

using namespace sgdsim;

namespace {

GeneratedPlatform spec(Topology topology, int nodes, int dpn) {
  GeneratedPlatform g;
  g.topology = topology;
  g.nodes = nodes;
  g.devices_per_node = dpn;
  g.node_link = {1e9, 2e-6, transport_defaults("rdma")};
  g.intra_node_link = {4e9, 1e-6, transport_defaults("nvlink")};
  g.device_speed_flops = 1e12;
  g.nodes_per_leaf = 2;
  g.oversubscription = 2;
  return g;
}

std::string error_of(const std::string& xml, size_t hosts_used = 100) {
  try {
    check_platform_xml(xml, "t.xml", hosts_used);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PlatformCheck, AcceptsEveryShippedPlatform) {
  for (const auto& dir : {"platforms", "platforms/examples"})
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".xml") continue;
      PlatformSummary s;
      ASSERT_NO_THROW(s = check_platform_file(e.path().string(), 1000000)) << e.path();
      EXPECT_GT(s.hosts.size(), 1u) << e.path();
      EXPECT_EQ(s.pairs_checked, s.hosts.size() * (s.hosts.size() - 1)) << e.path();
    }
}

TEST(PlatformCheck, AcceptsEveryGeneratedPlatformWithItsHostsInOrder) {
  std::vector<GeneratedPlatform> specs = {spec(Topology::star, 4, 1), spec(Topology::star, 3, 2),
                                          spec(Topology::fat_tree, 6, 2),
                                          spec(Topology::fat_tree, 5, 1)};
  GeneratedPlatform stream = spec(Topology::star, 3, 1);
  stream.node_link.transport.stream_bandwidth_Bps = 5e8;
  specs.push_back(stream);
  GeneratedPlatform torus = spec(Topology::torus, 8, 1);
  torus.torus_dims = {2, 4};
  specs.push_back(torus);
  GeneratedPlatform dragonfly = spec(Topology::dragonfly, 16, 1);
  dragonfly.dragonfly = {2, 2, 2, 2, 1, 1, 1};
  specs.push_back(dragonfly);
  for (const auto& g : specs) {
    PlatformModel pm(g);
    PlatformSummary s;
    ASSERT_NO_THROW(s = check_platform_xml(pm.xml(), "generated.xml", 1000)) << pm.xml();
    ASSERT_EQ(static_cast<int>(s.hosts.size()), pm.num_hosts()) << topology_name(g.topology);
    for (int h = 0; h < pm.num_hosts(); ++h)
      EXPECT_EQ(s.hosts[h], pm.host_name(h)) << topology_name(g.topology);
  }
}

TEST(PlatformCheck, RoutesAreFollowedOnlyBetweenTheHostsARunUses) {
  // h2 cannot reach anyone, but a run on the first two hosts never asks.
  const std::string xml = R"(<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="w" routing="Full">
    <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/>
    <link id="l" bandwidth="1GBps" latency="1us"/>
    <route src="h0" dst="h1"><link_ctn id="l"/></route>
  </zone>
</platform>)";
  EXPECT_EQ(error_of(xml, 2), "");
  EXPECT_NE(error_of(xml, 3).find("no route from host \"h0\" to host \"h2\""), std::string::npos)
      << error_of(xml, 3);
}

TEST(PlatformCheck, FloydZonesRouteThroughRoutersAndNamesTheLine) {
  const std::string ok = R"(<!DOCTYPE platform><platform version="4.1"><zone id="w" routing="Floyd">
<host id="a" speed="1f"/><host id="b" speed="1f"/><router id="r"/>
<link id="l" bandwidth="1Bps" latency="0s"/>
<route src="a" dst="r"><link_ctn id="l"/></route>
<route src="r" dst="b"><link_ctn id="l"/></route></zone></platform>)";
  EXPECT_EQ(error_of(ok), "");
  const std::string cut =
      R"(<!DOCTYPE platform><platform version="4.1"><zone id="w" routing="Floyd">
<host id="a" speed="1f"/><host id="b" speed="1f"/><router id="r"/>
<link id="l" bandwidth="1Bps" latency="0s"/>
<route src="a" dst="r"><link_ctn id="l"/></route></zone></platform>)";
  EXPECT_EQ(error_of(cut).rfind("t.xml: line 2: no route from host \"a\" to host \"b\"", 0), 0u)
      << error_of(cut);
  EXPECT_NE(error_of("<!DOCTYPE platform>\n<platform version=\"4.1\">\n<zone id=\"w\" "
                     "routing=\"Full\">\n<host "
                     "id=\"a\" speed=\"1f\">\n</zone></platform>")
                .find("line 5: not well-formed XML"),
            std::string::npos);
}

TEST(PlatformCheck, LinkPropertiesAreCheckedByTheirOneReaderAtTheirLine) {
  // A bad value is named at its <prop>'s line, a latency the transport cannot use at the
  // link's, each with read_link_properties' own line (the engine reports the same text).
  auto platform = [](const std::string& link) {
    return "<!DOCTYPE platform><platform version=\"4.1\"><zone id=\"w\" routing=\"Full\">\n"
           "<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/>\n" +
           link + "\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>";
  };
  const std::string bad_value = platform(
      "<link id=\"l\" bandwidth=\"1Bps\" latency=\"1us\">\n<prop id=\"efficiency\" "
      "value=\"1.5\"/></link>");
  EXPECT_EQ(error_of(bad_value),
            "t.xml: line 4: link \"l\", property \"efficiency\": expected a number in (0, 1], got "
            "\"1.5\"");
  const std::string zero_latency = platform(
      "<link id=\"l\" bandwidth=\"1Bps\" latency=\"0s\">\n<prop id=\"technology\" "
      "value=\"tcp\"/></link>");
  EXPECT_EQ(error_of(zero_latency)
                .rfind("t.xml: line 3: link \"l\" has latency 0 but its "
                       "transport (tcp) costs 2.5e-05s per message",
                       0),
            0u)
      << error_of(zero_latency);
  EXPECT_EQ(error_of(platform("<link id=\"l\" bandwidth=\"1Bps\" latency=\"0s\">\n<prop "
                              "id=\"technology\" value=\"nvlink\"/><prop id=\"overhead\" "
                              "value=\"0s\"/></link>")),
            "");
}
