// scheme.compression on the contention-free star (tests/data/ideal-star.json: 8 workers, route
// alpha 10 us, 10 Gb/s): a sparsifier keeping everything trains byte for byte like sync, a
// sparse exchange takes the ring all-gather formula of k values and k 4-byte indices per worker
// at flow and analytic fidelity, and bad compression options exit 2 naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Ring all-gather of n bytes in all (n/8 per rank) on the 8 workers: 7 (a + n/8 b).
double ring_allgather_s(double n) {
  return 7 * (10e-6 + n / 8 / 1.25e9);
}

// Every column of convergence.csv but the simulated time.
std::string losses(const std::string& csv) {
  std::string out, line;
  std::istringstream in(csv);
  while (std::getline(in, line)) out += line.substr(line.find(',') + 1) + "\n";
  return out;
}

// The --set overrides of the training runs compared here: a small MLP on synthetic data.
std::vector<std::string> mlp_training_sets() {
  return {"model=same",
          "batch_size=32",
          "iterations=30",
          "output.timeline=false",
          "workers.count=4",
          "training={\"model\": {\"type\": \"mlp\", \"hidden\": [32, 16]}, \"dataset\": "
          "\"synthetic\", \"learning_rate\": 0.05, \"momentum\": 0.9, \"eval_every\": 10}"};
}

}  // namespace

TEST(CompressedSync, SparsifierKeepingEverythingTrainsByteIdenticallyToSync) {
  const std::vector<std::string> training = mlp_training_sets();
  auto with = [&](const std::string& scheme) {
    std::vector<std::string> sets = training;
    sets.push_back("scheme=" + scheme);
    return sets;
  };
  fs::path sync;
  run_scenario_summary(kIdealStar, with("{\"type\": \"sync\"}"), &sync);
  const std::string expected = losses(slurp(sync / "convergence.csv"));
  EXPECT_EQ(count_lines(expected), 1 + 3);
  for (const char* compression : {"{\"type\": \"topk\", \"ratio\": 1}",
                                  "{\"type\": \"topk\", \"ratio\": 1, "
                                  "\"error_feedback\": false}",
                                  "{\"type\": \"randk\", \"ratio\": 1}", "{\"type\": \"none\"}"}) {
    fs::path dir;
    run_scenario_summary(
        kIdealStar, with(std::string("{\"type\": \"sync\", \"compression\": ") + compression + "}"),
        &dir);
    EXPECT_EQ(losses(slurp(dir / "convergence.csv")), expected) << compression;
    fs::remove_all(dir);
  }
  // Keeping 1 % changes the math (and error feedback changes it again).
  fs::path topk, no_feedback;
  run_scenario_summary(
      kIdealStar,
      with("{\"type\": \"sync\", \"compression\": {\"type\": \"topk\", \"ratio\": 0.01}}"), &topk);
  run_scenario_summary(kIdealStar,
                       with("{\"type\": \"sync\", \"compression\": {\"type\": \"topk\", "
                            "\"ratio\": 0.01, \"error_feedback\": false}}"),
                       &no_feedback);
  const std::string kept = losses(slurp(topk / "convergence.csv"));
  EXPECT_NE(kept, expected);
  EXPECT_NE(losses(slurp(no_feedback / "convergence.csv")), kept);
  for (const fs::path& d : {sync, topk, no_feedback}) fs::remove_all(d);
}

TEST(CompressedSync, SparseAllGatherIsTheFormulaAtFlowAndAnalytic) {
  // One bucket, no overlap: compute (with the selection) + the all-gather + the step (with the
  // scatter-add of every worker's k values).
  for (const char* type : {"topk", "randk"})
    for (const char* fidelity : {"flow", "analytic"}) {
      json s = run_scenario_summary(
          kIdealStar, {std::string("scheme={\"type\": \"sync\", \"overlap\": \"none\", "
                                   "\"fusion_bytes\": \"1GB\", \"compression\": {\"type\": \"") +
                           type + "\", \"ratio\": 0.01}}",
                       std::string("fidelity=") + fidelity});
      const double elements = s["gradient_bytes"].get<double>() / 4;
      const double k = std::ceil(0.01 * elements);
      const double comm = ring_allgather_s(8 * k * (4 + 4));
      EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), comm, 1e-9 * comm) << type << fidelity;
      const double expected =
          s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + comm;
      EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected)
          << type << " " << fidelity;
    }
}

