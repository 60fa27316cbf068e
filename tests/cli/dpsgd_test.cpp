// Decentralized SGD (dpsgd) end to end: its neighbour messages against the closed form on the
// ideal star at both fidelities, the complete graph against sync's training, and consensus on
// a ring against the exponential graph.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTraining = {
    "model=mlp",
    "workers.count=4",
    "batch_size=32",
    "iterations=60",
    "output.timeline=false",
    "training={\"model\": {\"type\": \"mlp\", \"hidden\": [32]}, \"dataset\": \"synthetic\", "
    "\"learning_rate\": 0.05, \"momentum\": 0.9, \"eval_every\": 10}"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

/// The rows of convergence.csv, split at commas (header first).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST(Schemes, DpsgdIterationIsComputeUpdateAndTheNeighbourMessages) {
  // Every worker sends its parameters (P bytes) to its d out-neighbours and receives d. Route:
  // alpha 10 us, 1.25e9 B/s. Analytic (contention-free): a message takes alpha + P beta. Flow:
  // the d messages out of a host share its link, and the d into a host share its link, so each
  // runs at 1/d of the bandwidth: alpha + d P beta. The next forward pass waits for them.
  for (const char* fidelity : {"analytic", "flow"})
    for (const auto& [topology, degree] : std::vector<std::pair<std::string, int>>{
             {"ring", 2}, {"exponential", 3}, {"complete", 7}}) {
      json s = run_on_ideal_star({"scheme.type=dpsgd", "scheme.topology=" + topology,
                                  std::string("fidelity=") + fidelity});
      const double p = s["gradient_bytes"].get<double>();
      const int share = std::string(fidelity) == "flow" ? degree : 1;
      const double message = 10e-6 + share * p / 1.25e9;
      const double expected =
          s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + message;
      EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected)
          << fidelity << " " << topology;
      EXPECT_NEAR(s["exposed_comm_s_per_iter"].get<double>(), message, 1e-9 * expected)
          << fidelity << " " << topology;
    }
}

