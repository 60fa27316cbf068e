// The socket model of a tcp node link: streams per library (NCCL's autodetect, Gloo, MPI), the
// per-stream goodput and cloud flow cap, the per-message limit they set, which libraries share
// one connection per pair of hosts, and bad input.
#include <gtest/gtest.h>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/transport.hpp"
#include "tests/unit/scenario_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {
constexpr double kGbps = 1e9 / 8;

json with_node_link(const json& node_link) {
  json j = json::parse(R"({"model": "mlp", "workers": {"count": 4}})");
  j["platform"]["generate"]["node_link"] = node_link;
  return j;
}

json tcp_link(const json& sockets) {
  json l = {{"bandwidth", "100Gbps"}, {"latency", "5us"}, {"technology", "tcp"}};
  if (!sockets.is_null()) l["sockets"] = sockets;
  return l;
}

double stream_limit_Bps(const json& node_link) {
  Scenario s = parse_scenario(with_node_link(node_link), "s.json");
  return s.platform.generate->node_link.transport.stream_bandwidth_Bps;
}

std::string error_of(const json& node_link) {
  return test::scenario_error(with_node_link(node_link));
}
}  // namespace

TEST(Sockets, StreamsPerLibraryFollowNcclGlooAndMpi) {
  EXPECT_EQ(socket_streams(socket_defaults("nccl")), 1);       // no helper thread: one socket
  EXPECT_EQ(socket_streams(socket_defaults("nccl-aws")), 16);  // 2 threads x 8 sockets
  EXPECT_EQ(socket_streams(socket_defaults("nccl-gcp")), 4);   // 4 threads x 1 socket
  EXPECT_EQ(socket_streams(socket_defaults("gloo")), 1);
  EXPECT_EQ(socket_streams(socket_defaults("mpi")), 1);
  EXPECT_EQ(socket_streams(socket_defaults("ps-lite")), 1);  // one ZMQ socket per peer
  EXPECT_EQ(socket_defaults("ps-lite").channels, 1);
  EXPECT_EQ(socket_streams(socket_defaults("grpc")), 1);  // one channel per remote task
  EXPECT_EQ(socket_defaults("nccl").channels, 2);
  EXPECT_EQ(socket_defaults("gloo").channels, 1);
  EXPECT_THROW(socket_defaults("horovod"), std::out_of_range);
  // NCCL's limits: 16 threads, 64 sockets (sockets per thread cut to 64 / threads).
  SocketParams many = socket_defaults("nccl");
  many.threads = 16;
  many.sockets_per_thread = 8;
  EXPECT_EQ(socket_streams(many), 64);
  many.threads = 3;
  many.sockets_per_thread = 30;
  EXPECT_EQ(socket_streams(many), 63);
}

TEST(Sockets, RateIsChannelsTimesStreamsTimesTheSlowerOfGoodputAndFlowCap) {
  const double g = kDefaultStreamGoodput_Bps;
  EXPECT_DOUBLE_EQ(g, 10 * kGbps);
  EXPECT_DOUBLE_EQ(socket_peer_Bps(socket_defaults("nccl"), g), 20 * kGbps);
  EXPECT_DOUBLE_EQ(socket_peer_Bps(socket_defaults("nccl-gcp"), g), 80 * kGbps);
  EXPECT_DOUBLE_EQ(socket_peer_Bps(socket_defaults("gloo"), g), 10 * kGbps);
  // AWS: 10 Gb/s per flow in a placement group binds a faster stream.
  EXPECT_DOUBLE_EQ(socket_connection_Bps(socket_defaults("nccl-aws"), 25 * kGbps), 160 * kGbps);
  EXPECT_DOUBLE_EQ(socket_connection_Bps(socket_defaults("nccl-aws"), 4 * kGbps), 64 * kGbps);
}

