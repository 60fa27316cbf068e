// Chakra ET workloads end to end: the ASTRA-sim data-parallel workload from its Chakra form
// equals sgdsim's own profile of it under every scheme (1e-9), a pipeline with point-to-point
// messages matches its closed form, `dag --format chakra` exports files that simulate to the
// same time, `trace --format chakra` summarizes one rank, ALL_GATHER and REDUCE_SCATTER nodes
// run with comm_size read as ASTRA-sim reads it, and the ASTRA-sim side-by-side scripts write
// ASTRA-sim's inputs and sgdsim's rows.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kChakra = "experiments/astra_sim/dp_chakra.json";
const std::string kProfile = "experiments/astra_sim/dp_profile.json";
const std::string kPipe = "tests/data/chakra/pipe.json";

double sim_time(const json& s) {
  return s["simulated_time_s"].get<double>();
}

}  // namespace

TEST(Chakra, AstraDpWorkloadEqualsItsProfileUnderEveryScheme) {
  for (const char* scheme : {"sync", "pseudo_sync", "async", "ssp", "local_sgd"}) {
    const std::string set = std::string("scheme.type=") + scheme;
    const json c = run_scenario_summary(kChakra, {set});
    const json p = run_scenario_summary(kProfile, {set});
    EXPECT_NEAR(sim_time(c), sim_time(p), 1e-9 * sim_time(p)) << scheme;
    EXPECT_EQ(c["activities"], p["activities"]) << scheme;
    EXPECT_EQ(c["iterations"], 10) << scheme;
  }
  // Sync: every iteration is 60 ms of compute, the last 256 MiB ring allreduce (8 ranks,
  // 50 GiB/s, 500 ns per hop) and the optimizer step (4 FLOPs x 2^28 parameters at 15 Tf).
  const json c = run_scenario_summary(kChakra, {});
  const double ring = 2.0 * 7 * 500e-9 + 2.0 * 7 / 8 * 268435456.0 / (50.0 * 1073741824.0);
  const double update = 4.0 * 268435456 / 15e12;
  const double expected = 10 * (60e-3 + ring + update);
  EXPECT_NEAR(sim_time(c), expected, 1e-9 * expected);
  // workload.optimizer "trace": the traces hold no optimizer step, so none is added.
  const json t = run_scenario_summary(kChakra, {"workload.optimizer=\"trace\""});
  EXPECT_NEAR(sim_time(t), 10 * (60e-3 + ring), 1e-9 * sim_time(t));
}

TEST(Chakra, PipelineWithMessagesMatchesItsClosedForm) {
  // 10 us route latency (two 5 us links), 1.25 GB/s; 1 MB messages, a 4 MB two-rank ring.
  const double msg = 10e-6 + 1e6 / 1.25e9;
  const double ring = 2.0 * 10e-6 + 4e6 / 1.25e9;
  const double update = 4.0 * 1e6 / 10e12, predict = 32.0 * 1e6 / 10e12;  // arrses: 32 / param
  const double chain = 5e-3 + msg + 5e-3 + 10e-3 + msg + 10e-3;
  const json sync = run_scenario_summary(kPipe, {});
  EXPECT_NEAR(sync["iteration_time_s"]["mean"].get<double>(), chain + ring + update, 1e-9);
  // pseudo_sync: the allreduce overlaps the next iteration's pipeline.
  const json ps = run_scenario_summary(kPipe, {"scheme.type=pseudo_sync"});
  EXPECT_NEAR(ps["iteration_time_s"]["mean"].get<double>(), chain + predict + update, 1e-9);
  EXPECT_EQ(ps["staleness"]["max"], 1);
  // async cannot run messages between workers that never wait for each other.
  const CliResult r =
      run_sgdsim({"run", kPipe, "--set", "scheme.type=async", "--out", temp_path("c").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/scheme/type: \"async\" with a Chakra workload that has point-to-point"),
            std::string::npos)
      << r.err;
}

