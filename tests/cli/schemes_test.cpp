// Schemes end to end: their iteration time against closed forms on an ideal star, the
// equivalences the definitions promise, staleness, and memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Ring allreduce of n bytes on the 8-worker star: route alpha 10 us, 10 Gb/s.
double ring_s(double n) {
  return 2.0 * 7 * 10e-6 + 2.0 * 7 / 8 * n / 1.25e9;
}

}  // namespace

TEST(Schemes, SyncWithoutOverlapIsComputePlusAllreducePlusUpdate) {
  json s = run_on_ideal_star({"scheme.overlap=none", "scheme.fusion_bytes=\"1GB\""});
  const double expected = s["compute_s_per_iter"].get<double>() + ring_s(s["gradient_bytes"]) +
                          s["update_s_per_iter"].get<double>();
  EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected);
  EXPECT_NEAR(s["exposed_comm_s_per_iter"].get<double>(), ring_s(s["gradient_bytes"]), 1e-9);
}

TEST(Schemes, PseudoSyncIsTheLargerOfComputeAndAllreduce) {
  // One bucket: compute-bound at 100 Gb/s, communication-bound at 1 Gb/s.
  for (const char* bw : {"100Gbps", "1Gbps"}) {
    json s = run_on_ideal_star({"scheme.type=pseudo_sync", "scheme.fusion_bytes=\"1GB\"",
                                std::string("platform.generate.node_link.bandwidth=") + bw});
    const double beta = 1.0 / (std::string(bw) == "100Gbps" ? 12.5e9 : 0.125e9);
    const double comm = 2.0 * 7 * 10e-6 + 2.0 * 7 / 8 * s["gradient_bytes"].get<double>() * beta;
    const double compute =
        s["compute_s_per_iter"].get<double>() + s["update_s_per_iter"].get<double>();
    const double expected = std::max(compute, comm);
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << bw;
    // The allreduce ends after its iteration's update, yet it is counted.
    EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), comm, 1e-9 * comm) << bw;
    EXPECT_EQ(s["staleness"]["max"], 1);
  }
}

TEST(Schemes, PseudoSyncPaysForItsPredictor) {
  json none = run_on_ideal_star({"scheme.type=pseudo_sync", "scheme.predictor=none"});
  json arrses = run_on_ideal_star({"scheme.type=pseudo_sync", "scheme.predictor=arrses"});
  // arrses: 32 element-wise FLOPs per parameter on a 15 TFLOP/s device.
  EXPECT_NEAR(arrses["update_s_per_iter"].get<double>() - none["update_s_per_iter"].get<double>(),
              25557032.0 * 32 / 15e12, 1e-12);
}

TEST(Schemes, StalenessZeroAndPeriodOneAreSync) {
  fs::path sync, ssp, local;
  run_on_ideal_star({}, &sync);
  run_on_ideal_star({"scheme.type=ssp", "scheme.staleness=0"}, &ssp);
  run_on_ideal_star({"scheme.type=local_sgd", "scheme.period=1"}, &local);
  EXPECT_EQ(slurp(sync / "iterations.csv"), slurp(ssp / "iterations.csv"));
  EXPECT_EQ(slurp(sync / "iterations.csv"), slurp(local / "iterations.csv"));
  for (auto& d : {sync, ssp, local}) fs::remove_all(d);
}

TEST(Schemes, AsyncWithOneWorkerAndOneShardIsSync) {
  fs::path sync, async;
  run_on_ideal_star({"workers.count=1"}, &sync);
  run_on_ideal_star({"workers.count=1", "scheme.type=async", "scheme.servers=1"}, &async);
  EXPECT_EQ(slurp(sync / "iterations.csv"), slurp(async / "iterations.csv"));
  for (auto& d : {sync, async}) fs::remove_all(d);
}

TEST(Schemes, AsyncStalenessIsAboutWorkersMinusOne) {
  json s = run_on_ideal_star({"scheme.type=async", "scheme.servers=8", "iterations=40"});
  const double mean = s["staleness"]["mean"];
  EXPECT_GT(mean, 6.5);
  EXPECT_LE(mean, 7.0);
  EXPECT_EQ(s["staleness"]["max"], 7);
}

