#include "sim/workload/workload.hpp"

#include <gtest/gtest.h>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"

using namespace sgdsim;

namespace {
std::vector<LayerCost> layers(std::vector<double> bytes) {
  std::vector<LayerCost> out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string name = "l";
    name += std::to_string(i);  // not "l" + ...: GCC 12 reports a false -Wrestrict there
    out.push_back({name, 1.0, 2.0 * (i + 1), bytes[i]});
  }
  return out;
}

/// A measured profile of two layers at batch `batch`: a (forward 10 ms, backward 20 ms) and b
/// (30 ms, 40 ms), with `params_a` and `params_b` parameters.
Profile two_layer_profile(int batch, int64_t params_a, int64_t params_b) {
  Profile p;
  p.name = "m";
  p.measured = true;
  p.batch_size = batch;
  p.layers = {{"a", params_a, 0.010, 0.020, 0, 0}, {"b", params_b, 0.030, 0.040, 0, 0}};
  return p;
}
}  // namespace

TEST(Buckets, PerLayerWhenFusionIsZero) {
  auto b = make_buckets(layers({10, 0, 20, 30}), 0);
  ASSERT_EQ(b.size(), 3u);
  // Backward order: layer 3 first; the parameter-free layer 1 joins the bucket of layer 0.
  EXPECT_EQ(b[0].first_layer, 3);
  EXPECT_DOUBLE_EQ(b[0].bytes, 30);
  EXPECT_EQ(b[1].first_layer, 2);
  EXPECT_EQ(b[2].first_layer, 0);
  EXPECT_EQ(b[2].last_layer, 1);
  EXPECT_DOUBLE_EQ(b[2].backward_s, 2.0 + 4.0);
}

TEST(Buckets, FusionClosesAtThreshold) {
  auto b = make_buckets(layers({10, 10, 10, 10, 10}), 25);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_DOUBLE_EQ(b[0].bytes, 30);  // layers 4, 3, 2
  EXPECT_DOUBLE_EQ(b[1].bytes, 20);  // layers 1, 0
  double total = 0;
  for (const auto& x : b) total += x.backward_s;
  EXPECT_DOUBLE_EQ(total, 2 + 4 + 6 + 8 + 10);
}

TEST(Buckets, FirstBucketHasItsOwnCap) {
  // PyTorch DDP: a small first bucket so that the first allreduce starts early.
  auto b = make_buckets(layers({10, 10, 10, 10, 10}), 25, 5);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_DOUBLE_EQ(b[0].bytes, 10);                                         // layer 4 alone
  EXPECT_DOUBLE_EQ(b[1].bytes, 30);                                         // layers 3, 2, 1
  EXPECT_DOUBLE_EQ(b[2].bytes, 10);                                         // layer 0
  EXPECT_EQ(make_buckets(layers({10, 10, 10, 10, 10}), 25, 0).size(), 2u);  // 0: fusion_bytes
  EXPECT_EQ(make_buckets(layers({10, 10, 10}), 0, 15).size(), 2u);  // 20, then one per layer
}

TEST(Buckets, TrailingParameterFreeLayersJoinTheLastBucket) {
  auto b = make_buckets(layers({0, 0, 10}), 0);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].first_layer, 0);
  EXPECT_DOUBLE_EQ(b[0].backward_s, 2 + 4 + 6);
}

TEST(Workload, MeasuredTimesScaleWithBatch) {
  const Profile p = two_layer_profile(128, 100, 50);
  Scenario s =
      parse_scenario(nlohmann::json::parse(R"({"model": "mlp", "batch_size": 64})"), "s.json");
  Workload w = build_workload(s, p, 1e12);
  EXPECT_DOUBLE_EQ(w.forward_s, 0.020);
  EXPECT_DOUBLE_EQ(w.backward_s, 0.030);
  EXPECT_DOUBLE_EQ(w.gradient_bytes, 600);
  EXPECT_DOUBLE_EQ(w.update_s, 150 * kUpdateFlopsPerParameter / 1e12);
}

TEST(Workload, FlopProfilesUseSpeedTimesEfficiency) {
  Profile p;
  p.name = "f";
  p.layers = {{"a", 10, 0, 0, 1e9, 2e9}};
  Scenario s = parse_scenario(
      nlohmann::json::parse(R"({"model": "mlp", "batch_size": 10, "device": {"efficiency": 0.5}})"),
      "s.json");
  Workload w = build_workload(s, p, 1e12);
  EXPECT_DOUBLE_EQ(w.forward_s, 1e9 * 10 / 0.5e12);
  EXPECT_DOUBLE_EQ(w.backward_s, 2e9 * 10 / 0.5e12);
}

TEST(Workload, CalibrationMatchesTheMeasuredIterationTime) {
  const Profile p = two_layer_profile(128, 100, 50);
  Scenario s = parse_scenario(nlohmann::json::parse(R"({"model": "mlp", "batch_size": 64,
      "device": {"calibrate": {"iteration_time": "200ms", "batch_size": 64}}})"),
                              "s.json");
  Workload w = build_workload(s, p, 1e12);
  EXPECT_NEAR(w.forward_s + w.backward_s, 0.200, 1e-12);
}