TEST(Chakra, DagExportSimulatesToTheSameTime) {
  // The optimizer step becomes a COMP node of whole microseconds: a device speed that makes it
  // exactly 1 ms (4 x 2^28 FLOPs at 2^30 x 1000 FLOP/s) keeps the round trip exact.
  const std::string speed = "platform.generate.device_speed=\"1.073741824Tf\"";
  const fs::path dir = temp_path("chakra-export");
  const std::string prefix = (dir / "dp").string();
  const CliResult e =
      run_sgdsim({"dag", kProfile, "--format", "chakra", "--out", prefix, "--set", speed});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("wrote 8 Chakra ET files"), std::string::npos) << e.out;
  for (int r = 0; r < 8; ++r) EXPECT_TRUE(fs::exists(prefix + "." + std::to_string(r) + ".et"));
  const json p = run_scenario_summary(kProfile, {speed});
  const json c = run_scenario_summary(
      kChakra, {speed, "workload.chakra=\"" + prefix + "\"", "workload.optimizer=\"trace\""});
  EXPECT_NEAR(sim_time(c), sim_time(p), 1e-9 * sim_time(p));
  // The exported rank trace: forward, four backward steps, four allreduces, the update.
  const CliResult t = run_sgdsim({"trace", prefix + ".0.et", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const json j = json::parse(t.out);
  EXPECT_EQ(j["collectives"].size(), 4u);
  EXPECT_NEAR(j["steps"][0]["compute_s"].get<double>(), 61e-3, 1e-12);
  fs::remove_all(dir);
  // Async's parameter servers have no Chakra form.
  const CliResult a = run_sgdsim(
      {"dag", kProfile, "--format", "chakra", "--out", prefix, "--set", "scheme.type=async"});
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("no Chakra form"), std::string::npos) << a.err;
}