TEST(Schemes, LocalSgdCommunicatesEveryPeriod) {
  json sync = run_on_ideal_star({"iterations=12"}),
       local = run_on_ideal_star({"scheme.type=local_sgd", "scheme.period=4", "iterations=12"});
  EXPECT_LT(local["iteration_time_s"]["mean"].get<double>(),
            sync["iteration_time_s"]["mean"].get<double>());
  // Steady-state iterations 2..11 include the synchronizing steps 3, 7 and 11.
  EXPECT_NEAR(local["comm_s_per_iter"].get<double>(),
              sync["comm_s_per_iter"].get<double>() * 3 / 10, 1e-12);
}

class SchemeMemory : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemeMemory, DoesNotGrowWithIterations) {
  if (sgdsim_sanitized())
    GTEST_SKIP() << "ASan's quarantine holds freed memory, so peak RSS is not the program's";
  auto rss = [&](int iterations) {
    fs::path out = temp_path("mem");
    CliResult r = run_sgdsim(
        {"run", kIdealStar, "--set", "workers.count=16", "--set", "platform.generate.nodes=16",
         "--set", "model=mlp", "--set", "scheme.type=" + GetParam(), "--set",
         "iterations=" + std::to_string(iterations), "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    fs::remove_all(out);
    return r.max_rss_kb;
  };
  long small = rss(200), large = rss(2000);
  EXPECT_LE(large, small * 1.15) << GetParam() << ": " << small << " kB vs " << large << " kB";
}

INSTANTIATE_TEST_SUITE_P(All, SchemeMemory,
                         ::testing::Values("sync", "async", "pseudo_sync", "ssp", "local_sgd"));

TEST(Schemes, AStragglerHalvesSyncButNotAsync) {
  // experiments/schemes/stragglers.sh in miniature: 16 workers, one 2x slower.
  auto throughput = [](const std::string& scheme, bool straggler) {
    fs::path out = temp_path("strag");
    std::vector<std::string> args = {"run",
                                     "experiments/schemes/stragglers-base.json",
                                     "--out",
                                     out.string(),
                                     "--quiet",
                                     "--set",
                                     "scheme.type=" + scheme};
    if (scheme == "async") args.insert(args.end(), {"--set", "scheme.servers=16"});
    if (straggler)
      args.insert(args.end(), {"--set", "variability.stragglers.fraction=0.0625", "--set",
                               "variability.stragglers.slowdown=2"});
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const double t = json::parse(slurp(out / "summary.json"))["throughput_samples_per_s"];
    fs::remove_all(out);
    return t;
  };
  const double sync = throughput("sync", true) / throughput("sync", false);
  const double async = throughput("async", true) / throughput("async", false);
  EXPECT_NEAR(sync, 0.5, 0.05);
  EXPECT_GE(async, 15.0 / 16);
}

TEST(Variability, RedrawnStragglersAndLinkNoiseAreSeeded) {
  auto summary = [](std::vector<std::string> sets) {
    fs::path out = temp_path("var");
    std::vector<std::string> args = {"run", kIdealStar, "--out", out.string(), "--quiet"};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string csv = slurp(out / "iterations.csv");
    fs::remove_all(out);
    return csv;
  };
  const std::vector<std::string> redraw = {"variability.stragglers.fraction=0.25",
                                           "variability.stragglers.slowdown=2",
                                           "variability.stragglers.redraw=true"};
  EXPECT_EQ(summary(redraw), summary(redraw));
  EXPECT_NE(summary(redraw),
            summary({"variability.stragglers.fraction=0.25", "variability.stragglers.slowdown=2"}));
  const std::vector<std::string> noise = {"variability.link_noise=0.2"};
  EXPECT_EQ(summary(noise), summary(noise));
  EXPECT_NE(summary(noise), summary({}));
  EXPECT_NE(summary({"variability.compute_jitter=0.1", "variability.jitter_distribution=uniform"}),
            summary({"variability.compute_jitter=0.1"}));
}

TEST(MgWfbpExperiment, NeverSlowerThanWfbpOnBCaffeGoogLeNet) {
  // experiments/mgwfbp/run.sh on the measured per-layer logs (2, 4, 8 nodes).
  const fs::path out = temp_path("mgwfbp.md");
  const std::string cmd = std::string("cd ") + SGDSIM_SOURCE_DIR +
                          " && experiments/mgwfbp/run.sh " + sgdsim_binary() + " > " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::istringstream table(slurp(out));
  std::string line;
  int rows = 0;
  while (std::getline(table, line)) {
    double nodes, none, wfbp, mg;
    if (std::sscanf(line.c_str(), "| %lf | %lf | %lf | %lf |", &nodes, &none, &wfbp, &mg) != 4)
      continue;
    ++rows;
    EXPECT_LE(mg, wfbp * (1 + 1e-9)) << line;
    EXPECT_LT(wfbp, none) << line;
  }
  EXPECT_EQ(rows, 3);
  fs::remove(out);
}

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
}  // namespace

TEST(Training, ConvergesDeterministicallyAndReportsIt) {
  fs::path a, b;
  json s = run_on_ideal_star(kTraining, &a);
  run_on_ideal_star(kTraining, &b);
  EXPECT_EQ(slurp(a / "convergence.csv"), slurp(b / "convergence.csv"));
  EXPECT_EQ(count_lines(slurp(a / "convergence.csv")), 1 + 6);
  EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.8);
  EXPECT_EQ(s["training"]["proxy_model"], "mlp 32-32-10");
  EXPECT_TRUE(s["training"]["time_to_target_s"].is_null());
  for (auto& d : {a, b}) fs::remove_all(d);
}