TEST(CompressedSync, SelectionCostIsPerElementOnTheDevice) {
  // The selection adds select_flops_per_element x elements operations at the optimizer step's
  // rate per operation (the step is 4 per parameter): with 0 and 16 the compute differs by
  // 16 / 4 steps' time, error feedback adding 2 / 4 of a step in both.
  auto run_with = [](double flops) {
    return run_scenario_summary(
        kIdealStar,
        {"scheme={\"type\": \"sync\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
         "\"compression\": {\"type\": \"topk\", \"ratio\": 0.01, "
         "\"select_flops_per_element\": " +
             std::to_string(flops) + "}}",
         "fidelity=analytic"});
  };
  json plain = run_scenario_summary(kIdealStar, {"fidelity=analytic"});
  json zero = run_with(0), sixteen = run_with(16);
  const double step = plain["update_s_per_iter"].get<double>();
  const double diff =
      sixteen["compute_s_per_iter"].get<double>() - zero["compute_s_per_iter"].get<double>();
  EXPECT_NEAR(diff, 4 * step, 1e-9 * step);
}

TEST(CompressedSync, BadOptionsExitTwoNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"scheme={\"type\": \"sync\", \"compression\": {\"type\": \"zip\"}}",
       "/scheme/compression/type"},
      {"scheme={\"type\": \"sync\", \"compression\": {\"type\": \"topk\", \"ratio\": 0}}",
       "/scheme/compression/ratio"},
      {"scheme={\"type\": \"sync\", \"compression\": {\"type\": \"randk\", "
       "\"select_flops_per_element\": 3}}",
       "/scheme/compression/select_flops_per_element: only for scheme.compression.type"},
      {"scheme={\"type\": \"local_sgd\", \"compression\": {\"type\": \"topk\"}}",
       "/scheme/compression: only for a scheme.type"},
      {"scheme={\"type\": \"sync\", \"compression\": {\"ratio\": 0.1}}",
       "/scheme/compression/type: required field is missing"},
      {"collective.algorithm=\"tree\"",
       "/collective/algorithm: \"tree\" (scheme.compression \"topk\" needs allgather"},
  };
  for (const auto& [set, message] : cases) {
    std::vector<std::string> args = {"run", kIdealStar, "--set",
                                     set,   "--out",    temp_path("compress-bad").string()};
    if (set.rfind("collective", 0) == 0) {
      args.push_back("--set");
      args.push_back("scheme={\"type\": \"sync\", \"compression\": {\"type\": \"topk\"}}");
    }
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << set;
    EXPECT_NE(r.err.find(message), std::string::npos) << set << "\n" << r.err;
  }
}

namespace {

// Ring allreduce of n bytes on the 8 workers: 14 a + 2 (7/8) n b.
double ring_allreduce_s(double n) {
  return 14 * 10e-6 + 2 * 7.0 / 8 * n / 1.25e9;
}

}  // namespace

TEST(CompressedSync, PowerSgdIsTwoAllreducesOfPAndQAtFlowAndAnalytic) {
  // One bucket of ResNet-50's layers, each taken as a square matrix: P and Q of rank r are
  // r' sqrt(E) values per layer (r' = min(r, floor(sqrt(E)))), fp32.
  const json profile = json::parse(slurp("models/profiles/resnet50.json"));
  const double r = 4;
  double values = 0;
  for (const json& layer : profile["layers"]) {
    const double e = layer["parameters"].get<double>();
    if (e > 0) values += std::min(r, std::floor(std::sqrt(e))) * std::sqrt(e);
  }
  const double comm = 2 * ring_allreduce_s(values * 4);
  for (const char* fidelity : {"flow", "analytic"}) {
    json s = run_scenario_summary(
        kIdealStar,
        {"scheme={\"type\": \"sync\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
         "\"compression\": {\"type\": \"powersgd\", \"rank\": 4}}",
         std::string("fidelity=") + fidelity});
    EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), comm, 1e-9 * comm) << fidelity;
    const double expected =
        s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + comm;
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
  }
}

