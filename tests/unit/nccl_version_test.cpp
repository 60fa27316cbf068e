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
  EXPECT_THROW(nccl_ring_defaults(3, false), std::out_of_range);
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
  for (const std::string bad : {"3.0", "2.x", "2.3", "2.29", "2.4a", "2"}) {
    const std::string e = version_error_of(scenario({{"nccl_version", bad}}));
    EXPECT_NE(e.find("/collective/nccl_version: expected an NCCL version 2.4 to 2.28"),
              std::string::npos)
        << bad << ": " << e;
  }
}
