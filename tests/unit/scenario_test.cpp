#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

#include "sim/core/errors.hpp"
#include "tests/unit/scenario_helpers.hpp"

using namespace sgdsim;
using nlohmann::json;

namespace {
json base() {
  return json::parse(R"({"model": "mlp", "workers": {"count": 8, "per_node": 2}})");
}
std::string error_of(const json& j) {
  return test::scenario_error(j);
}
}  // namespace

TEST(Scenario, DefaultsFillEveryField) {
  Scenario s = parse_scenario(base(), "dir/s.json");
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.scheme.type, "sync");
  EXPECT_EQ(s.scheme.overlap, "wfbp");
  EXPECT_DOUBLE_EQ(s.scheme.fusion_bytes, 25e6);
  EXPECT_EQ(s.collective, "ring");
  EXPECT_EQ(s.network_model, NetworkModel::links);
  EXPECT_DOUBLE_EQ(s.gradient_bytes_per_parameter, 4.0);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_EQ(s.iterations, 20);
  ASSERT_TRUE(s.platform.generate.has_value());
  // Derived: enough nodes for the workers, devices per node = workers per node.
  EXPECT_EQ(s.platform.generate->nodes, 4);
  EXPECT_EQ(s.platform.generate->devices_per_node, 2);
  EXPECT_DOUBLE_EQ(s.platform.generate->node_link.bandwidth_Bps, 100e9 / 8);
  // Links name their technology: TCP between nodes, PCIe inside a node, with its defaults.
  EXPECT_EQ(s.platform.generate->node_link.transport.technology, "tcp");
  EXPECT_DOUBLE_EQ(s.platform.generate->node_link.transport.overhead_s, 25e-6);
  EXPECT_EQ(s.platform.generate->intra_node_link.transport.technology, "pcie");
  EXPECT_EQ(s.resolved["platform"]["generate"]["node_link"]["window"], "6291456B");
  EXPECT_EQ(s.resolved["platform"]["generate"]["node_link"]["stream_bandwidth"], "none");
  // The resolved scenario names every default.
  EXPECT_EQ(s.resolved["scheme"]["fusion_bytes"], "25MB");
  EXPECT_EQ(s.resolved["platform"]["generate"]["nodes"], 4);
  EXPECT_EQ(s.resolved["workers"]["per_node"], 2);
  EXPECT_EQ(s.resolved["output"]["timeline"], true);
}

TEST(Scenario, OverridesApplyBeforeValidation) {
  json j = base();
  apply_override(j, "workers.count=6");
  apply_override(j, "scheme.overlap=none");
  apply_override(j, "platform.generate.node_link.bandwidth=10Gbps");
  Scenario s = parse_scenario(j, "s.json");
  EXPECT_EQ(s.workers, 6);
  EXPECT_EQ(s.scheme.overlap, "none");
  EXPECT_DOUBLE_EQ(s.platform.generate->node_link.bandwidth_Bps, 10e9 / 8);
}

TEST(Scenario, OverrideErrors) {
  json j = base();
  EXPECT_THROW(apply_override(j, "noequals"), InputError);
  EXPECT_THROW(apply_override(j, "model.x=1"), InputError);
  EXPECT_THROW(apply_override(j, "a..b=1"), InputError);
}

TEST(Scenario, UnknownKeySuggestsTheClosest) {
  json j = base();
  j["iteratons"] = 5;
  EXPECT_EQ(error_of(j),
            "s.json: /iteratons: unknown key \"iteratons\" (did you mean \"iterations\"?)");
  json k = base();
  k["workers"]["cont"] = 5;
  EXPECT_NE(error_of(k).find("/workers/cont: unknown key \"cont\" (did you mean \"count\"?)"),
            std::string::npos);
}

TEST(Scenario, RangeErrorsNamePointerValueAndExpectation) {
  json j = base();
  j["workers"]["count"] = 0;
  EXPECT_EQ(error_of(j), "s.json: /workers/count: expected an integer >= 1, got 0");
  json k = base();
  k["warmup_iterations"] = 20;
  EXPECT_EQ(error_of(k),
            "s.json: /warmup_iterations: expected an integer < iterations (20), got 20");
  json b = base();
  b["platform"] = {{"generate", {{"node_link", {{"bandwidth", "25Gbs"}}}}}};
  EXPECT_NE(
      error_of(b).find("/platform/generate/node_link/bandwidth: expected a positive bandwidth"),
      std::string::npos);
}

