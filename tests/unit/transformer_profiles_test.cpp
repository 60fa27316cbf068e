// Measured transformer profiles (models/profiles/bert_*_v100.json), the memory-bound optimizer
// step (device.optimizer) and the batch-size rule, checked against the published throughput in
// data/validation/nvidia-bert-throughput/throughput.csv.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/workload/workload.hpp"

using namespace sgdsim;

namespace {
const std::string kProfiles = SGDSIM_SOURCE_DIR "/models/profiles/";
const std::string kCsv = SGDSIM_SOURCE_DIR "/data/validation/nvidia-bert-throughput/throughput.csv";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  return out;
}

/// The one CSV row whose columns equal `want` (fails the test otherwise).
std::map<std::string, std::string> csv_row(const std::map<std::string, std::string>& want) {
  std::ifstream in(kCsv);
  std::string line;
  std::getline(in, line);
  const auto header = split(line);
  std::vector<std::map<std::string, std::string>> hits;
  while (std::getline(in, line)) {
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    bool match = true;
    for (const auto& [k, v] : want) match = match && row[k] == v;
    if (match) hits.push_back(row);
  }
  EXPECT_EQ(hits.size(), 1u) << kCsv;
  return hits.empty() ? std::map<std::string, std::string>{} : hits[0];
}

/// One GPU's time per mini-batch of a row: batch / (throughput / GPUs).
double iteration_s(const std::map<std::string, std::string>& row) {
  return std::stod(row.at("batch_per_gpu")) /
         (std::stod(row.at("sequences_per_s")) / std::stod(row.at("gpus")));
}

Scenario scenario(int batch, const std::string& device) {
  return parse_scenario(
      nlohmann::json::parse(R"({"model": "mlp", "batch_size": )" + std::to_string(batch) +
                            R"(, "device": )" + device + "}"),
      "s.json");
}

const std::map<std::string, std::string> kLargeRow = {{"model", "bert_large"},
                                                      {"system", "DGX-1 V100 32GB"},
                                                      {"precision", "fp32"},
                                                      {"task", "pretraining"},
                                                      {"batch_per_gpu", "32"}};
const std::map<std::string, std::string> kBaseRow = {{"model", "bert_base"},
                                                     {"system", "DGX-1 V100 16GB"},
                                                     {"precision", "fp32"},
                                                     {"task", "pretraining"},
                                                     {"batch_per_gpu", "32"}};
}  // namespace

TEST(TransformerProfiles, LayersAndGradientBytes) {
  Profile large = load_profile(kProfiles + "bert_large_v100.json");
  Profile base = load_profile(kProfiles + "bert_base_v100.json");
  EXPECT_TRUE(large.measured);
  EXPECT_EQ(large.batch_size, 32);
  EXPECT_EQ(large.layers.size(), 50u);  // embeddings, 24 x (attention, feed-forward), pooler
  EXPECT_EQ(base.layers.size(), 26u);
  // 1.34 GB and 0.44 GB of fp32 gradients, as the FLOP-based fallbacks.
  EXPECT_NEAR(large.total_parameters() * 4.0, 1.34e9, 0.005e9);
  EXPECT_NEAR(base.total_parameters() * 4.0, 0.44e9, 0.005e9);
  EXPECT_EQ(large.total_parameters(),
            load_profile(kProfiles + "bert_large.json").total_parameters());
  EXPECT_EQ(base.total_parameters(), load_profile(kProfiles + "bert_base.json").total_parameters());
}

TEST(TransformerProfiles, LayerTimesSumToTheMeasuredTime) {
  for (const auto& [name, row] :
       {std::pair{"bert_large_v100", kLargeRow}, {"bert_base_v100", kBaseRow}}) {
    Profile p = load_profile(kProfiles + name + ".json");
    Workload w = build_workload(scenario(p.batch_size, "{}"), p, 1e12);
    EXPECT_NEAR(w.forward_s + w.backward_s, iteration_s(csv_row(row)), 1e-6) << name;
    // Backward twice forward: the FLOP profile's ratio.
    EXPECT_NEAR(w.backward_s, 2 * w.forward_s, 1e-6) << name;
  }
}

