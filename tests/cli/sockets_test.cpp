// NCCL over sockets: on 100 Gb/s Ethernet the library's streams, not the link, bound a large
// allreduce (nccl: 2 channels x 1 stream at 10 Gb/s), BytePS's pushes and pulls over ps-lite
// get one stream per server, flow and analytic fidelity agree, a scenario's node_link.sockets
// gives `predict` and `run` the same limit, and a pair's messages on one connection go in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;

namespace {
double allreduce_s(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"collective", "--ranks",         "4",       "--bytes",
                                   "1GB",        "--bandwidth",     "100Gbps", "--latency",
                                   "5us",        "--network-model", "links",   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out)["time_s"].get<double>() : 0.0;
}
}  // namespace

TEST(SocketsCli, NcclOverOneStreamIsFarSlowerThanInfiniBand) {
  const double ib = allreduce_s({"--technology", "rdma"});
  const double tcp = allreduce_s({"--technology", "tcp"});
  const double nccl = allreduce_s({"--sockets", "nccl"});
  const double aws = allreduce_s({"--sockets", "nccl-aws"});
  // Ring: 2 (P-1)/P x 1 GB at 20 Gb/s (2 channels x 10 Gb/s) = 600 ms, plus latencies.
  EXPECT_NEAR(nccl, 0.6, 0.002);
  EXPECT_GT(nccl, 4.5 * ib);
  EXPECT_GT(nccl, 4.5 * tcp);
  // 16 streams x 10 Gb/s per flow x 2 channels exceed the link: the link's payload rate binds.
  EXPECT_DOUBLE_EQ(aws, tcp);
  EXPECT_NEAR(allreduce_s({"--sockets", "gloo"}), 2 * nccl, 0.002);
}

TEST(SocketsCli, PsLitePushesAndPullsOverOneStreamPerServer) {
  // byteps on 4 one-GPU nodes, 1 GB in one partition: ps-lite's one ZMQ socket per peer moves
  // each push and pull at 10 Gb/s where TCP alone would take the 100 Gb/s link's payload rate.
  auto byteps_s = [](const std::string& servers, const std::vector<std::string>& sockets) {
    std::vector<std::string> args = {"--algorithm",  "byteps", "--partition-bytes",  "0",
                                     "--technology", "tcp",    "--server-placement", "dedicated",
                                     "--servers",    servers};
    args.insert(args.end(), sockets.begin(), sockets.end());
    return allreduce_s(args);
  };
  const double plain = byteps_s("1", {});
  const double one = byteps_s("1", {"--sockets", "ps-lite"});
  // One dedicated server: 4 pushes of 1 GB into its link at 10 Gb/s each (they share its
  // 94 Gb/s of payload: 23.5 each, so the stream binds), then 4 pulls: 2 x 1 GB / 1.25 GB/s.
  EXPECT_NEAR(one, 2 * 1e9 / 1.25e9, 0.002);
  EXPECT_GT(one, 2 * plain);  // 23.5 against 10 Gb/s a push
  EXPECT_NEAR(one, byteps_s("1", {"--sockets", "gloo"}), 1e-9 * one);  // one stream as Gloo
}

TEST(SocketsCli, FlowAndAnalyticAgree) {
  for (const std::string lib : {"nccl", "nccl-gcp", "mpi", "ps-lite"}) {
    const double flow = allreduce_s({"--sockets", lib});
    const double analytic = allreduce_s({"--sockets", lib, "--fidelity", "analytic"});
    EXPECT_NEAR(analytic, flow, 1e-6 * flow) << lib;
  }
  // NCCL's 2 channels as 2 concurrent rings: at flow fidelity each ring's messages are flows
  // of their own, which share the pair's 2 x 10 Gb/s (not 20 Gb/s each); as the closed form.
  const double flow2 = allreduce_s({"--sockets", "nccl", "--channels", "2"});
  EXPECT_NEAR(flow2, 0.6, 0.002);
  EXPECT_NEAR(allreduce_s({"--sockets", "nccl", "--channels", "2", "--fidelity", "analytic"}),
              flow2, 1e-6 * flow2);
}

TEST(SocketsCli, ScenarioChannelsShareThePairsStreamsAtFlowAsAtAnalytic) {
  // Example 02 on two nodes over 100 Gb/s TCP with NCCL 2.18 (2 channels, so 2 connections of
  // one 10 Gb/s socket between the nodes): the ring's two channel copies share those 20 Gb/s at
  // flow fidelity as in the closed form; a third and fourth connection make it faster.
  auto iteration_s = [](const std::string& fidelity, const std::string& sockets) {
    const json s = run_scenario_summary(
        "experiments/examples/02-minimal.json",
        {"workers.count=2", "iterations=3", "fidelity=" + fidelity,
         "collective.nccl_version=\"2.18\"", "platform.generate.node_link.technology=tcp",
         "platform.generate.node_link.bandwidth=100Gbps",
         "platform.generate.node_link.sockets=" + sockets});
    return s["iteration_time_s"]["mean"].get<double>();
  };
  const std::string nccl = R"({"library": "nccl"})";
  const double flow = iteration_s("flow", nccl);
  EXPECT_NEAR(iteration_s("analytic", nccl), flow, 1e-6 * flow);
  EXPECT_LT(iteration_s("flow", R"({"library": "nccl", "channels": 4})"), flow);
}