TEST(Training, DpsgdOnTheCompleteGraphTrainsLikeSync) {
  // Identical replicas and W = 11^T / n: every worker's sum_j W_ij (x - lr v_j) is x - lr
  // mean(v_j), and the mean of the momenta follows sync's m v + mean(g): sync's step, in exact
  // arithmetic. The float sums run in another order (sync averages the gradients and steps
  // once; dpsgd steps every replica and averages the parameters in double), so iteration, loss
  // and accuracy agree to the printed digits (loss and accuracy to 2e-6), not bit for bit; the
  // replicas stay identical to one another (consensus distance exactly 0).
  fs::path sync, dpsgd;
  run_on_ideal_star(kTraining, &sync);
  run_on_ideal_star(with(kTraining, {"scheme.type=dpsgd", "scheme.topology=complete"}), &dpsgd);
  const auto a = csv_rows(slurp(sync / "convergence.csv"));
  const auto b = csv_rows(slurp(dpsgd / "convergence.csv"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(b[0], (std::vector<std::string>{"time_s", "iteration", "loss", "accuracy",
                                            "consensus_distance"}));
  EXPECT_EQ(a[0].size(), 4u);  // sync's file keeps its four columns
  for (size_t r = 1; r < a.size(); ++r) {
    EXPECT_EQ(a[r][1], b[r][1]);
    EXPECT_NEAR(std::stod(a[r][2]), std::stod(b[r][2]), 2e-6) << r;
    EXPECT_NEAR(std::stod(a[r][3]), std::stod(b[r][3]), 2e-6) << r;
    EXPECT_EQ(std::stod(b[r][4]), 0.0) << r;
  }
  for (auto& d : {sync, dpsgd}) fs::remove_all(d);
}

TEST(Training, DpsgdRingIsSlowerToConsensusThanTheExponentialGraph) {
  // 16 workers, same seed and data: after 30 iterations the ring's replicas are far more spread
  // (its W's second eigenvalue is 0.95, the exponential graph's 0.6).
  auto consensus = [](const std::string& topology) {
    fs::path out;
    run_on_ideal_star(
        with(kTraining, {"workers.count=16", "platform.generate.nodes=16", "iterations=30",
                         "scheme.type=dpsgd", "scheme.topology=" + topology}),
        &out);
    const auto rows = csv_rows(slurp(out / "convergence.csv"));
    fs::remove_all(out);
    return std::stod(rows.back().at(4));
  };
  const double ring = consensus("ring"), exponential = consensus("exponential");
  EXPECT_GT(ring, 0);
  EXPECT_GT(ring, 10 * exponential);
}

TEST(Training, DpsgdIsDeterministicAndTrains) {
  fs::path a, b;
  json s = run_on_ideal_star(with(kTraining, {"scheme.type=dpsgd"}), &a);
  run_on_ideal_star(with(kTraining, {"scheme.type=dpsgd"}), &b);
  EXPECT_EQ(slurp(a / "convergence.csv"), slurp(b / "convergence.csv"));
  EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.8);
  for (auto& d : {a, b}) fs::remove_all(d);
}

TEST(Training, DpsgdMatrixFileEqualsTheNamedTopology) {
  // tests/data/mixing-ring-4.json is the ring's W written out (1/3 as the double 1/3): the same
  // messages and the same math, byte for byte.
  fs::path named, file;
  run_on_ideal_star(with(kTraining, {"scheme.type=dpsgd", "scheme.topology=ring"}), &named);
  run_on_ideal_star(with(kTraining, {"scheme.type=dpsgd", "scheme.topology=mixing-ring-4.json"}),
                    &file);
  EXPECT_EQ(slurp(named / "iterations.csv"), slurp(file / "iterations.csv"));
  EXPECT_EQ(slurp(named / "convergence.csv"), slurp(file / "convergence.csv"));
  // The resolved scenario names the file by the path it was found at.
  EXPECT_EQ(json::parse(slurp(file / "scenario.resolved.json"))["scheme"]["topology"],
            "tests/data/mixing-ring-4.json");
  for (auto& d : {named, file}) fs::remove_all(d);
}

TEST(Schemes, AdpsgdIterationIsComputeTheExchangeWithItsPartnerAndUpdate) {
  // Two workers, each the other's only peer: every iteration each sends its parameters to the
  // other and receives the other's. Analytic: alpha + P beta. Flow: worker 0's exchange and
  // worker 1's run at once, so two messages share each direction of the link: alpha + 2 P beta.
  for (const char* fidelity : {"analytic", "flow"}) {
    json s = run_on_ideal_star(
        {"scheme.type=adpsgd", "workers.count=2", std::string("fidelity=") + fidelity});
    const double p = s["gradient_bytes"].get<double>();
    const double message = 10e-6 + (std::string(fidelity) == "flow" ? 2 : 1) * p / 1.25e9;
    const double expected =
        s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>() + message;
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
  }
}

TEST(Training, AdpsgdWithOneWorkerTrainsLikeSyncAndReportsStaleness) {
  // One worker has no peer: it steps its own replica with its own gradient, sync's step with one
  // worker, bit for bit (the first four columns of convergence.csv).
  fs::path sync, adpsgd;
  run_on_ideal_star(with(kTraining, {"workers.count=1"}), &sync);
  run_on_ideal_star(with(kTraining, {"workers.count=1", "scheme.type=adpsgd"}), &adpsgd);
  const auto a = csv_rows(slurp(sync / "convergence.csv"));
  const auto b = csv_rows(slurp(adpsgd / "convergence.csv"));
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 1; r < a.size(); ++r)
    for (size_t c = 1; c < 4; ++c) EXPECT_EQ(a[r][c], b[r][c]) << r << " " << c;
  for (auto& d : {sync, adpsgd}) fs::remove_all(d);
  // Eight workers: other workers' averagings reach a replica between its read and its update.
  json s = run_on_ideal_star(with(kTraining, {"workers.count=8", "scheme.type=adpsgd"}));
  EXPECT_GT(s["staleness"]["mean"].get<double>(), 0);
  EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.8);
}