TEST(TransformerProfiles, SplitFollowsTheFlopShares) {
  Profile m = load_profile(kProfiles + "bert_large_v100.json");
  Profile f = load_profile(kProfiles + "bert_large.json");
  ASSERT_EQ(m.layers.size(), f.layers.size());
  double time = 0, flops = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    time += m.layers[i].forward_s + m.layers[i].backward_s;
    flops += f.layers[i].forward_flops + f.layers[i].backward_flops;
  }
  for (size_t i = 0; i < m.layers.size(); ++i) {
    EXPECT_EQ(m.layers[i].name, f.layers[i].name);
    EXPECT_NEAR(m.layers[i].forward_s / time, f.layers[i].forward_flops / flops, 1e-8) << i;
  }
}

TEST(OptimizerStep, IsParametersTimesBytesOverMemoryBandwidth) {
  Profile p = load_profile(kProfiles + "bert_large_v100.json");
  const double n = static_cast<double>(p.total_parameters());
  for (const auto& [opt, bytes] :
       {std::pair{"sgd", 20.0}, {"adam", 28.0}, {"adamw_loop", 88.0}, {"adam_amp", 40.0}}) {
    Workload w = build_workload(scenario(32, std::string(R"({"optimizer": ")") + opt +
                                                 R"(", "memory_bandwidth": "900GBps"})"),
                                p, 15.7e12);
    EXPECT_NEAR(w.update_s, n * bytes / 900e9, 1e-12) << opt;
    EXPECT_NEAR(w.flop_pass_s, n * 4 / 15.7e12, 1e-12) << opt;  // pseudo_sync's predict unchanged
  }
  // Adam on BERT-large on a V100: 10.4 ms.
  DeviceSpec adam;
  adam.optimizer = "adam";
  adam.memory_bandwidth_Bps = 900e9;
  EXPECT_NEAR(optimizer_step_s(adam, n, 1e12), 0.01043, 0.00001);
  // Absent: 4 FLOPs per parameter at the device's speed, as before.
  Workload w = build_workload(scenario(32, "{}"), p, 15.7e12);
  EXPECT_NEAR(w.update_s, n * 4 / 15.7e12, 1e-15);
}

TEST(OptimizerStep, NeedsAMemoryBandwidth) {
  try {
    scenario(32, R"({"optimizer": "adam"})");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/device/memory_bandwidth"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(scenario(32, R"({"optimizer": "lamb", "memory_bandwidth": "900GBps"})"), InputError);
}

// The batch rule (layer times x b / b_ref; the optimizer step once per batch) against the second
// batch size of the same table: BERT-large SQuAD fine-tuning on one V100, Adam every step.
TEST(BatchRule, PredictsASecondMeasuredBatchWithinTenPercent) {
  const Profile large = load_profile(kProfiles + "bert_large_v100.json");
  for (const auto& [precision, opt] : {std::pair{"fp32", "adam"}, {"fp16", "adam_amp"}}) {
    const auto ref = csv_row({{"model", "bert_large"},
                              {"system", "DGX-1 V100 16GB"},
                              {"precision", precision},
                              {"task", "squad"},
                              {"batch_per_gpu", "4"}});
    const auto chk = csv_row({{"model", "bert_large"},
                              {"system", "DGX-1 V100 32GB"},
                              {"precision", precision},
                              {"task", "squad"},
                              {"batch_per_gpu", "8"}});
    const std::string device =
        std::string(R"({"optimizer": ")") + opt + R"(", "memory_bandwidth": "900GBps"})";
    // The measured batch-4 time less the modelled optimizer step is the layers' time.
    Profile p;
    p.name = "squad";
    p.measured = true;
    p.batch_size = 4;
    const double opt_s = build_workload(scenario(4, device), large, 1e12).update_s;
    p.layers = {{"all", large.total_parameters(), 0, iteration_s(ref) - opt_s, 0, 0}};
    Workload w = build_workload(scenario(8, device), p, 1e12);
    const double predicted = w.forward_s + w.backward_s + w.update_s;
    const double measured = iteration_s(chk);
    EXPECT_NEAR(predicted / measured, 1.0, 0.10) << precision;
    EXPECT_GT(w.update_s, 0.010) << precision;  // the optimizer step is in the prediction
  }
}