TEST(Training, TargetAccuracyStopsTheRunEarly) {
  json s = run_on_ideal_star(with(kTraining, {"training.target_accuracy=0.5", "iterations=400"}));
  ASSERT_FALSE(s["training"]["time_to_target_s"].is_null());
  EXPECT_LT(s["iterations"].get<int>(), 400);
  EXPECT_LE(s["training"]["time_to_target_s"].get<double>(), s["simulated_time_s"].get<double>());
}

TEST(Training, LocalSgdWithPeriodOneTrainsLikeSync) {
  fs::path sync, local;
  run_on_ideal_star(kTraining, &sync);
  run_on_ideal_star(with(kTraining, {"scheme.type=local_sgd", "scheme.period=1"}), &local);
  EXPECT_EQ(slurp(sync / "convergence.csv"), slurp(local / "convergence.csv"));
  for (auto& d : {sync, local}) fs::remove_all(d);
}

TEST(Training, DilocoWithOneInnerStepOuterLrOneAndNoOuterMomentumTrainsLikeSync) {
  // One inner step then the mean (outer lr 1, momentum 0): each replica's momentum evolves
  // linearly, so the mean of the replicas is sync's step.
  fs::path sync, diloco;
  run_on_ideal_star(kTraining, &sync);
  run_on_ideal_star(with(kTraining, {"scheme.type=diloco", "scheme.inner_steps=1",
                                     "scheme.outer_lr=1", "scheme.outer_momentum=0"}),
                    &diloco);
  EXPECT_EQ(slurp(sync / "convergence.csv"), slurp(diloco / "convergence.csv"));
  for (auto& d : {sync, diloco}) fs::remove_all(d);
}

TEST(Training, DilocoIsTimedLikeLocalSgdAndItsOuterStepChangesTheMath) {
  fs::path local, diloco, plain;
  run_on_ideal_star(with(kTraining, {"scheme.type=local_sgd", "scheme.period=5"}), &local);
  run_on_ideal_star(with(kTraining, {"scheme.type=diloco", "scheme.inner_steps=5"}), &diloco);
  run_on_ideal_star(with(kTraining, {"scheme.type=diloco", "scheme.inner_steps=5",
                                     "scheme.outer_nesterov=false"}),
                    &plain);
  EXPECT_EQ(slurp(local / "iterations.csv"), slurp(diloco / "iterations.csv"));
  EXPECT_NE(slurp(local / "convergence.csv"), slurp(diloco / "convergence.csv"));
  EXPECT_NE(slurp(plain / "convergence.csv"), slurp(diloco / "convergence.csv"));
  for (auto& d : {local, diloco, plain}) fs::remove_all(d);
}

TEST(Training, EverySchemeTrains) {
  for (const char* scheme : {"async", "pseudo_sync", "ssp", "diloco"}) {
    json s = run_on_ideal_star(with(kTraining, {std::string("scheme.type=") + scheme}));
    EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.3) << scheme;
  }
}

TEST(Training, ScheduleAndShardsChangeTheMath) {
  fs::path base, warm, noniid;
  run_on_ideal_star(kTraining, &base);
  run_on_ideal_star(
      with(kTraining, {"training.lr_schedule={\"type\": \"warmup\", \"iterations\": 20}"}), &warm);
  run_on_ideal_star(with(kTraining, {"training.shards=by_label"}), &noniid);
  EXPECT_NE(slurp(base / "convergence.csv"), slurp(warm / "convergence.csv"));
  EXPECT_NE(slurp(base / "convergence.csv"), slurp(noniid / "convergence.csv"));
  for (auto& d : {base, warm, noniid}) fs::remove_all(d);
}