TEST(CompressedSync, PowerSgdAtFullRankTrainsLikeSync) {
  // Rank >= every matrix's smaller side: P P^T M = M up to rounding, so the losses agree to
  // float precision (not bit for bit: the orthogonalisation rounds); rank 1 differs.
  const std::vector<std::string> training = mlp_training_sets();
  auto final_loss = [&](const std::string& scheme) {
    std::vector<std::string> sets = training;
    sets.push_back("scheme=" + scheme);
    return run_scenario_summary(kIdealStar, sets)["training"]["final_loss"].get<double>();
  };
  const double sync = final_loss("{\"type\": \"sync\"}");
  const double full =
      final_loss("{\"type\": \"sync\", \"compression\": {\"type\": \"powersgd\", \"rank\": 64}}");
  const double rank1 =
      final_loss("{\"type\": \"sync\", \"compression\": {\"type\": \"powersgd\", \"rank\": 1}}");
  EXPECT_NEAR(full, sync, 1e-4 * sync);
  EXPECT_GT(std::fabs(rank1 - sync), 1e-3 * sync);
}

TEST(CompressedSync, SignSgdIsAnAllGatherOfSignBitsAtFlowAndAnalytic) {
  for (const char* fidelity : {"flow", "analytic"}) {
    json s = run_scenario_summary(
        kIdealStar,
        {"scheme={\"type\": \"sync\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
         "\"compression\": {\"type\": \"signsgd\"}}",
         std::string("fidelity=") + fidelity});
    const double elements = s["gradient_bytes"].get<double>() / 4;
    const double comm = ring_allgather_s(8 * (std::ceil(elements / 8) + 4));
    EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), comm, 1e-9 * comm) << fidelity;
    const double expected =
        s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + comm;
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
  }
}

TEST(CompressedSync, QsgdIsAnAllGatherOfLevelBitsAndNormsAtFlowAndAnalytic) {
  // s = 7: 4 bits per element (3 level bits and the sign), one 4-byte norm per 512 elements.
  for (const char* fidelity : {"flow", "analytic"}) {
    json s = run_scenario_summary(
        kIdealStar,
        {"scheme={\"type\": \"sync\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
         "\"compression\": {\"type\": \"qsgd\", \"levels\": 7, \"bucket_size\": 512}}",
         std::string("fidelity=") + fidelity});
    const double elements = s["gradient_bytes"].get<double>() / 4;
    const double comm =
        ring_allgather_s(8 * (std::ceil(elements * 4 / 8) + std::ceil(elements / 512) * 4));
    EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), comm, 1e-9 * comm) << fidelity;
    const double expected =
        s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + comm;
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
  }
}

TEST(CompressedSync, QsgdWithManyLevelsTrainsLikeSync) {
  // s = 2^24 levels: each element is rounded to 2^-24 of its bucket's norm, about float
  // precision, so the losses agree with sync's closely; s = 1 (ternary) does not.
  const std::vector<std::string> training = mlp_training_sets();
  auto final_loss = [&](const std::string& scheme) {
    std::vector<std::string> sets = training;
    sets.push_back("scheme=" + scheme);
    return run_scenario_summary(kIdealStar, sets)["training"]["final_loss"].get<double>();
  };
  const double sync = final_loss("{\"type\": \"sync\"}");
  for (const char* feedback : {"true", "false"}) {
    const double fine = final_loss(
        std::string("{\"type\": \"sync\", \"compression\": {\"type\": \"qsgd\", \"levels\": "
                    "16777216, \"error_feedback\": ") +
        feedback + "}}");
    EXPECT_NEAR(fine, sync, 1e-4 * sync) << feedback;
  }
  const double ternary = final_loss(
      "{\"type\": \"sync\", \"compression\": {\"type\": \"qsgd\", \"levels\": 1, "
      "\"error_feedback\": false}}");
  EXPECT_GT(std::fabs(ternary - sync), 1e-3 * sync);
}
