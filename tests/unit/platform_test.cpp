#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/analytic/platform_model.hpp"

using namespace sgdsim;

namespace {
GeneratedPlatform tree() {
  GeneratedPlatform g;
  g.topology = Topology::fat_tree;
  g.nodes = 8;
  g.devices_per_node = 2;
  g.node_link = {1e9, 2e-6, {}};
  g.intra_node_link = {4e9, 1e-6, {}};
  g.device_speed_flops = 1e12;
  g.nodes_per_leaf = 4;
  g.oversubscription = 2;
  return g;
}
}  // namespace

TEST(Platform, RouteCostsFollowTheTopology) {
  PlatformModel p(tree());
  EXPECT_EQ(p.num_hosts(), 16);
  RouteCost same_node = p.route(0, 1);
  EXPECT_DOUBLE_EQ(same_node.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(same_node.bandwidth_Bps, 4e9);
  RouteCost same_leaf = p.route(0, 2);
  EXPECT_DOUBLE_EQ(same_leaf.latency_s, 2e-6 + 4e-6);
  EXPECT_DOUBLE_EQ(same_leaf.bandwidth_Bps, 1e9);
  RouteCost cross = p.route(0, 15);
  EXPECT_DOUBLE_EQ(cross.latency_s, 2e-6 + 4e-6 + 4e-6);
  EXPECT_DOUBLE_EQ(p.uplink_bandwidth_Bps(), 4 * 1e9 / 2);
}

TEST(Platform, XmlNamesEveryHostAndLink) {
  PlatformModel p(tree());
  std::string xml = p.xml();
  for (int h = 0; h < p.num_hosts(); ++h)
    EXPECT_NE(xml.find("<host id=\"" + p.host_name(h) + "\""), std::string::npos);
  EXPECT_NE(xml.find("leaf-1-uplink"), std::string::npos);
  EXPECT_NE(xml.find("bandwidth=\"2000000000Bps\""), std::string::npos);
}

TEST(Platform, StarForAlphaBetaHasExactRoute) {
  PlatformModel p(star_for_alpha_beta(5, 1.25e9, 3e-6));
  RouteCost r = p.route(1, 4);
  EXPECT_DOUBLE_EQ(r.latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(r.bandwidth_Bps, 1.25e9);
  EXPECT_EQ(p.host_name(3), "node-3");
}

TEST(Platform, Placement) {
  // 6 workers, 2 per node on 4-device nodes: block fills node 0 first.
  EXPECT_EQ(worker_host_index(0, 6, 2, 4, "block"), 0);
  EXPECT_EQ(worker_host_index(1, 6, 2, 4, "block"), 1);
  EXPECT_EQ(worker_host_index(2, 6, 2, 4, "block"), 4);
  // cyclic deals workers round-robin over the 3 nodes in use.
  EXPECT_EQ(worker_host_index(1, 6, 2, 4, "cyclic"), 4);
  EXPECT_EQ(worker_host_index(3, 6, 2, 4, "cyclic"), 1);
}

TEST(Platform, SingleDeviceStarIsAFlatClusterAndTorusUsesSimGridTopology) {
  PlatformModel star(star_for_alpha_beta(4, 1e9, 2e-6));
  EXPECT_NE(star.xml().find("<cluster id=\"star\" prefix=\"node-\" suffix=\"\" radical=\"0-3\""),
            std::string::npos);
  EXPECT_NE(star.xml().find("lat=\"1e-06s\""), std::string::npos);  // half the route latency
  GeneratedPlatform t = star_for_alpha_beta(12, 1e9, 2e-6);
  t.topology = Topology::torus;
  t.torus_dims = {3, 4};
  EXPECT_NE(PlatformModel(t).xml().find("topology=\"TORUS\" topo_parameters=\"3,4\""),
            std::string::npos);
  EXPECT_THROW(PlatformModel(t).route(0, 1), std::invalid_argument);
  GeneratedPlatform d = star_for_alpha_beta(16, 1e9, 2e-6);
  d.topology = Topology::dragonfly;
  d.dragonfly = {2, 2, 2, 2, 1, 1, 1};
  EXPECT_NE(PlatformModel(d).xml().find("topo_parameters=\"2,1;2,1;2,1;2\""), std::string::npos);
}

TEST(Platform, SpinesSplitTheUplinkAndEcmpPicksOnePerHostPair) {
  GeneratedPlatform g = tree();
  g.spines = 4;
  g.ecmp_seed = 9;
  PlatformModel p(g);
  ASSERT_TRUE(p.ecmp());
  EXPECT_DOUBLE_EQ(p.spine_link_bandwidth_Bps(), 4 * 1e9 / 2 / 4);
  // A route between leaves: node links, then its spine's two links at a quarter of the uplink.
  EXPECT_DOUBLE_EQ(p.route(0, 15).bandwidth_Bps, 0.5e9);
  EXPECT_DOUBLE_EQ(p.route(0, 2).bandwidth_Bps, 1e9);
  EXPECT_EQ(p.spine_of(0, 2), -1);
  const std::string xml = p.xml();
  int routes = 0;
  for (size_t at = xml.find("<route "); at != std::string::npos; at = xml.find("<route ", at + 1))
    ++routes;
  EXPECT_EQ(routes, 16 * 15 / 2);  // one per host pair
  std::set<int> spines;
  for (int a = 0; a < 8; ++a)
    for (int b = 8; b < 16; ++b) {
      const int k = p.spine_of(a, b);
      EXPECT_EQ(k, p.spine_of(b, a));
      EXPECT_EQ(k, ecmp_spine(9, a, b, 4));
      EXPECT_NE(xml.find("leaf-" + std::to_string(p.leaf_of(a)) + "-spine-" + std::to_string(k)),
                std::string::npos);
      spines.insert(k);
    }
  EXPECT_EQ(spines.size(), 4u);  // 64 pairs use every spine
  // Another seed, other choices; one spine is the zoned tree of before.
  int moved = 0;
  for (int b = 8; b < 16; ++b) moved += ecmp_spine(9, 0, b, 4) != ecmp_spine(10, 0, b, 4);
  EXPECT_GT(moved, 0);
  g.spines = 1;
  EXPECT_EQ(PlatformModel(g).xml(), PlatformModel(tree()).xml());
}
