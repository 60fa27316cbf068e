#include <gtest/gtest.h>

#include "sim/analytic/platform_model.hpp"

using namespace sgdsim;

namespace {
GeneratedPlatform tree() {
  GeneratedPlatform g;
  g.topology = "fat_tree";
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
  t.topology = "torus";
  t.torus_dims = {3, 4};
  EXPECT_NE(PlatformModel(t).xml().find("topology=\"TORUS\" topo_parameters=\"3,4\""),
            std::string::npos);
  EXPECT_THROW(PlatformModel(t).route(0, 1), std::invalid_argument);
  GeneratedPlatform d = star_for_alpha_beta(16, 1e9, 2e-6);
  d.topology = "dragonfly";
  d.dragonfly = {2, 2, 2, 2, 1, 1, 1};
  EXPECT_NE(PlatformModel(d).xml().find("topo_parameters=\"2,1;2,1;2,1;2\""), std::string::npos);
}