namespace {
// convergence.csv without its simulated-time column: the math alone.
std::string math_columns(const fs::path& dir) {
  std::istringstream in(slurp(dir / "convergence.csv"));
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(line.find(',') + 1) + "\n";
  return out;
}
}  // namespace

TEST(Training, SyncFamilyMathDoesNotDependOnTheNetwork) {
  // At 1 Mb/s every allreduce ends long after the next backward pass (pseudo-sync overlaps
  // them): the gradients averaged must still be those of the allreduce's own iteration.
  for (const char* scheme : {"sync", "pseudo_sync"}) {
    fs::path fast, slow;
    const auto sets = with(kTraining, {std::string("scheme.type=") + scheme});
    run_on_ideal_star(sets, &fast);
    run_on_ideal_star(with(sets, {"platform.generate.node_link.bandwidth=1Mbps"}), &slow);
    EXPECT_EQ(math_columns(fast), math_columns(slow)) << scheme;
    EXPECT_NE(slurp(fast / "convergence.csv"), slurp(slow / "convergence.csv")) << scheme;
    for (auto& d : {fast, slow}) fs::remove_all(d);
  }
}

TEST(Training, EachWorkerComputesAtItsOwnReplica) {
  // One worker of four computes 2x slower. Every replica applies the same step at the same
  // step index (pseudo-sync, ssp: the averaged gradient of a fixed earlier step; local SGD:
  // its own gradient, averaged every period), so the math must not depend on who is slow: a
  // shared parameter vector advanced by the fast workers' updates would hand the straggler
  // parameters its own replica does not hold yet.
  const std::vector<std::vector<std::string>> schemes = {
      {"scheme.type=pseudo_sync"},
      {"scheme.type=pseudo_sync", "scheme.predictor=none"},
      {"scheme.type=ssp", "scheme.staleness=2"},
      {"scheme.type=local_sgd", "scheme.period=4"}};
  for (const auto& scheme : schemes) {
    fs::path even, straggler;
    // ResNet-50 timing: compute-bound on the star, so a fast worker's next update comes
    // before the straggler's backward pass ends.
    const auto sets = with(with(kTraining, {"model=resnet50"}), scheme);
    run_on_ideal_star(sets, &even);
    run_on_ideal_star(with(sets, {"variability.stragglers={\"fraction\": 0.25, \"slowdown\": 2}"}),
                      &straggler);
    EXPECT_EQ(math_columns(even), math_columns(straggler)) << scheme.front();
    EXPECT_NE(slurp(even / "convergence.csv"), slurp(straggler / "convergence.csv"))
        << scheme.front();
    for (auto& d : {even, straggler}) fs::remove_all(d);
  }
}

TEST(Training, ModelSameTimesTheTrainedNetwork) {
  fs::path out;
  json s = run_on_ideal_star(with(kTraining, {"model=same"}), &out);
  // The resolved scenario keeps "same", so it runs again as it is.
  EXPECT_EQ(json::parse(slurp(out / "scenario.resolved.json")).value("model", json()), "same");
  fs::remove_all(out);
  EXPECT_EQ(s["model"], "mlp-32-32-10");
  EXPECT_EQ(s["parameters"], 32 * 32 + 32 + 32 * 10 + 10);
  EXPECT_EQ(s["training"]["parameters"], s["parameters"]);
}

TEST(Schemes, AnalyticAsyncPushAndPullAreTimedByTheirRoute) {
  // 2 workers and 1 dedicated server: every push and pull crosses two 5 us, 10 Gb/s links of
  // the ideal star, so each lasts 10 us + bytes / 1.25e9 B/s (no contention at analytic).
  fs::path out;
  run_on_ideal_star({"scheme.type=async", "scheme.servers=1", "scheme.server_placement=dedicated",
                     "workers.count=2", "fidelity=analytic", "output.timeline=true"},
                    &out);
  json tl = json::parse(slurp(out / "timeline.json"));
  int checked = 0;
  for (const auto& e : tl["traceEvents"]) {
    if (!e.contains("name") || (e["name"] != "push" && e["name"] != "pull")) continue;
    const double bytes = e["args"]["bytes"].get<double>();
    EXPECT_NEAR(e["dur"].get<double>() * 1e-6, 10e-6 + bytes / 1.25e9, 1e-9) << e.dump();
    ++checked;
  }
  EXPECT_GT(checked, 0);
  fs::remove_all(out);
}

