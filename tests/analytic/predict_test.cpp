// sgdsim predict's contention-free model, tested without SimGrid: this binary links
// sim/analytic and the layers below it only (Repo.AnalyticTestsLinkNoSimGrid checks).
#include "sim/analytic/predict.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/core/errors.hpp"
#include "sim/workload/workload.hpp"

using nlohmann::json;
using namespace sgdsim;

namespace {

/// Everything predict needs for `j` (a scenario on a generated platform).
struct Built {
  Scenario scenario;
  Workload workload;
  std::unique_ptr<Scheme> scheme;
  std::optional<PlatformModel> platform;
  PredictInput input;
};

std::unique_ptr<Built> build(json j) {
  auto b = std::make_unique<Built>();
  b->scenario = parse_scenario(j, "predict.json");
  b->workload = load_workload(b->scenario);
  b->scheme = make_scheme({&b->scenario, &b->workload});
  const Scenario& s = b->scenario;
  if (s.platform.generate) b->platform.emplace(*s.platform.generate);
  b->input = {&b->scenario,
              b->scheme.get(),
              &collective_by_name(s.collective),
              collective_group(s),
              b->platform ? &*b->platform : nullptr,
              {}};
  for (int w = 0; w < s.workers; ++w)
    b->input.worker_host.push_back(
        s.platform.generate ? worker_host_index(w, s.workers, s.workers_per_node,
                                                s.platform.generate->devices_per_node, s.placement)
                            : w);
  return b;
}

json star(int workers, const std::string& network_model) {
  return {
      {"model", "resnet50"},
      {"workers", {{"count", workers}}},
      {"iterations", 6},
      {"warmup_iterations", 1},
      {"network_model", network_model},
      {"platform",
       {{"generate",
         {{"topology", "star"}, {"node_link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}}}}};
}

}  // namespace

TEST(Predict, SyncWithoutOverlapIsComputeThenOneRingThenUpdate) {
  json j = star(8, "ideal");
  j["scheme"] = {{"type", "sync"}, {"overlap", "none"}, {"fusion_bytes", "1GB"}};
  auto b = build(j);
  ASSERT_EQ(b->workload.buckets.size(), 1u);
  const Prediction p = predict(b->input);
  // An idle star: two 5 us links per route, 10 Gb/s.
  const double ring = collective_by_name("ring").formula_s(8, b->workload.gradient_bytes,
                                                           AlphaBeta{10e-6, 8 / 10e9, 0});
  const double expected =
      b->workload.forward_s + b->workload.backward_s + ring + b->workload.update_s;
  EXPECT_NEAR(p.iteration_time_s, expected, 1e-9 * expected);
  EXPECT_NEAR(p.comm_s, ring, 1e-9 * ring);
  EXPECT_NEAR(p.compute_s, b->workload.forward_s + b->workload.backward_s, 1e-12);
}

TEST(Predict, WfbpHidesCommunicationBehindTheBackwardPass) {
  json j = star(8, "ideal");
  j["scheme"] = {{"type", "sync"}, {"overlap", "none"}};
  const double serial = predict(build(j)->input).iteration_time_s;
  j["scheme"]["overlap"] = "wfbp";
  auto b = build(j);
  const Prediction overlapped = predict(b->input);
  EXPECT_LT(overlapped.iteration_time_s, serial);
  EXPECT_GE(overlapped.iteration_time_s, overlapped.compute_s + b->workload.update_s);
  EXPECT_NEAR(serial, overlapped.compute_s + overlapped.comm_s + b->workload.update_s,
              1e-9 * serial);
}

TEST(Predict, Lv08PaysSimGridsDefaultFactors) {
  auto b = build(star(2, "default"));
  const std::vector<int> hosts = {0, 1};
  const double bytes = 1e6;
  const double t = predict_collective_s(collective_by_name("ring"), CollectiveGroup{2},
                                        *b->platform, hosts, bytes, NetworkModel::lv08, 0);
  // Two steps of half the buffer; the window caps 10 Gb/s at 4 MiB / (2 x 13.01 x 10 us).
  const double lat = 10e-6 * kLv08LatencyFactor;
  const double bw = std::min(10e9 / 8 * kLv08BandwidthFactor, kLv08TcpWindowBytes / (2 * lat));
  EXPECT_NEAR(t, 2 * (lat + bytes / 2 / bw), 1e-12);
}

TEST(Predict, RouteCostsSeparateNodesFromDevices) {
  json j = star(8, "ideal");
  j["platform"]["generate"]["devices_per_node"] = 4;
  j["platform"]["generate"]["intra_node_link"] = {{"bandwidth", "16GBps"}, {"latency", "1us"}};
  auto b = build(j);
  const NetworkCost c =
      route_network_cost(*b->platform, b->input.worker_host, 4, NetworkModel::ideal, 0);
  EXPECT_NEAR(c.intra.alpha_s, 2e-6, 1e-15);          // device - node switch - device
  EXPECT_NEAR(c.inter.alpha_s, 2e-6 + 10e-6, 1e-15);  // + NIC - star switch - NIC
  EXPECT_NEAR(c.inter.beta_s_per_byte, 8 / 10e9, 1e-21);
}

TEST(Predict, RefusesPlatformFiles) {
  auto b = build({{"model", "resnet50"},
                  {"workers", {{"count", 2}}},
                  {"device", {{"speed", "10Tf"}}},
                  {"platform", {{"file", "platforms/bcaffe-k80-10gbe.xml"}}}});
  ASSERT_EQ(b->input.platform, nullptr);
  EXPECT_THROW(predict(b->input), InputError);
}
