// What changes with scale: ECMP over the spines of a fat tree, and rank placement. An ECMP
// collision on a tiny fabric slows the ring by exactly the load of its most loaded spine
// link (ideal network); placements are deterministic per seed; one spine is today's tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "run_cli.hpp"
#include "sim/analytic/platform_model.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A ring of 8 ranks on 4 nodes x 2 devices, 2 nodes per leaf, 4 spines, ranks dealt round
/// robin over the nodes (so every hop leaves its node); 10 Gb/s device links, 20 Gb/s node
/// links (two flows per node), spine links of 2 x 20 / 4 = 10 Gb/s.
std::vector<std::string> tiny_fabric(const std::string& ecmp_seed) {
  return {"collective", "--ranks",
          "8",          "--bytes",
          "64MB",       "--bandwidth",
          "20Gbps",     "--latency",
          "0us",        "--intra-bandwidth",
          "10Gbps",     "--intra-latency",
          "0us",        "--devices-per-node",
          "2",          "--network-model",
          "ideal",      "--topology",
          "fat_tree",   "--nodes-per-leaf",
          "2",          "--spines",
          "4",          "--ecmp-seed",
          ecmp_seed,    "--placement",
          "cyclic",     "--json"};
}

}  // namespace

TEST(Scale, EcmpCollisionSlowsTheRingByItsMostLoadedSpineLink) {
  // Cyclic placement: host of rank r is node r % 4, device r / 4 (host index 2 node + device).
  const std::vector<int> hosts = sgdsim::worker_host_indices(8, 2, 2, "cyclic", 4, 1);
  std::set<int> loads_seen;
  for (int seed = 1; seed <= 12; ++seed) {
    // Flows up (and down) each spine link: the ring's hops that cross the two leaves.
    std::map<std::tuple<int, int, bool>, int> load;
    for (int r = 0; r < 8; ++r) {
      const int a = hosts[r], b = hosts[(r + 1) % 8];
      const int la = a / 2 / 2, lb = b / 2 / 2;
      if (la == lb) continue;
      const int k = sgdsim::ecmp_spine(static_cast<uint64_t>(seed), a, b, 4);
      ++load[{la, k, true}];
      ++load[{lb, k, false}];
    }
    int most = 1;
    for (const auto& [link, n] : load) most = std::max(most, n);
    loads_seen.insert(most);
    CliResult r = run_sgdsim(tiny_fabric(std::to_string(seed)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Ring: 2(p-1)/p x bytes through every hop, at 1.25 GB/s shared by `most` flows.
    const double expected = 2.0 * 7 / 8 * 64e6 / (1.25e9 / most);
    EXPECT_NEAR(json::parse(r.out)["time_s"].get<double>(), expected, 1e-9 * expected)
        << "ecmp seed " << seed << ", most loaded spine link carries " << most;
  }
  // Some seeds collide (twice the time), some do not (the formula's time).
  EXPECT_EQ(loads_seen, (std::set<int>{1, 2}));
}

TEST(Scale, OneSpineIsTodaysFatTree) {
  auto xml = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "platform",           "--topology", "fat_tree",         "--nodes", "8",
        "--devices-per-node", "2",          "--nodes-per-leaf", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string today = xml({});
  EXPECT_EQ(xml({"--spines", "1", "--ecmp-seed", "7"}), today);
  EXPECT_EQ(today.find("spine"), std::string::npos);
  EXPECT_NE(xml({"--spines", "2"}).find("leaf-0-spine-1-link"), std::string::npos);
  // A run: the example fat tree with spines 1 and a placement of block is the same run.
  const std::vector<std::string> base = {"iterations=3", "warmup_iterations=1",
                                         "output.timeline=false"};
  std::vector<std::string> same = base;
  same.push_back("platform.generate.spines=1");
  same.push_back("workers.placement=block");
  const json a = run_scenario_summary("experiments/examples/01-resnet50-sync-fat-tree.json", base);
  const json b = run_scenario_summary("experiments/examples/01-resnet50-sync-fat-tree.json", same);
  json a_sim = a, b_sim = b;
  a_sim.erase("wall_time_s");
  b_sim.erase("wall_time_s");
  EXPECT_EQ(a_sim.dump(), b_sim.dump());
}

TEST(Scale, RandomPlacementIsDeterministicPerSeed) {
  // 6 nodes of 8 workers drawn from a 32-node cluster.
  const auto draw = [](uint64_t seed) {
    return sgdsim::worker_host_indices(48, 8, 8, "random", 32, seed);
  };
  EXPECT_EQ(draw(3), draw(3));
  std::set<std::vector<int>> distinct;
  bool beyond_first_six = false;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<int> h = draw(seed);
    distinct.insert(h);
    std::set<int> nodes;
    for (int w = 0; w < 48; ++w) {
      // A node's workers are consecutive and fill its devices in order.
      EXPECT_EQ(h[w] % 8, w % 8);
      EXPECT_EQ(h[w] / 8, h[w - w % 8] / 8);
      nodes.insert(h[w] / 8);
    }
    EXPECT_EQ(nodes.size(), 6u);
    beyond_first_six = beyond_first_six || *nodes.rbegin() >= 6;
  }
  EXPECT_EQ(distinct.size(), 8u);
  EXPECT_TRUE(beyond_first_six);
  // Through the CLI: one seed, one result, twice.
  auto run = [](const std::string& seed) {
    CliResult r = run_sgdsim(
        {"collective", "--ranks",          "16",    "--bytes",    "64MB",     "--bandwidth",
         "10Gbps",     "--network-model",  "ideal", "--topology", "fat_tree", "--nodes",
         "32",         "--nodes-per-leaf", "4",     "--spines",   "4",        "--placement",
         "random",     "--seed",           seed,    "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(run("5"), run("5"));
}

TEST(Scale, SpinesNeedFlowFidelity) {
  std::vector<std::string> args = tiny_fabric("1");
  args.insert(args.end(), {"--fidelity", "analytic"});
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--spines > 1 (ECMP hash collisions) needs --fidelity flow"),
            std::string::npos)
      << r.err;
}

namespace {

/// An allreduce of 64 MB between two nodes under two leaves joined by 4 spines: 10 Gb/s node
/// links, spine links of 10 / 4 = 2.5 Gb/s, ECMP per connection with `connections` (0: per pair).
std::vector<std::string> two_leaves(int seed, int connections) {
  return {"collective",
          "--ranks",
          "2",
          "--bytes",
          "64MB",
          "--bandwidth",
          "10Gbps",
          "--latency",
          "0us",
          "--network-model",
          "ideal",
          "--topology",
          "fat_tree",
          "--nodes-per-leaf",
          "1",
          "--spines",
          "4",
          "--ecmp-seed",
          std::to_string(seed),
          "--ecmp-connections",
          std::to_string(connections),
          "--json"};
}

}  // namespace

TEST(Scale, PerConnectionEcmpRunsAPairAtItsSlowestConnectionTimesItsConnections) {
  // 8 connections per direction, each hashed onto one of 4 spine links of 0.3125 GB/s: a
  // direction carries 8 x 0.3125 GB/s / (its most loaded spine's connections), at most the
  // 1.25 GB/s node link. The 2-rank ring (two rounds of 32 MB, each after the rank's previous
  // send and receive) takes 64 MB over the slower direction's rate.
  std::set<int> most_seen;
  for (int seed = 1; seed <= 12; ++seed) {
    double slowest = 1.25e9;
    for (auto [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
      const std::vector<int> counts =
          sgdsim::ecmp_connection_counts(static_cast<uint64_t>(seed), from, to, 8, 4);
      EXPECT_EQ(counts.size(), 4u);
      int sum = 0, most = 0;
      for (int c : counts) sum += c, most = std::max(most, c);
      EXPECT_EQ(sum, 8);
      most_seen.insert(most);
      slowest = std::min(slowest, 8 * 0.3125e9 / most);
    }
    CliResult r = run_sgdsim(two_leaves(seed, 8));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double expected = 64e6 / slowest;
    EXPECT_NEAR(json::parse(r.out)["time_s"].get<double>(), expected, 1e-9 * expected)
        << "ecmp seed " << seed;
    // Per host pair (0), all 8 connections take one spine link: four times the node link's time.
    CliResult pair = run_sgdsim(two_leaves(seed, 0));
    ASSERT_EQ(pair.exit_code, 0) << pair.err;
    EXPECT_NEAR(json::parse(pair.out)["time_s"].get<double>(), 64e6 / 0.3125e9, 1e-9);
  }
  // Some hashes spread the connections evenly (2 per spine, the node link binds), others not.
  EXPECT_TRUE(most_seen.count(2) == 1 && most_seen.size() >= 2);
}

TEST(Scale, PerConnectionEcmpIsOffByDefaultAndNeedsSpines) {
  auto xml = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"platform",         "--topology", "fat_tree", "--nodes", "4",
                                     "--nodes-per-leaf", "2",          "--spines", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string pair = xml({});
  EXPECT_EQ(xml({"--ecmp-connections", "0"}), pair);
  EXPECT_EQ(pair.find("symmetrical=\"NO\""), std::string::npos);
  const std::string conn = xml({"--ecmp-connections", "3"});
  // Both directions of each of the 4 pairs across the leaves have a route of their own, with
  // one spine link up and one down per connection.
  size_t routes = 0, ups = 0;
  for (size_t at = conn.find("symmetrical=\"NO\""); at != std::string::npos;
       at = conn.find("symmetrical=\"NO\"", at + 1)) {
    ++routes;
    const size_t end = conn.find("</route>", at);
    for (size_t k = conn.find("-spine-", at); k < end; k = conn.find("-spine-", k + 1))
      ups += conn.compare(conn.find("direction=\"", k) + 11, 2, "UP") == 0;
  }
  EXPECT_EQ(routes, 8u);
  EXPECT_EQ(ups, 8u * 3u);
  CliResult r = run_sgdsim({"platform", "--topology", "fat_tree", "--nodes", "4",
                            "--nodes-per-leaf", "2", "--ecmp-connections", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ecmp_connections: expected spines > 1"), std::string::npos) << r.err;
}
