// zero and fsdp on the contention-free star (tests/data/ideal-star.json: 8 workers, route alpha
// 10 us, 10 Gb/s): iteration times equal the formulas, flow equals analytic, the math equals
// sync's byte for byte, and device.memory stops a run that does not fit. On nccl_tuner (the
// star, and two nodes of 8 GPUs in example 18) the collectives pay NCCL's ring latency and flow
// equals analytic.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Ring all-gather or reduce-scatter of n bytes on the 8 workers: 7 (a + n/8 b).
double half_ring_s(double n) {
  return 7 * (10e-6 + n / 8 / 1.25e9);
}

}  // namespace

TEST(Sharding, Zero3WithoutOverlapIsComputePlusThreeCollectivesPerUnit) {
  for (const char* fidelity : {"flow", "analytic"}) {
    json s = run_on_ideal_star(
        {"scheme={\"type\": \"zero\", \"stage\": 3, \"prefetch\": false, \"overlap\": "
         "\"none\", \"fusion_bytes\": \"1GB\"}",
         std::string("fidelity=") + fidelity});
    const double g = s["gradient_bytes"].get<double>();
    const double expected = s["compute_s_per_iter"].get<double>() +
                            s["update_s_per_iter"].get<double>() + 3 * half_ring_s(g);
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
    EXPECT_NEAR(s["comm_s_per_iter"].get<double>(), 3 * half_ring_s(g), 1e-9) << fidelity;
  }
}