TEST(Chakra, AllGatherAndReduceScatterAreTimedAsAstraSimReadsTheirSizes) {
  // ops.json: 1 ms forward, ALL_GATHER of 1 MiB per rank (4 MiB gathered), 2 ms backward,
  // REDUCE_SCATTER of 4 MiB; a ring of 4 moves 1 MiB a step in both, 3 steps each, 10 us and
  // 1.25 GB/s a hop; the optimizer step for the reduce-scattered 4 MiB (2^20 parameters).
  const std::string ops = "tests/data/chakra/ops.json";
  const double step = 10e-6 + 1048576.0 / 1.25e9;
  const double expected = 3e-3 + 6 * step + 4.0 * 1048576 / 10e12;
  for (const char* fidelity : {"flow", "analytic"}) {
    const json j = run_scenario_summary(ops, {std::string("fidelity=") + fidelity});
    EXPECT_NEAR(j["iteration_time_s"]["mean"].get<double>(), expected, 1e-9 * expected) << fidelity;
    EXPECT_EQ(j["gradient_bytes"].get<double>(), 4194304.0) << fidelity;
  }
  // `trace` counts an ALL_GATHER as the gathered whole: comm_size x the 4 ranks of the names.
  const CliResult t = run_sgdsim({"trace", "tests/data/chakra/ops.0.et", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const json coll = json::parse(t.out)["collectives"];
  ASSERT_EQ(coll.size(), 2u);
  EXPECT_EQ(coll[0]["name"], "allgather");
  EXPECT_EQ(coll[0]["bytes"].get<double>(), 4194304.0);
  EXPECT_EQ(coll[1]["bytes"].get<double>(), 4194304.0);
  // Schemes that average every bucket as a gradient, and collectives without the operations.
  for (const auto& [set, where] : std::vector<std::pair<std::string, std::string>>{
           {"scheme.type=pseudo_sync", "/scheme/type: \"pseudo_sync\" with a Chakra workload"},
           {"scheme.type=local_sgd", "/scheme/type: \"local_sgd\" with a Chakra workload"},
           {"collective.algorithm=\"tree\"",
            "/collective/algorithm: expected a collective that runs allgather (auto, "}}) {
    const CliResult r = run_sgdsim({"run", ops, "--set", set, "--out", temp_path("o").string()});
    EXPECT_EQ(r.exit_code, 2) << set;
    EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
  }
  // FSDP's all-gathers and reduce-scatters exported (ALL_GATHER with one rank's part) and run
  // again under sync take the FSDP run's time.
  const std::string speed = "platform.generate.device_speed=\"1.073741824Tf\"";
  const fs::path dir = temp_path("chakra-fsdp");
  const std::string prefix = (dir / "dp").string();
  const CliResult e = run_sgdsim({"dag", kProfile, "--format", "chakra", "--out", prefix, "--set",
                                  speed, "--set", "scheme.type=fsdp"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const json p = run_scenario_summary(kProfile, {speed, "scheme.type=fsdp"});
  const json c = run_scenario_summary(
      kChakra, {speed, "workload.chakra=\"" + prefix + "\"", "workload.optimizer=\"trace\""});
  EXPECT_NEAR(sim_time(c), sim_time(p), 1e-9 * sim_time(p));
  EXPECT_EQ(c["activities"], p["activities"]);
  fs::remove_all(dir);
}

TEST(Chakra, CollectivesSideBySideScriptTimesEachCollectiveByItsFormula) {
  // One COMM_COLL node of 1 MiB on 4 ranks, 250 ns links of 50 GiB/s (500 ns a route):
  // ALL_REDUCE 6 steps of 256 KiB, ALL_GATHER 3 of 1 MiB, REDUCE_SCATTER 3 of 256 KiB.
  const fs::path out = temp_path("astra-coll");
  ASSERT_EQ(
      std::system((std::string("experiments/astra_sim/collectives_side_by_side.sh ") +
                   sgdsim_binary() + " - '" + out.string() + "' 4 > '" + out.string() + ".md'")
                      .c_str()),
      0);
  const std::string table = slurp(out.string() + ".md");
  const double gib_s = 50.0 * 1073741824.0;
  auto grouped = [](double ns) {  // "32,296.9", as the script prints
    std::string s = fmt::format("{:.1f}", ns);
    for (int i = static_cast<int>(s.find('.')) - 3; i > 0; i -= 3) s.insert(i, ",");
    return s;
  };
  auto row = [&](const char* kind, int steps, double step_bytes) {
    const std::string ns = grouped(steps * (500.0 + step_bytes / gib_s * 1e9));
    return fmt::format("| {} | 4 | not run | {} ns | {} ns |", kind, ns, ns);
  };
  for (const std::string& r : {row("ALL_REDUCE", 6, 262144.0), row("ALL_GATHER", 3, 1048576.0),
                               row("REDUCE_SCATTER", 3, 262144.0)})
    EXPECT_NE(table.find(r), std::string::npos) << r << "\n" << table;
  EXPECT_NE(slurp(out / "astra" / "network_4.yml").find("topology: [ Ring ]"), std::string::npos);
  fs::remove_all(out);
  fs::remove(out.string() + ".md");
}

TEST(Chakra, MessagesExportAsSendReceivePairsAndRunAgain) {
  const std::string trace = "workload.optimizer=\"trace\"";
  const fs::path dir = temp_path("chakra-pipe-export");
  const std::string prefix = (dir / "pipe").string();
  const CliResult e =
      run_sgdsim({"dag", kPipe, "--format", "chakra", "--out", prefix, "--set", trace});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const json a = run_scenario_summary(kPipe, {trace});
  const json b = run_scenario_summary(kPipe, {trace, "workload.chakra=\"" + prefix + "\""});
  EXPECT_NEAR(sim_time(b), sim_time(a), 1e-9 * sim_time(a));
  const CliResult t = run_sgdsim({"trace", prefix + ".1.et", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const json j = json::parse(t.out);
  std::vector<std::string> names;
  for (const auto& c : j["collectives"]) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"recv", "send", "allreduce"}));
  fs::remove_all(dir);
}

TEST(Chakra, TraceSummarizesOneRank) {
  const CliResult r = run_sgdsim({"trace", "tests/data/chakra/pipe.0.et", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "chakra");
  EXPECT_EQ(j["rank"], 0);
  EXPECT_EQ(j["world_size"], 2);
  EXPECT_NEAR(j["steps"][0]["compute_s"].get<double>(), 15e-3, 1e-12);
  ASSERT_EQ(j["collectives"].size(), 3u);
  EXPECT_EQ(j["collectives"][0]["name"], "send");
  EXPECT_EQ(j["collectives"][2]["name"], "allreduce");
  EXPECT_EQ(j["collectives"][2]["bytes"], 4e6);
}

TEST(Chakra, ManyIterationTraceRunOnceEqualsOneIterationRepeated) {
  // make_dp_et.py --iterations writes ASTRA-sim's form of 10 sync iterations (each forward
  // after the previous allreduces); run once it gives sgdsim's 10 repeats of one iteration.
  const fs::path dir = temp_path("chakra-iterations");
  const std::string prefix = (dir / "dp").string();
  ASSERT_EQ(std::system(("/usr/bin/python3 experiments/astra_sim/make_dp_et.py '" + prefix +
                         "' --iterations 10")
                            .c_str()),
            0);
  const std::string trace = "workload.optimizer=\"trace\"";
  const json once =
      run_scenario_summary(kChakra, {trace, "workload.chakra=\"" + prefix + "\"", "iterations=1"});
  const json repeated = run_scenario_summary(kChakra, {trace});
  EXPECT_NEAR(sim_time(once), sim_time(repeated), 1e-9 * sim_time(repeated));
  fs::remove_all(dir);
}

TEST(Chakra, SideBySideScriptsWriteAstraSimInputsAndSgdsimTables) {
  // Without an ASTRA-sim binary ("-") the scripts run sgdsim alone and leave ASTRA-sim's files.
  const fs::path dp = temp_path("astra-dp"), ft = temp_path("astra-ft");
  const std::string bin = sgdsim_binary();
  ASSERT_EQ(std::system(("ITERATIONS=2 experiments/astra_sim/side_by_side.sh " + bin + " - '" +
                         dp.string() + "' 8 > '" + dp.string() + ".md'")
                            .c_str()),
            0);
  EXPECT_NE(slurp(dp.string() + ".md").find("| 8 x 2 | not run | 137,514,000 ns |"),
            std::string::npos)
      << slurp(dp.string() + ".md");  // 2 x (60 ms + 2 x 7 x 500 ns + 7/4 x 256 MiB / 50 GiB/s)
  EXPECT_NE(slurp(dp / "astra" / "network_8.yml").find("npus_count: [ 8 ]"), std::string::npos);
  ASSERT_EQ(std::system(("experiments/astra_sim/fat_tree_side_by_side.sh " + bin + " - '" +
                         ft.string() + "' 64 > '" + ft.string() + ".md'")
                            .c_str()),
            0);
  EXPECT_NE(slurp(ft.string() + ".md").find("| 64 (16) | not run |"), std::string::npos);
  const std::string network = slurp(ft / "astra" / "network_64.yml");
  EXPECT_NE(network.find("topology: [ Ring, Switch ]"), std::string::npos) << network;
  EXPECT_NE(network.find("npus_count: [ 4, 16 ]"), std::string::npos) << network;
  EXPECT_NE(slurp(ft / "astra" / "system.json")
                .find("\"all-reduce-implementation\": [\"ring\", "
                      "\"ring\"]"),
            std::string::npos);
  for (int r : {0, 63}) EXPECT_TRUE(fs::exists(ft / "et" / "n64" / fmt::format("r.{}.et", r)));
  for (const fs::path& p : {dp, ft}) {
    fs::remove_all(p);
    fs::remove(p.string() + ".md");
  }
}