TEST(Scenario, CapacityOfGeneratedPlatform) {
  json j = base();
  j["platform"] = {{"generate", {{"nodes", 2}, {"devices_per_node", 2}}}};
  j["workers"] = {{"count", 5}};
  EXPECT_EQ(error_of(j),
            "s.json: /workers/count: expected at most 4 (2 nodes x 2 workers per node), got 5");
}

TEST(Scenario, NotYetImplementedFeaturesAreRejectedNotIgnored) {
  json j = base();
  j["training"] = {{"dataset", "imagenet"}};
  EXPECT_NE(error_of(j).find("/training/dataset"), std::string::npos);
}

TEST(Scenario, PipeliningFields) {
  json k = base();
  k["collective"] = {{"algorithm", "hierarchical"},
                     {"chunk_bytes", "512KiB"},
                     {"channels", 4},
                     {"intra_algorithm", "chain"},
                     {"inter_algorithm", "double_binary_tree"}};
  Scenario s = parse_scenario(k, "s.json");
  EXPECT_EQ(s.chunk_bytes, 524288);
  EXPECT_EQ(s.collective_channels, 4);
  EXPECT_EQ(s.collective_options.intra_algorithm, "chain");
  EXPECT_EQ(s.collective_options.inter_algorithm, "double_binary_tree");
  Scenario d = parse_scenario(base(), "s.json");
  EXPECT_EQ(d.chunk_bytes, 0);
  EXPECT_EQ(d.collective_channels, 1);
  EXPECT_EQ(d.collective_options.intra_algorithm, "binomial");
  k["collective"] = {{"chunk_bytes", "512B"}};
  EXPECT_NE(error_of(k).find("/collective/chunk_bytes: expected 0 or at least 1 KiB"),
            std::string::npos);
  k["collective"] = {{"channels", 0}};
  EXPECT_NE(error_of(k).find("/collective/channels"), std::string::npos);
}

TEST(Scenario, DefaultWarmupFitsShortRuns) {
  json j = base();
  j["iterations"] = 1;
  Scenario s = parse_scenario(j, "s.json");
  EXPECT_EQ(s.warmup_iterations, 0);
  EXPECT_EQ(s.resolved["warmup_iterations"], 0);
  j["iterations"] = 10;
  EXPECT_EQ(parse_scenario(j, "s.json").warmup_iterations, 2);
}

TEST(Scenario, OptionalKeysAreSuggestedToo) {
  json j = base();
  j["workers"]["pernode"] = 2;
  EXPECT_NE(error_of(j).find("(did you mean \"per_node\"?)"), std::string::npos) << error_of(j);
}

TEST(Scenario, CollectiveFidelityAndTopologyFields) {
  json j = base();
  j["collective"] = {{"algorithm", "rhd"},
                     {"servers", 2},
                     {"inter_algorithm", "rhd"},
                     {"reduction_speed", "40GBps"}};
  j["fidelity"] = "analytic";
  j["network_model"] = "smpi";
  Scenario s = parse_scenario(j, "s.json");
  EXPECT_EQ(s.collective, "recursive_halving_doubling");
  EXPECT_EQ(s.collective_options.inter_algorithm, "recursive_halving_doubling");
  EXPECT_EQ(s.collective_servers, 2);
  EXPECT_DOUBLE_EQ(s.reduction_Bps, 40e9);
  EXPECT_EQ(s.fidelity, Fidelity::analytic);
  EXPECT_EQ(s.network_model, NetworkModel::smpi);

  json t = json::parse(R"({"model": "mlp", "workers": {"count": 60},
      "platform": {"generate": {"topology": "torus"}}})");
  Scenario torus = parse_scenario(t, "s.json");
  EXPECT_EQ(torus.platform.generate->topology, Topology::torus);
  EXPECT_EQ(torus.flow_symmetry, FlowSymmetry::none);
  EXPECT_EQ(torus.platform.generate->torus_dims, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(torus.platform.generate->nodes, 60);
  t["platform"]["generate"]["dims"] = {6, 10};
  EXPECT_EQ(parse_scenario(t, "s.json").platform.generate->torus_dims, (std::vector<int>{6, 10}));

  json d = json::parse(R"({"model": "mlp", "workers": {"count": 16},
      "platform": {"generate": {"topology": "dragonfly", "dragonfly": [2, 2, 2, 2, 1, 1, 1]}}})");
  EXPECT_EQ(parse_scenario(d, "s.json").platform.generate->nodes, 16);
  d["flow_symmetry"] = "rotation";
  EXPECT_EQ(parse_scenario(d, "s.json").platform.generate->topology, Topology::dragonfly);
  EXPECT_EQ(parse_scenario(d, "s.json").flow_symmetry, FlowSymmetry::rotation);
}

