// device.overlap_slowdown: while a collective of the training is under way, every worker
// computes 1 + s times slower. Checked against its formula on a two-layer model whose first
// allreduce runs beside the other layer's backward pass, at both fidelities; without overlap
// nothing changes; analytic equals SimGrid's pstates (analytic_scheduler_test.cpp); a
// platform file declaring the slowed speed as a second pstate gives the generated run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Two workers on the ideal star (10 Gb/s, 5 us a link, 10 us a route), batch 1 at 1 Tflop/s:
// the backward pass runs layer "big" (4 MB of gradient, 0.1 ms) then layer "long" (4 kB,
// 10 ms). With a bucket per layer, big's allreduce (2 steps of 10 us + 2 x 1/2 x 4 MB at
// 1.25 GB/s = 3.22 ms) runs beside long's backward, which it slows.
const std::string kModel =
    R"(model={"name": "two-layers", "kind": "flops", "bytes_per_parameter": 4, "layers": [)"
    R"({"name": "long", "parameters": 1000, "forward_flops": 1e6, "backward_flops": 1e10},)"
    R"({"name": "big", "parameters": 1000000, "forward_flops": 1e6, "backward_flops": 1e8}]})";
const double kBigAllreduce_s = 2 * 10e-6 + 4e6 / 1.25e9;

std::vector<std::string> two_layer_run(const std::string& fidelity, double slowdown) {
  return {kModel,
          "workers.count=2",
          "batch_size=1",
          "device.speed=1Tf",
          "scheme.fusion_bytes=0",
          "fidelity=" + fidelity,
          "output.timeline=false",
          "device.overlap_slowdown=" + std::to_string(slowdown)};
}

}  // namespace

TEST(OverlapSlowdown, ComputeBesideACollectiveRunsSlowerByTheFormula) {
  // Over the allreduce's A seconds long's backward does A / (1 + s) of its work: it ends
  // A s / (1 + s) later, and so does the iteration (the second allreduce and the update
  // follow the backward pass, beside no compute).
  for (const std::string fidelity : {"flow", "analytic"}) {
    const json base = run_on_ideal_star(two_layer_run(fidelity, 0));
    for (const double s : {0.25, 1.0}) {
      const json slowed = run_on_ideal_star(two_layer_run(fidelity, s));
      const double added_s = kBigAllreduce_s * s / (1 + s);
      EXPECT_NEAR(slowed["iteration_time_s"]["p50"].get<double>() -
                      base["iteration_time_s"]["p50"].get<double>(),
                  added_s, 1e-9)
          << fidelity << " s=" << s;
      EXPECT_NEAR(
          slowed["compute_s_per_iter"].get<double>() - base["compute_s_per_iter"].get<double>(),
          added_s, 1e-9)
          << fidelity << " s=" << s;
    }
  }
}

TEST(OverlapSlowdown, WithoutOverlapNothingChanges) {
  // scheme.overlap "none": every collective runs after the backward pass, beside no compute.
  for (const std::string fidelity : {"flow", "analytic"}) {
    fs::path plain, slowed;
    std::vector<std::string> sets = two_layer_run(fidelity, 0);
    sets.push_back("scheme.overlap=none");
    run_on_ideal_star(sets, &plain);
    sets = two_layer_run(fidelity, 0.5);
    sets.push_back("scheme.overlap=none");
    run_on_ideal_star(sets, &slowed);
    EXPECT_EQ(slurp(plain / "iterations.csv"), slurp(slowed / "iterations.csv")) << fidelity;
    fs::remove_all(plain);
    fs::remove_all(slowed);
  }
}

TEST(OverlapSlowdown, APlatformFileDeclaringTheSecondSpeedGivesTheGeneratedRun) {
  // `sgdsim platform` writes the scenario's devices with their slowed speed as a second pstate
  // (speed="S,S/(1+s)"); a run on that file with the same s is the generated platform's run.
  const fs::path dir = temp_path("pstates");
  json scenario = json::parse(slurp(kIdealStar));
  scenario["device"] = {{"overlap_slowdown", 0.25}};
  write_text(dir / "scenario.json", scenario.dump());
  const CliResult written = run_sgdsim(
      {"platform", (dir / "scenario.json").string(), "--output", (dir / "star.xml").string()});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(slurp(dir / "star.xml").find("speed=\"15000000000000f,12000000000000f\""),
            std::string::npos);
  for (const std::string fidelity : {"flow", "analytic"}) {
    fs::path generated, from_file;
    std::vector<std::string> sets = two_layer_run(fidelity, 0.25);
    run_on_ideal_star(sets, &generated);
    sets.push_back(R"(platform={"file": ")" + (dir / "star.xml").string() + R"("})");
    run_on_ideal_star(sets, &from_file);
    EXPECT_EQ(slurp(generated / "iterations.csv"), slurp(from_file / "iterations.csv")) << fidelity;
    fs::remove_all(generated);
    fs::remove_all(from_file);
  }
  fs::remove_all(dir);
}