TEST(Training, CnnOnFashionMnistTimesAndTrainsTheSameNetwork) {
  // model "same": the timed workload is the CNN's own conv and dense layers.
  json s = run_on_ideal_star(
      {"model=same", "workers.count=4", "batch_size=32", "iterations=40", "output.timeline=false",
       "training={\"model\": {\"type\": \"cnn\", \"channels\": [4], \"kernel\": 5, "
       "\"hidden\": [16]}, \"dataset\": \"fashion-mnist\", \"learning_rate\": 0.02, "
       "\"momentum\": 0.9, \"eval_every\": 20}"});
  EXPECT_EQ(s["model"], "cnn-784-c4k5-16-10");
  // conv 4 x (25 + 1); dense 4*12*12 -> 16 -> 10.
  const int params = 4 * 26 + (576 * 16 + 16) + (16 * 10 + 10);
  EXPECT_EQ(s["parameters"], params);
  EXPECT_EQ(s["training"]["parameters"], params);
  EXPECT_EQ(s["training"]["proxy_model"], "cnn 784-c4k5-16-10");
  EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.5);
}

TEST(Schemes, NcclCollectivesAgreeAcrossFidelitiesAndPredict) {
  // 8 workers as 2 nodes x 4: flow, analytic and predict agree on the ideal star for the NCCL
  // algorithms with chunks and channels (one collective stream, so no contention between them).
  for (const char* coll : {"nccl", "double_binary_tree", "hierarchical"}) {
    const std::vector<std::string> sets = {
        std::string("collective.algorithm=") + coll,
        "collective.chunk_bytes=\"256KiB\"",
        "collective.channels=2",
        "collective.intra_algorithm=chain",
        "collective.inter_algorithm=double_binary_tree",
        "workers.per_node=" + std::string(std::string(coll) == "double_binary_tree" ? "1" : "4"),
        "scheme.fusion_bytes=\"25MB\""};
    const double flow = run_on_ideal_star(sets)["iteration_time_s"]["mean"].get<double>();
    std::vector<std::string> analytic_sets = sets;
    analytic_sets.push_back("fidelity=analytic");
    const double analytic =
        run_on_ideal_star(analytic_sets)["iteration_time_s"]["mean"].get<double>();
    EXPECT_NEAR(analytic, flow, 1e-6 * flow) << coll;
    std::vector<std::string> args = {"predict", kIdealStar, "--json"};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    CliResult r = run_sgdsim(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NEAR(json::parse(r.out)["iteration_time_s"].get<double>(), flow, 1e-6 * flow) << coll;
  }
}

TEST(Training, StreamingDilocoSendsEachFragmentAtItsOffsetAsTheRingFormula) {
  // ResNet-50 in 3 buckets of at most 40 MB, 2 fragments, H = 4, no overlap: fragment 0 (the
  // first layers: bucket 2) is synchronized after iterations 3 and 7, fragment 1 (buckets 0
  // and 1) two iterations earlier, after 1 and 5. Each collective takes the ring formula of its
  // bucket's bytes, at flow and analytic fidelity, and each iteration's comm time is the sum over
  // its fragment's buckets.
  for (const char* fidelity : {"flow", "analytic"}) {
    fs::path dir;
    json s = run_on_ideal_star(
        {"scheme={\"type\": \"diloco\", \"inner_steps\": 4, \"fragments\": 2, "
         "\"overlap\": \"none\", \"fusion_bytes\": \"40MB\"}",
         "iterations=9", "output.timeline=true", std::string("fidelity=") + fidelity},
        &dir);
    ASSERT_EQ(s["buckets"].get<int>(), 3);
    std::map<int, std::set<int>> buckets_at;  // iteration -> buckets synchronized
    std::map<int, double> comm_at;            // iteration -> the formulas' sum
    double bytes = 0;
    const json t = json::parse(slurp(dir / "timeline.json"));
    for (const json& e : t["traceEvents"]) {
      if (e.value("cat", "") != "communication" || e["pid"].get<int>() != 0) continue;
      const int it = e["args"]["iteration"].get<int>(), b = e["args"]["bucket"].get<int>();
      const double n = e["args"]["bytes"].get<double>(), formula = ring_s(n);
      EXPECT_NEAR(e["dur"].get<double>() * 1e-6, formula, 1e-6 * formula) << fidelity;
      EXPECT_TRUE(buckets_at[it].insert(b).second) << "bucket " << b << " twice in " << it;
      comm_at[it] += formula;
      if (it < 4) bytes += n;
    }
    const std::map<int, std::set<int>> expected = {{1, {0, 1}}, {3, {2}}, {5, {0, 1}}, {7, {2}}};
    EXPECT_EQ(buckets_at, expected) << fidelity;
    EXPECT_DOUBLE_EQ(bytes, s["gradient_bytes"].get<double>());  // every bucket once per H
    std::istringstream csv(slurp(dir / "iterations.csv"));
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      int worker = 0, it = 0;
      double start = 0, end = 0, time = 0, compute = 0, comm = 0;
      std::sscanf(line.c_str(), "%d,%d,%lf,%lf,%lf,%lf,%lf", &worker, &it, &start, &end, &time,
                  &compute, &comm);
      EXPECT_NEAR(comm, comm_at[it], 1e-8) << fidelity << " iteration " << it;
    }
    fs::remove_all(dir);
  }
}

