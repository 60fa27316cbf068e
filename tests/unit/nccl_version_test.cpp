// `collective.nccl_version`: NCCL's ring chunk and channel count as the defaults of
// `chunk_bytes` and `channels`, opt-in, overridden by explicit values.
#include <gtest/gtest.h>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/transport.hpp"
#include "tests/unit/scenario_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {
constexpr double kTwoMiB = 2 * 1024 * 1024;

/// Two nodes of `per_node` GPUs linked by `intra` inside a node; `collective` as given.
json scenario(const json& collective, const std::string& intra = "nvlink", int per_node = 8) {
  json j = json::parse(R"({"model": "mlp"})");
  j["workers"] = {{"count", 2 * per_node}, {"per_node", per_node}};
  j["platform"]["generate"]["intra_node_link"] = {
      {"bandwidth", "150GBps"}, {"latency", "1us"}, {"technology", intra}};
  j["collective"] = collective;
  return j;
}

Scenario parse_version(const json& j) {
  return parse_scenario(j, "s.json");
}

std::string version_error_of(const json& j) {
  return test::scenario_error(j);
}
}  // namespace

TEST(NcclVersion, RingDefaultsFollowNcclsSource) {
  EXPECT_DOUBLE_EQ(nccl_ring_defaults(4, false).chunk_bytes, kTwoMiB);
  EXPECT_EQ(nccl_ring_defaults(4, false).channels, 1);  // 2.4: rings doubled only ...
  EXPECT_EQ(nccl_ring_defaults(4, true).channels, 2);   // ... on several nodes with NVLink
  for (int minor : {5, 7, 12, 18, 23, 28}) {
    EXPECT_DOUBLE_EQ(nccl_ring_defaults(minor, false).chunk_bytes, kTwoMiB) << minor;
    EXPECT_EQ(nccl_ring_defaults(minor, false).channels, 2) << minor;
  }
  // 2.3: the same 2 MiB slices, one ring per NIC, never doubled (not even across NVLink nodes).
  EXPECT_DOUBLE_EQ(nccl_ring_defaults(3, true).chunk_bytes, kTwoMiB);
  EXPECT_EQ(nccl_ring_defaults(3, true).channels, 1);
  EXPECT_THROW(nccl_ring_defaults(2, false), std::out_of_range);
  EXPECT_THROW(nccl_ring_defaults(29, false), std::out_of_range);
}

TEST(NcclVersion, SetsChunkAndChannelsUnlessGiven) {
  Scenario dgx = parse_version(scenario({{"nccl_version", "2.4"}}));
  EXPECT_DOUBLE_EQ(dgx.chunk_bytes, kTwoMiB);
  EXPECT_EQ(dgx.collective_channels, 2);
  EXPECT_EQ(dgx.resolved["collective"]["chunk_bytes"], 2097152);
  EXPECT_EQ(dgx.resolved["collective"]["channels"], 2);
  EXPECT_EQ(parse_version(scenario({{"nccl_version", "2.4"}}, "pcie", 4)).collective_channels, 1);
  EXPECT_EQ(parse_version(scenario({{"nccl_version", "2.18.3-1"}}, "pcie", 4)).collective_channels,
            2);
  Scenario own =
      parse_version(scenario({{"nccl_version", "2.12"}, {"channels", 4}, {"chunk_bytes", 0}}));
  EXPECT_EQ(own.collective_channels, 4);
  EXPECT_DOUBLE_EQ(own.chunk_bytes, 0);
  // Opt-in: without it the defaults stay messages whole on one channel.
  Scenario plain = parse_version(scenario(json::object()));
  EXPECT_DOUBLE_EQ(plain.chunk_bytes, 0);
  EXPECT_EQ(plain.collective_channels, 1);
  EXPECT_FALSE(plain.resolved["collective"].contains("nccl_version"));
}

TEST(NcclVersion, BadVersionNamesTheField) {
  for (const std::string bad : {"3.0", "2.x", "2.2", "2.29", "2.4a", "2"}) {
    const std::string e = version_error_of(scenario({{"nccl_version", bad}}));
    EXPECT_NE(e.find("/collective/nccl_version: expected an NCCL version 2.3 to 2.28"),
              std::string::npos)
        << bad << ": " << e;
  }
}

TEST(NcclVersion, AlgorithmsNewerThanTheVersionAreRefused) {
  // NCCL 2.3 has rings only: its ring runs, NCCL's tree choice (2.4) and NVLS (2.17) do not.
  EXPECT_EQ(
      parse_version(scenario({{"algorithm", "ring"}, {"nccl_version", "2.3"}})).collective_channels,
      1);
  for (const std::string algorithm : {"nccl", "nccl_tuner", "double_binary_tree"}) {
    const std::string e =
        version_error_of(scenario({{"algorithm", algorithm}, {"nccl_version", "2.3"}}));
    EXPECT_NE(e.find("/collective/nccl_version: expected 2.4 or later"), std::string::npos)
        << algorithm << ": " << e;
  }
  EXPECT_NO_THROW(parse_version(scenario({{"algorithm", "nccl"}, {"nccl_version", "2.4"}})));
}

TEST(NcclVersion, NcclSocketsOpenAConnectionPerChannel) {
  // Two nodes of 4 PCIe GPUs over 100 Gb/s TCP, NCCL's sockets (one stream a connection, 10
  // Gb/s each): NCCL 2.4 runs one ring there, 2.18 two, so one or two streams between peers.
  auto tcp = [](const json& collective, const json& sockets) {
    json j = scenario(collective, "pcie", 4);
    j["platform"]["generate"]["node_link"] = {
        {"bandwidth", "100Gbps"}, {"latency", "5us"}, {"technology", "tcp"}, {"sockets", sockets}};
    return parse_version(j);
  };
  const json nccl = {{"library", "nccl"}};
  const Scenario v24 = tcp({{"nccl_version", "2.4"}}, nccl);
  EXPECT_DOUBLE_EQ(v24.platform.generate->node_link.transport.stream_bandwidth_Bps, 10e9 / 8);
  EXPECT_EQ(v24.resolved["platform"]["generate"]["node_link"]["sockets"]["channels"], 1);
  const Scenario v218 = tcp({{"nccl_version", "2.18"}}, nccl);
  EXPECT_DOUBLE_EQ(v218.platform.generate->node_link.transport.stream_bandwidth_Bps, 2 * 10e9 / 8);
  // The run's own channel count, and an explicit count of connections, win.
  EXPECT_DOUBLE_EQ(tcp({{"nccl_version", "2.4"}, {"channels", 4}}, nccl)
                       .platform.generate->node_link.transport.stream_bandwidth_Bps,
                   4 * 10e9 / 8);
  EXPECT_DOUBLE_EQ(tcp({{"nccl_version", "2.4"}}, {{"library", "nccl"}, {"channels", 3}})
                       .platform.generate->node_link.transport.stream_bandwidth_Bps,
                   3 * 10e9 / 8);
  // Other libraries keep theirs; without nccl_version NCCL's sockets keep 2 channels.
  EXPECT_DOUBLE_EQ(tcp({{"nccl_version", "2.18"}}, {{"library", "gloo"}})
                       .platform.generate->node_link.transport.stream_bandwidth_Bps,
                   10e9 / 8);
  EXPECT_DOUBLE_EQ(
      tcp(json::object(), nccl).platform.generate->node_link.transport.stream_bandwidth_Bps,
      2 * 10e9 / 8);
}