TEST(Workload, CalibrationOnAWholeStepTakesTheOptimizerOff) {
  const Profile p = two_layer_profile(64, 1000000, 500000);
  auto scenario = [](const std::string& calibrate) {
    return parse_scenario(nlohmann::json::parse(R"({"model": "mlp", "batch_size": 64, "device": {
        "optimizer": "adam", "memory_bandwidth": "1GBps", "calibrate": )" +
                                                calibrate + "}}"),
                          "s.json");
  };
  // Adam: 1.5 M parameters x 28 bytes at 1 GB/s = 42 ms, taken off the 200 ms step.
  Scenario whole = scenario(R"({"iteration_time": "200ms", "batch_size": 64,
                                "includes_optimizer": true})");
  Workload w = build_workload(whole, p, 1e12);
  EXPECT_NEAR(w.update_s, 0.042, 1e-12);
  EXPECT_NEAR(w.forward_s + w.backward_s, 0.158, 1e-12);
  EXPECT_NEAR(w.forward_s + w.backward_s + w.update_s, 0.200, 1e-12);
  // Without it the time is forward + backward alone (the default, recorded as such).
  Scenario plain = scenario(R"({"iteration_time": "200ms", "batch_size": 64})");
  EXPECT_NEAR(build_workload(plain, p, 1e12).forward_s + build_workload(plain, p, 1e12).backward_s,
              0.200, 1e-12);
  EXPECT_EQ(plain.resolved["device"]["calibrate"]["includes_optimizer"], false);
  // A step shorter than its own optimizer step is refused, naming the field.
  Scenario short_step = scenario(R"({"iteration_time": "40ms", "batch_size": 64,
                                     "includes_optimizer": true})");
  try {
    build_workload(short_step, p, 1e12);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/device/calibrate/iteration_time"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("expected more than the optimizer step it includes"),
              std::string::npos)
        << e.what();
  }
}

TEST(Workload, ShippedProfilesLoad) {
  for (const char* name :
       {"resnet18", "resnet50", "resnet101", "resnet152", "vgg16", "vgg19", "alexnet",
        "inception_v3", "googlenet", "mlp", "resnet50-flops", "vgg16-flops", "s2vt"}) {
    Profile p = load_profile(std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/" + name + ".json");
    EXPECT_GT(p.layers.size(), 2u) << name;
    EXPECT_GT(p.total_parameters(), 100000) << name;
  }
  // The FLOPs variant keeps the measured profile's parameters; S2VT as derived in its README.
  EXPECT_EQ(load_profile(std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/resnet50-flops.json")
                .total_parameters(),
            25557032);
  EXPECT_EQ(load_profile(std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/s2vt.json")
                .total_parameters(),
            36960094);
  EXPECT_EQ(load_profile(std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/resnet50.json")
                .total_parameters(),
            25557032);
}

TEST(Workload, SeqToSeqTransformersHaveTheirLayersAndSharedEmbedding) {
  // Vaswani et al. 2017 with a 37,000-token shared vocabulary: the paper's 65M and 213M, as
  // counted layer by layer; one embedding tensor (first in forward order, so its gradient is
  // the last ready), 6 x 2 encoder and 6 x 3 decoder layers and the tied projection.
  const std::string dir = std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/";
  const Profile base = load_profile(dir + "transformer_base.json");
  const Profile big = load_profile(dir + "transformer_big.json");
  EXPECT_EQ(base.total_parameters(), 63082496);
  EXPECT_EQ(big.total_parameters(), 214245376);
  ASSERT_EQ(base.layers.size(), 1u + 6 * 2 + 6 * 3 + 1);
  EXPECT_EQ(base.layers.front().parameters, 37000 * 512);
  EXPECT_EQ(base.layers.back().parameters, 0);
  EXPECT_GT(base.layers.back().forward_flops, 0);
}

TEST(Workload, DeeperProfilesHaveTheArchitecturesParameters) {
  // torchvision's parameter counts; ResNet-152 and VGG-19 repeat measured blocks of
  // ResNet-101 and VGG-16, so their counts check that the right blocks were repeated.
  const std::string dir = std::string(SGDSIM_SOURCE_DIR) + "/models/profiles/";
  EXPECT_EQ(load_profile(dir + "resnet18.json").total_parameters(), 11689512);
  EXPECT_EQ(load_profile(dir + "resnet101.json").total_parameters(), 44549160);
  EXPECT_EQ(load_profile(dir + "resnet152.json").total_parameters(), 60192808);
  EXPECT_EQ(load_profile(dir + "vgg19.json").total_parameters(), 143667240);
  // The shallower network's layers come first and unchanged.
  const Profile r101 = load_profile(dir + "resnet101.json");
  const Profile r152 = load_profile(dir + "resnet152.json");
  EXPECT_EQ(r152.layers.size(), r101.layers.size() + 17 * 9);
  EXPECT_EQ(r152.layers.front().name, r101.layers.front().name);
  EXPECT_EQ(r152.layers.back().name, r101.layers.back().name);
}