TEST(Training, StreamingDilocoWithOneFragmentIsDilocoAndMoreFragmentsChangeTheMath) {
  fs::path plain, one, two;
  const std::vector<std::string> diloco = {"scheme.type=diloco", "scheme.inner_steps=4",
                                           "scheme.fusion_bytes=\"1KB\""};
  run_on_ideal_star(with(kTraining, diloco), &plain);
  run_on_ideal_star(with(with(kTraining, diloco), {"scheme.fragments=1"}), &one);
  run_on_ideal_star(with(with(kTraining, diloco), {"scheme.fragments=2"}), &two);
  EXPECT_EQ(slurp(plain / "convergence.csv"), slurp(one / "convergence.csv"));
  EXPECT_EQ(slurp(plain / "iterations.csv"), slurp(one / "iterations.csv"));
  EXPECT_NE(slurp(plain / "convergence.csv"), slurp(two / "convergence.csv"));
  for (auto& d : {plain, one, two}) fs::remove_all(d);
}

TEST(Training, DilocoWithInnerAdamWTrainsAndDiffersFromSgd) {
  fs::path sgd, adamw;
  const std::vector<std::string> diloco = {"scheme.type=diloco", "scheme.inner_steps=5"};
  run_on_ideal_star(with(kTraining, diloco), &sgd);
  json s = run_on_ideal_star(with(with(kTraining, diloco), {"scheme.inner_optimizer=\"adamw\"",
                                                            "training.learning_rate=0.002"}),
                             &adamw);
  EXPECT_NE(slurp(sgd / "convergence.csv"), slurp(adamw / "convergence.csv"));
  EXPECT_EQ(slurp(sgd / "iterations.csv"), slurp(adamw / "iterations.csv"));  // timed alike
  EXPECT_GT(s["training"]["final_accuracy"].get<double>(), 0.5);
  for (auto& d : {sgd, adamw}) fs::remove_all(d);
}

TEST(Schemes, HorovodFusionOfOneLongCycleIsOneBucketAndShortCyclesOverlap) {
  // A 10 s cycle outlasts the backward pass: every gradient is fused into one allreduce, the
  // run of one 1 GB bucket. A 5 ms cycle starts allreduces during the backward pass: more
  // buckets and a shorter iteration.
  fs::path one_bucket, long_cycle;
  run_on_ideal_star({"scheme.fusion_bytes=\"1GB\"", "iterations=3"}, &one_bucket);
  const json l = run_on_ideal_star({"scheme.fusion_bytes=\"1GB\"", "scheme.merge=horovod",
                                    "scheme.cycle_time=10s", "iterations=3"},
                                   &long_cycle);
  EXPECT_EQ(l["buckets"], 1);
  EXPECT_EQ(slurp(one_bucket / "iterations.csv"), slurp(long_cycle / "iterations.csv"));
  const json s = run_on_ideal_star({"scheme.fusion_bytes=\"1GB\"", "scheme.merge=horovod",
                                    "scheme.cycle_time=5ms", "iterations=3"});
  EXPECT_GT(s["buckets"].get<int>(), 1);
  EXPECT_LT(s["iteration_time_s"]["p50"].get<double>(), l["iteration_time_s"]["p50"].get<double>());
  fs::remove_all(one_bucket);
  fs::remove_all(long_cycle);
}