TEST(SocketsCli, BadSocketsOptionIsOneLineAndExit2) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--network-model", "links", "--sockets", "horovod"},
        {"--network-model", "links", "--technology", "rdma", "--sockets", "nccl"},
        {"--sockets", "nccl"}}) {
    std::vector<std::string> args = {"collective", "--ranks", "2", "--bytes", "1MB"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--sockets"), std::string::npos) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}

TEST(SocketsCli, ScenarioSocketsSlowPredictAndRunAlike) {
  const std::vector<std::string> set = {
      "--set", "workers.count=2",
      "--set", "platform.generate.node_link.technology=tcp",
      "--set", "platform.generate.node_link.sockets={\"library\": \"nccl\"}"};
  std::vector<std::string> p_args = {"predict", "experiments/examples/02-minimal.json", "--json"};
  p_args.insert(p_args.end(), set.begin(), set.end());
  CliResult p = run_sgdsim(p_args);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  CliResult plain = run_sgdsim(
      {"predict", "experiments/examples/02-minimal.json", "--json", "--set", "workers.count=2"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const double with_sockets = json::parse(p.out)["iteration_time_s"];
  const double without = json::parse(plain.out)["iteration_time_s"];
  EXPECT_GT(with_sockets, without);
  const auto out = temp_path("sockets-run");
  std::vector<std::string> r_args = {"run", "experiments/examples/02-minimal.json", "--out",
                                     out.string()};
  r_args.insert(r_args.end(), set.begin(), set.end());
  CliResult r = run_sgdsim(r_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double simulated = json::parse(slurp(out / "summary.json"))["iteration_time_s"]["mean"];
  EXPECT_NEAR(simulated, with_sockets, 1e-9 * with_sockets);
}

namespace {
/// Two hosts over a 1 GB/s link of 10 us whose `connection` property is `connection`, behind a
/// 100 MB/s stream limit (a FATPIPE link: each message capped by itself).
std::filesystem::path connection_platform(const std::string& connection) {
  const auto dir = temp_path("connection");
  std::filesystem::create_directories(dir);
  const auto f = dir / "p.xml";
  std::ofstream(f) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
                      "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
                      "<zone id=\"z\" routing=\"Full\">\n"
                      "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>\n"
                      "<link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\" "
                      "sharing_policy=\"SPLITDUPLEX\"><prop id=\"technology\" value=\"custom\"/>"
                      "<prop id=\"connection\" value=\""
                   << connection
                   << "\"/></link>\n<link id=\"s\" bandwidth=\"100MBps\" latency=\"0s\" "
                      "sharing_policy=\"FATPIPE\"><prop id=\"technology\" value=\"custom\"/>"
                      "</link>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\" direction=\"UP\"/>"
                      "<link_ctn id=\"s\"/></route>\n</zone>\n</platform>\n";
  return f;
}
}  // namespace

TEST(SocketsCli, OneConnectionPerPairSendsAPairsMessagesInOrder) {
  // A 2-rank ring of 100 MB as 2 channels: per step each rank sends two 25 MB messages (one a
  // channel) to the other. As flows of their own each gets the 100 MB/s stream: 2 steps of
  // 10 us + 0.25 s. On one connection they go in order, each at 100 MB/s and paying the 10 us:
  // the 4 messages a direction take 4 x (10 us + 0.25 s).
  auto ring_s = [](const std::string& connection) {
    CliResult r =
        run_sgdsim({"collective", "--algorithm", "ring", "--ranks", "2", "--bytes", "100MB",
                    "--channels", "2", "--platform", connection_platform(connection).string(),
                    "--network-model", "links", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out)["time_s"].get<double>() : 0.0;
  };
  EXPECT_NEAR(ring_s("per_message"), 2 * (10e-6 + 0.25), 1e-9);
  EXPECT_NEAR(ring_s("per_pair"), 4 * (10e-6 + 0.25), 1e-9);
}

TEST(SocketsCli, ParameterServerPushesShareTheirPairsConnection) {
  // BytePS on 2 one-GPU nodes with co-located servers over 100 Gb/s TCP and ps-lite, ResNet-50's
  // per-layer tensors with no overlap: the tensors' pushes between the two nodes share one ZMQ
  // socket (10 Gb/s), so a node's half of the 102 MB of gradients crosses at 1.25 GB/s at best,
  // where as flows of their own they took the link's 94 Gb/s.
  auto iteration_s = [](const std::string& library) {
    const json s = run_scenario_summary(
        "experiments/byteps/resnet50-per-layer-10gbe.json",
        {"workers.count=2", "platform.generate.nodes=2", "iterations=3", "warmup_iterations=1",
         "scheme.overlap=none", "platform.generate.node_link.bandwidth=100Gbps",
         "platform.generate.node_link.sockets={\"library\": \"" + library + "\"}"});
    return std::pair{s["iteration_time_s"]["mean"].get<double>(),
                     s["compute_s_per_iter"].get<double>()};
  };
  const auto [ps_lite, compute] = iteration_s("ps-lite");
  const double half_bytes = 102228128.0 / 2;
  EXPECT_GT(ps_lite - compute, half_bytes / 1.25e9);
  // A node's server pulls to the other node on a connection of its own, beside its worker's
  // pushes: on the worker's they would add their half of the bytes to the same stream.
  EXPECT_LT(ps_lite - compute, 2 * half_bytes / 1.25e9);
  // NCCL's library opens a connection per channel: its messages stay flows of their own.
  const auto [nccl, nccl_compute] = iteration_s("nccl");
  EXPECT_LT(nccl - nccl_compute, 0.5 * (ps_lite - compute));
}