TEST(Scenario, LearningRateSchedules) {
  TrainingSpec t;
  t.learning_rate = 0.1;
  EXPECT_DOUBLE_EQ(t.learning_rate_at(500, 8), 0.1);
  t.lr_schedule = "step";
  t.lr_step_every = 100;
  t.lr_step_factor = 0.5;
  EXPECT_DOUBLE_EQ(t.learning_rate_at(99, 8), 0.1);
  EXPECT_DOUBLE_EQ(t.learning_rate_at(250, 8), 0.025);
  t.lr_schedule = "warmup";
  t.warmup_iterations = 10;
  EXPECT_DOUBLE_EQ(t.learning_rate_at(0, 8), 0.1);
  EXPECT_DOUBLE_EQ(t.learning_rate_at(5, 8), 0.1 + 0.35);
  EXPECT_DOUBLE_EQ(t.learning_rate_at(50, 8), 0.8);  // linear scaling rule: lr x workers
}

TEST(NetworkModels, EveryNameReadsBackAndIsPrintedAsWritten) {
  // The table is the one place the names are written: each reads back to its enum value and
  // prints as a scenario writes it; an unknown name reads as none.
  for (const std::string& n : network_model_names())
    EXPECT_EQ(network_model_name(*network_model_named(n)), n);
  for (const std::string& n : fidelity_names()) EXPECT_EQ(fidelity_name(*fidelity_named(n)), n);
  EXPECT_EQ(network_model_named("default"), NetworkModel::lv08);
  EXPECT_FALSE(network_model_named("tcp"));
  EXPECT_FALSE(fidelity_named("packet"));
  EXPECT_TRUE(applies_lv08_factors(NetworkModel::lv08));
  EXPECT_TRUE(applies_lv08_factors(NetworkModel::smpi));
  EXPECT_FALSE(applies_lv08_factors(NetworkModel::ideal));
  EXPECT_FALSE(applies_lv08_factors(NetworkModel::links));
  // `sgdsim collective` lists its choices from its default on, going round the table.
  EXPECT_EQ(choices_from(network_model_names(), "default"), "default, ideal, smpi or links");
  EXPECT_EQ(choices_from(fidelity_names(), "flow"), "flow or analytic");
}

TEST(NetworkModels, TopologiesAndFlowSymmetriesReadBackAndArePrintedAsWritten) {
  // Their tables' order is the order of the scenario reader's error message and of fields.md.
  EXPECT_EQ(topology_names(), (std::vector<std::string>{"star", "fat_tree", "torus", "dragonfly"}));
  EXPECT_EQ(flow_symmetry_names(), (std::vector<std::string>{"none", "rotation"}));
  for (const std::string& n : topology_names()) EXPECT_EQ(topology_name(*topology_named(n)), n);
  for (const std::string& n : flow_symmetry_names())
    EXPECT_EQ(flow_symmetry_name(*flow_symmetry_named(n)), n);
  EXPECT_EQ(topology_named("fat_tree"), Topology::fat_tree);
  EXPECT_FALSE(topology_named("FAT_TREE"));
  EXPECT_FALSE(flow_symmetry_named("reflection"));
  EXPECT_TRUE(is_simgrid_cluster(Topology::torus));
  EXPECT_TRUE(is_simgrid_cluster(Topology::dragonfly));
  EXPECT_FALSE(is_simgrid_cluster(Topology::star));
  EXPECT_FALSE(is_simgrid_cluster(Topology::fat_tree));
}