// On nccl_tuner each of the three collectives also pays NCCL's ring latency: the base latency
// (8.4 us) and p - 1 = 7 steps, all between nodes (14 us each); flow equals analytic.
TEST(Sharding, Zero3OnNcclTunerPaysNcclsRingLatencyPerCollective) {
  for (const char* fidelity : {"flow", "analytic"}) {
    json s = run_on_ideal_star(
        {"scheme={\"type\": \"zero\", \"stage\": 3, \"prefetch\": false, \"overlap\": "
         "\"none\", \"fusion_bytes\": \"1GB\"}",
         "collective={\"algorithm\": \"nccl_tuner\"}", std::string("fidelity=") + fidelity});
    const double g = s["gradient_bytes"].get<double>();
    const double collective = 8.4e-6 + 7 * 14e-6 + half_ring_s(g);
    const double expected = s["compute_s_per_iter"].get<double>() +
                            s["update_s_per_iter"].get<double>() + 3 * collective;
    EXPECT_NEAR(s["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
  }
}

// FSDP's MixedPrecision with bf16 parameters and fp32 reductions (torchtitan's default): the
// all-gathers move 2 bytes a parameter, the reduce-scatter 4; "gradient" keeps 2 for all three.
TEST(Sharding, FsdpReducesInReducePrecision) {
  std::map<std::string, json> by;
  for (const char* r : {"gradient", "fp32", "bf16"})
    by[r] = run_on_ideal_star(
        {"scheme={\"type\": \"fsdp\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
         "\"reduce_precision\": \"" +
             std::string(r) + "\"}",
         "gradient_precision=\"bf16\"", "fidelity=analytic"});
  const double g = by["gradient"]["gradient_bytes"].get<double>();  // 2 bytes a parameter
  EXPECT_NEAR(by["gradient"]["comm_s_per_iter"].get<double>(), 3 * half_ring_s(g), 1e-9);
  EXPECT_NEAR(by["bf16"]["comm_s_per_iter"].get<double>(), 3 * half_ring_s(g), 1e-9);
  EXPECT_NEAR(by["fp32"]["comm_s_per_iter"].get<double>(), 2 * half_ring_s(g) + half_ring_s(2 * g),
              1e-9);
}

TEST(Sharding, Zero2IsTheAllreduceSplitAroundTheShardedStep) {
  // One bucket: reduce-scatter, a step over 1/8 of the parameters, all-gather: sync's ring
  // allreduce time, the update 8 times shorter.
  json sync = run_on_ideal_star(
      {"scheme={\"type\": \"sync\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\"}"});
  json z2 =
      run_on_ideal_star({"scheme={\"type\": \"zero\", \"stage\": 2, \"overlap\": \"none\", "
                         "\"fusion_bytes\": \"1GB\"}"});
  EXPECT_NEAR(z2["update_s_per_iter"].get<double>(), sync["update_s_per_iter"].get<double>() / 8,
              1e-15);
  const double expected = z2["compute_s_per_iter"].get<double>() +
                          z2["update_s_per_iter"].get<double>() +
                          2 * half_ring_s(z2["gradient_bytes"].get<double>());
  EXPECT_NEAR(z2["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected);
}

TEST(Sharding, FlowEqualsAnalyticWithPrefetchAndHybridGroups) {
  for (const std::string& scheme :
       {std::string("{\"type\": \"fsdp\", \"forward_prefetch\": true, \"fusion_bytes\": \"25MB\"}"),
        std::string("{\"type\": \"fsdp\", \"backward_prefetch\": \"backward_post\", "
                    "\"fusion_bytes\": \"25MB\"}"),
        std::string("{\"type\": \"zero\", \"stage\": 1, \"fusion_bytes\": \"25MB\"}"),
        std::string("{\"type\": \"fsdp\", \"hybrid\": true, \"shard_group\": 4, "
                    "\"fusion_bytes\": \"25MB\"}")}) {
    json flow = run_on_ideal_star({"scheme=" + scheme, "fidelity=flow"});
    json analytic = run_on_ideal_star({"scheme=" + scheme, "fidelity=analytic"});
    const double f = flow["iteration_time_s"]["mean"].get<double>();
    EXPECT_NEAR(analytic["iteration_time_s"]["mean"].get<double>(), f, 1e-9 * f) << scheme;
  }
}

TEST(Sharding, PrefetchOverlapsTheGathersWithCompute) {
  json none =
      run_on_ideal_star({"scheme={\"type\": \"fsdp\", \"backward_prefetch\": \"none\", "
                         "\"fusion_bytes\": \"25MB\"}"});
  json both = run_on_ideal_star(
      {"scheme={\"type\": \"fsdp\", \"forward_prefetch\": true, \"fusion_bytes\": "
       "\"25MB\"}"});
  EXPECT_LT(both["iteration_time_s"]["mean"].get<double>(),
            none["iteration_time_s"]["mean"].get<double>());
  EXPECT_LT(both["exposed_comm_s_per_iter"].get<double>(),
            none["exposed_comm_s_per_iter"].get<double>());
}

TEST(Sharding, TrainsByteIdenticallyToSync) {
  // Sharding does not change the math: the same losses and accuracies, iteration by iteration.
  const std::vector<std::string> training = {
      "model=same",
      "batch_size=32",
      "iterations=30",
      "output.timeline=false",
      "workers.count=4",
      "training={\"model\": {\"type\": \"mlp\", \"hidden\": [32, 16]}, \"dataset\": "
      "\"synthetic\", \"learning_rate\": 0.05, \"momentum\": 0.9, \"eval_every\": 10}"};
  auto with = [&](const std::string& scheme) {
    std::vector<std::string> sets = training;
    sets.push_back("scheme=" + scheme);
    return sets;
  };
  auto losses = [](const std::string& csv) {  // every column but the simulated time
    std::string out, line;
    std::istringstream in(csv);
    while (std::getline(in, line)) out += line.substr(line.find(',') + 1) + "\n";
    return out;
  };
  fs::path sync;
  run_on_ideal_star(with("{\"type\": \"sync\"}"), &sync);
  const std::string expected = losses(slurp(sync / "convergence.csv"));
  EXPECT_EQ(count_lines(expected), 1 + 3);
  for (const char* scheme :
       {"{\"type\": \"zero\", \"stage\": 1}", "{\"type\": \"zero\", \"stage\": 2}",
        "{\"type\": \"zero\", \"stage\": 3}", "{\"type\": \"fsdp\"}",
        "{\"type\": \"fsdp\", \"hybrid\": true, \"shard_group\": 2}"}) {
    fs::path dir;
    run_on_ideal_star(with(scheme), &dir);
    EXPECT_EQ(losses(slurp(dir / "convergence.csv")), expected) << scheme;
    fs::remove_all(dir);
  }
  fs::remove_all(sync);
}

TEST(Sharding, MemoryIsReportedAndCheckedAgainstTheDevice) {
  // resnet50, fp32 everywhere: 4 + 4 + 4 bytes per parameter replicated (sync), the optimizer
  // state's 4 over 8 workers (stage 1).
  json z1 = run_on_ideal_star({"scheme={\"type\": \"zero\", \"stage\": 1}"});
  const double params = 25557032;
  EXPECT_DOUBLE_EQ(z1["memory"]["model_states_bytes"].get<double>(), params * (8 + 4.0 / 8));
  EXPECT_TRUE(z1["memory"]["activations_bytes"].is_null());
  EXPECT_TRUE(z1["memory"]["capacity_bytes"].is_null());
  // 250 MB holds ZeRO-3's shard but not sync's replica.
  json z3 =
      run_on_ideal_star({"scheme={\"type\": \"zero\", \"stage\": 3}", "device.memory=\"250MB\""});
  EXPECT_TRUE(z3["memory"]["fits"].get<bool>());
  CliResult r = run_sgdsim(
      {"run", kIdealStar, "--set", "device.memory=\"250MB\"", "--out", temp_path("mem").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/device/memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0.307 GB"), std::string::npos) << r.err;  // 12 x 25.6M parameters
  json flagged = run_on_ideal_star({"device.memory=\"250MB\"", "device.memory_overflow=flag"});
  EXPECT_FALSE(flagged["memory"]["fits"].get<bool>());
}

// nccl_tuner on two nodes of 8 GPUs (example 18): FSDP's small units (LL and LL128 where
// NCCL's tuner picks them), HSDP's shard and replica groups and ZeRO-1 time the same at flow
// and analytic fidelity.
TEST(Sharding, NcclTunerOnMultiGpuNodesFlowEqualsAnalytic) {
  for (const std::string& scheme :
       {std::string("{\"type\": \"fsdp\", \"fusion_bytes\": \"256KB\"}"),
        std::string("{\"type\": \"fsdp\", \"hybrid\": true, \"shard_group\": 4, "
                    "\"fusion_bytes\": \"25MB\"}"),
        std::string("{\"type\": \"zero\", \"stage\": 1, \"fusion_bytes\": \"25MB\"}")}) {
    const std::string example = "experiments/examples/18-nccl-tuner-a100-ib.json";
    json flow = run_scenario_summary(example, {"scheme=" + scheme, "iterations=3"});
    json analytic =
        run_scenario_summary(example, {"scheme=" + scheme, "iterations=3", "fidelity=analytic"});
    const double f = flow["iteration_time_s"]["mean"].get<double>();
    EXPECT_NEAR(analytic["iteration_time_s"]["mean"].get<double>(), f, 1e-9 * f) << scheme;
  }
}

namespace {

// fsdp, one unit, no overlap, `accumulation_steps` micro-batches synchronized as `sync` says.
json accumulating_fsdp(int micro_batches, const std::string& sync, const std::string& fidelity,
                       const std::string& hybrid = "") {
  return run_on_ideal_star(
      {"scheme={\"type\": \"fsdp\", \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
       "\"accumulation_steps\": " +
           std::to_string(micro_batches) + ", \"accumulation_sync\": \"" + sync + "\"" + hybrid +
           "}",
       "fidelity=" + fidelity});
}

}  // namespace

// Gradient accumulation: every micro-batch computes and all-gathers twice (the parameters are
// resharded after each backward); "every" reduce-scatters after each one, "last" only after
// the last (FSDP2's set_requires_gradient_sync(False)), holding the unsharded gradient.
TEST(Sharding, FsdpAccumulationGathersEveryMicroBatchAndReducesAsSyncSays) {
  for (const char* fidelity : {"flow", "analytic"}) {
    const json one = accumulating_fsdp(1, "every", fidelity);
    const double compute = one["compute_s_per_iter"].get<double>();
    const double update = one["update_s_per_iter"].get<double>();
    const double collective = half_ring_s(one["gradient_bytes"].get<double>());
    const json every = accumulating_fsdp(3, "every", fidelity);
    const json last = accumulating_fsdp(3, "last", fidelity);
    const double t_every = 3 * compute + update + 9 * collective;
    const double t_last = 3 * compute + update + 7 * collective;
    EXPECT_NEAR(every["iteration_time_s"]["mean"].get<double>(), t_every, 1e-9 * t_every);
    EXPECT_NEAR(last["iteration_time_s"]["mean"].get<double>(), t_last, 1e-9 * t_last);
    EXPECT_DOUBLE_EQ(every["memory"]["gradients_bytes"].get<double>(),
                     one["memory"]["gradients_bytes"].get<double>());
    EXPECT_DOUBLE_EQ(last["memory"]["gradients_bytes"].get<double>(),
                     one["gradient_bytes"].get<double>());
  }
}

// HSDP over shard groups of 4: "every" reduce-scatters over the group and allreduces the
// quarter across the 2 groups after each micro-batch, "reduce_scatter" allreduces only after
// the last (set_requires_all_reduce(False)), "last" does neither before it.
TEST(Sharding, HsdpAccumulationSkipsTheAllreduceOrBoth) {
  const std::string hybrid = ", \"hybrid\": true, \"shard_group\": 4";
  for (const char* fidelity : {"flow", "analytic"}) {
    const json one = accumulating_fsdp(1, "every", fidelity, hybrid);
    const double g = one["gradient_bytes"].get<double>();
    const double in_group = 3 * (10e-6 + g / 4 / 1.25e9);    // ring over 4 ranks
    const double across = 2 * (10e-6 + g / 4 / 2 / 1.25e9);  // ring allreduce of g/4 over 2
    const double base = 3 * one["compute_s_per_iter"].get<double>() +
                        one["update_s_per_iter"].get<double>() + 6 * in_group;
    const std::map<std::string, double> expected = {
        {"every", base + 3 * (in_group + across)},
        {"reduce_scatter", base + 3 * in_group + across},
        {"last", base + in_group + across}};
    for (const auto& [sync, t] : expected)
      EXPECT_NEAR(
          accumulating_fsdp(3, sync, fidelity, hybrid)["iteration_time_s"]["mean"].get<double>(), t,
          1e-9 * t)
          << sync << " " << fidelity;
  }
}

// DeepSpeed's accumulation: stage 1 reduce-scatters at the boundary only, stages 2 and 3 after
// every micro-batch; stage 3 all-gathers twice per micro-batch, stages 1 and 2 once after the
// step (one unit, no overlap, no prefetch).
TEST(Sharding, ZeroAccumulationReducesPerMicroBatchFromStageTwo) {
  const std::map<int, double> collectives = {{1, 2}, {2, 4}, {3, 9}};
  for (const auto& [stage, count] : collectives)
    for (const char* fidelity : {"flow", "analytic"}) {
      auto run = [&](int micro_batches) {
        return run_on_ideal_star(
            {"scheme={\"type\": \"zero\", \"stage\": " + std::to_string(stage) +
                 ", \"prefetch\": false, \"overlap\": \"none\", \"fusion_bytes\": \"1GB\", "
                 "\"accumulation_steps\": " +
                 std::to_string(micro_batches) + "}",
             std::string("fidelity=") + fidelity});
      };
      const json one = run(1);
      const double t = 3 * one["compute_s_per_iter"].get<double>() +
                       one["update_s_per_iter"].get<double>() +
                       count * half_ring_s(one["gradient_bytes"].get<double>());
      EXPECT_NEAR(run(3)["iteration_time_s"]["mean"].get<double>(), t, 1e-9 * t)
          << "stage " << stage << " " << fidelity;
    }
}
