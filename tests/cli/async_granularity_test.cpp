// Async parameter server per layer and per fusion bucket (scheme.granularity): the task graph
// (who waits for whom), its iteration time against a closed form on an ideal network, staleness
// per key, and the real math staying consistent with per-layer applies.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kThree = "tests/data/async-three-layers.json";

json run(const std::vector<std::string>& sets, fs::path* out_dir = nullptr) {
  return run_scenario_summary(kThree, sets, out_dir);
}

json dag(const std::vector<std::string>& sets, int iterations) {
  std::vector<std::string> args = {"dag",      kThree, "--iterations", std::to_string(iterations),
                                   "--format", "json"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// Route of the star: two 5 us links at 10 Gb/s; 4 bytes per parameter; 4,000 parameters, and
// the optimizer step at 4 FLOPs per parameter on the default 15 TFLOP/s device.
constexpr double kAlpha = 10e-6, kBeta = 1 / 1.25e9, kUpdate = 4000 * 4 / 15e12;

}  // namespace

TEST(AsyncGranularity, IdealIterationIsComputePlusTheFirstLayersRoundTrip) {
  // Per layer: the next forward of layer 0 waits for the pull of layer 0, pushed last (after the
  // whole backward pass); layers 2 and 1 went and came back during the backward pass.
  const double layer = 3e-3 + 6e-3 + 2 * (kAlpha + 4000 * kBeta) + kUpdate * 4000 / 16000;
  EXPECT_NEAR(run({})["iteration_time_s"]["mean"].get<double>(), layer, 1e-9 * layer);
  // Whole model: every byte goes after the backward pass and the next forward waits for all.
  const double model = 3e-3 + 6e-3 + 2 * (kAlpha + 16000 * kBeta) + kUpdate;
  EXPECT_NEAR(run({"scheme.granularity=model"})["iteration_time_s"]["mean"].get<double>(), model,
              1e-9 * model);
  // Buckets of >= 8 KB in backward order: {l2, l1}, then {l0}: the same tail as per layer.
  EXPECT_NEAR(
      run({"scheme.granularity=bucket", "scheme.fusion_bytes=\"8KB\""})["iteration_time_s"]["mean"]
          .get<double>(),
      layer, 1e-9 * layer);
  // One 25 MB bucket is the whole model.
  EXPECT_NEAR(run({"scheme.granularity=bucket"})["iteration_time_s"]["mean"].get<double>(), model,
              1e-9 * model);
}

TEST(AsyncGranularity, TaskGraphPushesEachLayerAfterItsBackwardAndGatesItsNextForward) {
  // 2 workers, 2 servers; layer 1 has 2,000,000 parameters (>= MXNet's big-array bound of 1e6),
  // so it is split over both servers: 4 keys per worker and iteration.
  json d = dag({"workers.count=2", "scheme.servers=2", "model.layers.1.parameters=2000000"}, 2);
  std::map<int, json> task;
  for (const auto& t : d["tasks"]) task[t["id"].get<int>()] = t;
  std::map<int, std::vector<int>> preds;
  for (const auto& e : d["edges"]) preds[e[1].get<int>()].push_back(e[0].get<int>());
  std::map<std::string, int> per_kind;
  for (const auto& [id, t] : task)
    if (t["iteration"] == 0 && t["worker"] == 0) per_kind[t["kind"].get<std::string>()]++;
  EXPECT_EQ(per_kind["fwd"], 3);
  EXPECT_EQ(per_kind["bwd"], 3);
  EXPECT_EQ(per_kind["update"], 1);
  EXPECT_EQ(per_kind["apply"], 4);
  EXPECT_EQ(per_kind["comm"], 8);  // a push and a pull per key
  EXPECT_EQ(task.size(), 2u * 2 * (3 + 3 + 1 + 4 * 3));
  // bwd index u is layer 2 - u (backward order); each push follows its layer's bwd.
  std::map<std::tuple<int, int, int>, std::set<int>> pulls_of_unit;  // (w, it, unit) -> pulls
  int pushes = 0;
  for (const auto& [id, t] : task) {
    if (t["kind"] != "apply") continue;
    ASSERT_EQ(preds[id].size(), 1u);
    const int push = preds[id][0];
    ASSERT_EQ(preds[push].size(), 1u);
    const json& before = task[preds[push][0]];
    EXPECT_EQ(before["kind"], "bwd");
    EXPECT_EQ(before["worker"], t["worker"]);
    ++pushes;
    for (const auto& [pid, p] : task)  // the pull after this apply
      for (int q : preds[pid])
        if (q == id) pulls_of_unit[{t["worker"], t["iteration"], before["index"]}].insert(pid);
  }
  EXPECT_EQ(pushes, 2 * 2 * 4);
  EXPECT_EQ(pulls_of_unit[std::make_tuple(0, 0, 1)].size(), 2u);  // layer 1: one key per server
  // Iteration 1's forward of a layer waits for exactly the pulls of that layer in iteration 0.
  for (const auto& [id, t] : task) {
    if (t["kind"] != "fwd" || t["iteration"] != 1) continue;
    std::set<int> from_pulls;
    for (int q : preds[id])
      if (task[q]["kind"] == "comm") from_pulls.insert(q);
    const std::set<int>& expected =
        pulls_of_unit[std::make_tuple(t["worker"].get<int>(), 0, t["index"].get<int>())];
    EXPECT_EQ(from_pulls, expected) << id;
  }
}

TEST(AsyncGranularity, StalenessIsCountedPerKey) {
  // One worker never sees a stale key; with two, a key is usually updated once by the other
  // worker between a pull and the apply of the gradient computed on it.
  json one = run({});
  EXPECT_EQ(one["staleness"]["max"], 0);
  json two = run({"workers.count=2", "iterations=20"});
  int64_t applies = 0;
  for (const auto& [k, v] : two["staleness"]["histogram"].items()) applies += v.get<int64_t>();
  EXPECT_EQ(applies, 2 * 20 * 3);  // every key of every gradient, warm-up included
  EXPECT_NEAR(two["staleness"]["mean"].get<double>(), 1.0, 0.2);
}

TEST(AsyncGranularity, OneWorkerTrainsExactlyLikeSync) {
  // Per-layer applies update their layer's slice with the same gradient: with one worker the
  // math equals whole-model SGD step by step.
  const std::vector<std::string> training = {
      "model=same", "batch_size=32", "iterations=30", "output.timeline=false",
      "training={\"model\": {\"type\": \"mlp\", \"hidden\": [32, 16]}, \"dataset\": "
      "\"synthetic\", \"learning_rate\": 0.05, \"momentum\": 0.9, \"eval_every\": 10}"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), training.begin(), training.end());
    return more;
  };
  fs::path sync, layer, model;
  run(with({"scheme={\"type\": \"sync\"}"}), &sync);
  run(with({}), &layer);
  run(with({"scheme.granularity=model"}), &model);
  const std::string expected = slurp(sync / "convergence.csv");
  auto losses = [](const std::string& csv) {  // the loss and accuracy columns, not the times
    std::string out, line;
    std::istringstream in(csv);
    while (std::getline(in, line)) out += line.substr(line.find(',') + 1) + "\n";
    return out;
  };
  EXPECT_EQ(losses(slurp(layer / "convergence.csv")), losses(expected));
  EXPECT_EQ(losses(slurp(model / "convergence.csv")), losses(expected));
  // With two workers per-layer async still trains.
  json two = run(with({"workers.count=2"}));
  EXPECT_GT(two["training"]["final_accuracy"].get<double>(), 0.5);
  for (auto& d : {sync, layer, model}) fs::remove_all(d);
}