TEST(Sockets, NodeLinkSocketsSetThePerMessageLimit) {
  EXPECT_EQ(stream_limit_Bps(tcp_link(json())), 0.0);  // opt-in: no sockets, no limit
  EXPECT_DOUBLE_EQ(stream_limit_Bps(tcp_link({{"library", "nccl"}})), 20 * kGbps);
  EXPECT_DOUBLE_EQ(stream_limit_Bps(tcp_link({{"library", "nccl"}, {"threads", 4}})), 80 * kGbps);
  EXPECT_DOUBLE_EQ(stream_limit_Bps(tcp_link({{"library", "nccl-aws"}, {"flow_cap", "5Gbps"}})),
                   160 * kGbps);
  EXPECT_DOUBLE_EQ(
      stream_limit_Bps(tcp_link({{"library", "mpi"}, {"sockets_per_thread", 1}, {"threads", 2}})),
      20 * kGbps);
  json slow = tcp_link({{"library", "gloo"}});
  slow["stream_goodput"] = "3Gbps";
  EXPECT_DOUBLE_EQ(stream_limit_Bps(slow), 3 * kGbps);
  slow["stream_bandwidth"] = "2Gbps";  // the smaller limit wins
  EXPECT_DOUBLE_EQ(stream_limit_Bps(slow), 2 * kGbps);
}

TEST(Sockets, OneSocketLibrariesShareAConnectionPerPairNcclsDoNot) {
  auto per_pair = [](const char* library) {
    Scenario s = parse_scenario(with_node_link(tcp_link({{"library", library}})), "s.json");
    return s.platform.generate->node_link.transport.connection_per_pair;
  };
  for (const char* one : {"gloo", "mpi", "ps-lite", "grpc"}) EXPECT_TRUE(per_pair(one)) << one;
  // NCCL: a connection per channel and peer, and a ring keeps each channel's messages in order.
  for (const char* nccl : {"nccl", "nccl-aws", "nccl-gcp"}) EXPECT_FALSE(per_pair(nccl)) << nccl;
  Scenario plain = parse_scenario(with_node_link(tcp_link(json())), "s.json");
  EXPECT_FALSE(plain.platform.generate->node_link.transport.connection_per_pair);
}

TEST(Sockets, ResolvedScenarioRecordsTheLibraryDefaults) {
  Scenario s = parse_scenario(with_node_link(tcp_link({{"library", "nccl-aws"}})), "s.json");
  const json& l = s.resolved["platform"]["generate"]["node_link"];
  EXPECT_EQ(l["stream_goodput"], "1250000000Bps");  // 10 Gb/s
  EXPECT_EQ(l["sockets"]["threads"], 2);
  EXPECT_EQ(l["sockets"]["sockets_per_thread"], 8);
  EXPECT_EQ(l["sockets"]["channels"], 2);
  EXPECT_EQ(l["sockets"]["flow_cap"], "1250000000Bps");
  Scenario plain = parse_scenario(with_node_link(tcp_link(json())), "s.json");
  EXPECT_FALSE(plain.resolved["platform"]["generate"]["node_link"].contains("stream_goodput"));
}

TEST(Sockets, BadInputNamesPointerAndExpectation) {
  EXPECT_EQ(
      error_of(tcp_link({{"library", "horovod"}})),
      "s.json: /platform/generate/node_link/sockets/library: expected one of \"nccl\", "
      "\"nccl-aws\", \"nccl-gcp\", \"gloo\", \"mpi\", \"ps-lite\" or \"grpc\", got \"horovod\"");
  EXPECT_EQ(error_of(tcp_link({{"library", "nccl"}, {"threads", -1}})),
            "s.json: /platform/generate/node_link/sockets/threads: expected an integer >= 0, "
            "got -1");
  EXPECT_EQ(error_of(tcp_link({{"library", "nccl"}, {"threads", 17}})),
            "s.json: /platform/generate/node_link/sockets/threads: expected an integer <= 16, "
            "got 17");
  EXPECT_NE(error_of(tcp_link({{"library", "nccl"}, {"thread", 2}}))
                .find("/platform/generate/node_link/sockets/thread: unknown key"),
            std::string::npos);
  json rdma = tcp_link({{"library", "nccl"}});
  rdma["technology"] = "rdma";
  EXPECT_NE(error_of(rdma).find("/platform/generate/node_link/sockets: expected no `sockets` on "
                                "a rdma link"),
            std::string::npos)
      << error_of(rdma);
  json alone = tcp_link(json());
  alone["stream_goodput"] = "5Gbps";
  EXPECT_NE(error_of(alone).find("/platform/generate/node_link/stream_goodput: expected a "
                                 "`sockets` object beside it"),
            std::string::npos)
      << error_of(alone);
  json intra = tcp_link(json());
  intra["sockets"] = {{"library", "nccl"}};
  json j = with_node_link(tcp_link(json()));
  j["platform"]["generate"]["intra_node_link"] = intra;
  EXPECT_THROW(parse_scenario(j, "s.json"), InputError);
}
