// End-to-end behaviour of sgdsim trace and sgdsim validate: the timeline round trip, the
// shipped validation cases, and malformed traces (exit 2, one line naming the file).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kValidation = SGDSIM_SOURCE_DIR "/data/validation/";
const std::string kHta = kValidation + "hta/nccl_parser_config/nccl_data.json.gz";

fs::path write_temp(const std::string& tag, const std::string& content) {
  fs::path p = temp_path(tag);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

/// Runs `sgdsim trace FILE args...` and checks the bad-input rule: exit 2, one stderr line
/// that names the file and contains `expect`.
void expect_bad_trace(const fs::path& file, const std::string& expect,
                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"trace", file.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(expect), std::string::npos) << "expected: " << expect << "\ngot: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace

TEST(TraceCli, HtaTraceAsJson) {
  CliResult r = run_sgdsim({"trace", kHta, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "kineto");
  EXPECT_EQ(j["world_size"], 2);
  ASSERT_EQ(j["steps"].size(), 3u);
  for (const char* k : {"step", "time_s", "compute_s", "comm_s"})
    EXPECT_TRUE(j["steps"][0].contains(k));
  EXPECT_EQ(j["collectives"].size(), 21u);
  for (const char* k : {"name", "bytes", "time_s"}) EXPECT_TRUE(j["collectives"][0].contains(k));
  EXPECT_NEAR(j["stats"]["step_mean_s"].get<double>(), 0.2223684, 1e-6);
}

TEST(TraceCli, WritesDdpProfileThatRuns) {
  fs::path profile = temp_path("ddp.json");
  CliResult r = run_sgdsim({"trace", kHta, "--out", profile.string(), "--batch-size", "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per-layer profile, 108 layers (107 with parameters; 5 DDP buckets)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("batch size 32"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(slurp(profile))["batch_size"], 32);
  // The profile is usable as a scenario's model, at the traced batch and at twice it
  // (measured times scale linearly with the batch).
  double mean[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    fs::path out = temp_path("ddp-run");
    r = run_sgdsim({"run", SGDSIM_SOURCE_DIR "/tests/data/ideal-star.json", "--set",
                    "model=" + profile.string(), "--set",
                    k == 0 ? "batch_size=32" : "batch_size=64", "--set", "workers.count=1", "--out",
                    out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    mean[k] = json::parse(slurp(out / "summary.json"))["compute_s_per_iter"];
    fs::remove_all(out);
  }
  EXPECT_GT(mean[1], 1.5 * mean[0]);
  fs::remove(profile);
}

TEST(TraceCli, PerLayerProfileSimulatesTheTracedStep) {
  // The scenario sgdsim validate derives for the HTA case (calibrated network, update step,
  // DDP's bucket caps), run with the per-layer profile at the traced batch, as
  // experiments/validation/per_layer.sh does.
  fs::path dir = temp_path("per-layer");
  CliResult r =
      run_sgdsim({"validate", SGDSIM_SOURCE_DIR "/experiments/validation/hta-resnet50-ddp.json",
                  "--out", (dir / "validate").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path profile = dir / "profile.json";
  r = run_sgdsim({"trace", kHta, "--out", profile.string(), "--batch-size", "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json p = json::parse(slurp(profile));
  EXPECT_EQ(p["batch_size"], 32);
  ASSERT_EQ(p["layers"].size(), 108u);
  EXPECT_EQ(p["layers"][1]["parameters"], 9408);
  r = run_sgdsim({"run", (dir / "validate/hta-resnet50-ddp/2-x-A100/scenario.json").string(),
                  "--set", "model=" + profile.string(), "--set", "batch_size=32", "--set",
                  "output.timeline=false", "--out", (dir / "run").string(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = json::parse(slurp(dir / "run/summary.json"));
  EXPECT_EQ(summary["buckets"], 5);  // DDP's buckets, rebuilt by sgdsim's fusion
  const double sim = summary["iteration_time_s"]["mean"];
  const double traced = 0.2223684;  // mean of the trace's 3 steps
  EXPECT_LT(std::abs(sim - traced) / traced, 0.10) << sim;
  fs::remove_all(dir);
  // The single-V100 trace has the same layers; the sampled recommendation-model trace has
  // neither layers nor bucket sizes: exit 2 naming both reasons.
  fs::path one = temp_path("one.json");
  r = run_sgdsim(
      {"trace",
       kValidation + "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
       "--out", one.string(), "--batch-size", "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(slurp(one))["layers"].size(), 108u);
  fs::remove(one);
  expect_bad_trace(kValidation + "hta/trace_filter/sampled_rank-0.json.gz",
                   "no per-layer profile either: step 552: no allreduce launch of known size",
                   {"--out", one.string(), "--batch-size", "32"});
  EXPECT_FALSE(fs::exists(one));
}

TEST(TraceCli, DdpProfileNeedsTheBatchSize) {
  fs::path profile = temp_path("ddp-nobatch.json");
  CliResult r = run_sgdsim({"trace", kHta, "--out", profile.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--out needs --batch-size N"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nccl_data.json.gz"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(profile));
}

TEST(ProfilesCli, ListsTheShippedProfilesAndTheyRunByName) {
  CliResult r = run_sgdsim({"profiles", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, json> by_name;
  for (const auto& p : json::parse(r.out)) by_name[p["name"]] = p;
  for (const char* n : {"resnet50", "bert_base", "bert_large", "gpt2"})
    EXPECT_TRUE(by_name.count(n)) << n;
  // Hugging Face parameter counts of BertModel (base, large) and GPT2Model.
  EXPECT_EQ(by_name["bert_base"]["parameters"], 109482240);
  EXPECT_EQ(by_name["bert_large"]["parameters"], 335141888);
  EXPECT_EQ(by_name["gpt2"]["parameters"], 124439808);
  // GPT2LMHeadModel (gpt2-large, gpt2-xl) and LlamaForCausalLM (Llama-2-7b/13b/70b-hf,
  // Meta-Llama-3-8B).
  EXPECT_EQ(by_name["gpt2_large"]["parameters"], 774030080);
  EXPECT_EQ(by_name["gpt2_xl"]["parameters"], 1557611200);
  EXPECT_EQ(by_name["llama2_7b"]["parameters"], 6738415616);
  EXPECT_EQ(by_name["llama2_13b"]["parameters"], 13015864320);
  EXPECT_EQ(by_name["llama2_70b"]["parameters"], 68976648192);
  EXPECT_EQ(by_name["llama3_8b"]["parameters"], 8030261248);
  EXPECT_EQ(by_name["bert_large"]["layers"], 50);
  EXPECT_EQ(by_name["resnet50"]["batch_size"], 128);
  r = run_sgdsim({"profiles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gpt2"), std::string::npos) << r.out;
  for (const char* n : {"bert_base", "bert_large", "gpt2", "llama3_8b"}) {
    fs::path out = temp_path("profile-run");
    r = run_sgdsim({"run", SGDSIM_SOURCE_DIR "/experiments/examples/02-minimal.json", "--set",
                    std::string("model=") + n, "--set", "workers.count=2", "--set", "iterations=2",
                    "--out", out.string(), "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << n << ": " << r.err;
    fs::remove_all(out);
  }
  r = run_sgdsim({"profiles", "extra"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ProfilesCli, MeasuredProfileAtAnotherDeviceSpeedWarns) {
  fs::path out = temp_path("speed-run");
  CliResult r = run_sgdsim({"run", SGDSIM_SOURCE_DIR "/experiments/examples/02-minimal.json",
                            "--set", "device.speed=\"156Tf\"", "--set", "iterations=2", "--out",
                            out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("sgdsim: warning: model \"resnet50\" has measured layer times"),
            std::string::npos)
      << r.err;
  fs::remove_all(out);
  // A FLOP-based profile follows the device speed: no warning.
  r = run_sgdsim({"run", SGDSIM_SOURCE_DIR "/experiments/examples/02-minimal.json", "--set",
                  "model=bert_base", "--set", "device.speed=\"156Tf\"", "--set", "iterations=2",
                  "--out", out.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  fs::remove_all(out);
}

TEST(TraceCli, TimelineRoundTripGivesSummaryStatistics) {
  for (const std::string example :
       {"04-overlap-wfbp", "11-pseudo-sync", "12-async-parameter-server"}) {
    fs::path out = temp_path("roundtrip");
    CliResult r = run_sgdsim({"run", SGDSIM_SOURCE_DIR "/experiments/examples/" + example + ".json",
                              "--out", out.string(), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json summary = json::parse(slurp(out / "summary.json"));
    r = run_sgdsim({"trace", (out / "timeline.json").string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json t = json::parse(r.out);
    EXPECT_EQ(t["format"], "sgdsim");
    EXPECT_EQ(t["world_size"], summary["workers"]);
    EXPECT_EQ(t["warmup_steps"], summary["warmup_iterations"]);
    EXPECT_EQ(t["steps"].size(), summary["iterations"].get<size_t>());
    const double mean = summary["iteration_time_s"]["mean"];
    EXPECT_NEAR(t["stats"]["step_mean_s"].get<double>(), mean, 1e-6 * mean) << example;
    const double comm = summary["comm_s_per_iter"];
    EXPECT_NEAR(t["stats"]["comm_mean_s"].get<double>(), comm, 1e-6 * comm + 1e-12) << example;
    fs::remove_all(out);
  }
}

TEST(TraceCli, MalformedTracesExitTwoNamingTheFile) {
  const fs::path empty = write_temp("empty.json", "");
  expect_bad_trace(empty, "empty file");
  const fs::path cut = write_temp("cut.json", R"({"traceEvents": [{"ph": "X", "ts": 1)");
  expect_bad_trace(cut, "malformed JSON: parse error", {"--format", "kineto"});
  const fs::path wrong = write_temp("wrong.json", R"({"traceEvents": [{"ph": "X", "ts": "1"}]})");
  expect_bad_trace(wrong, "/traceEvents/0/ts: expected a number, got \"1\"");
  const fs::path gz =
      write_temp("garbage.json.gz", std::string("\x1f\x8b\x08\x00garbage-garbage", 19));
  expect_bad_trace(gz, "gzip data", {"--format", "kineto"});
  const fs::path bcaffe = write_temp("bad-bcaffe.log",
                                     "I0 distributed.cpp:112] [0, 9408, 14690.2, 298]\n"
                                     "I0 distributed.cpp:112] [1, 64, oops, 106]\n");
  expect_bad_trace(bcaffe, "line 2: expected a blob line");
  const fs::path osu = write_temp("bad-osu.log", "# OSU MPI Allreduce\n2,4 31.92\n2,8 abc\n");
  expect_bad_trace(osu, "line 3: expected \"bytes latency_us\"");
  const fs::path nccl = write_temp("bad-nccl.log", "# nThread 1\n8 2 float sum -1 10.8\n");
  expect_bad_trace(nccl, "line 2: expected an nccl-tests data line");
  const fs::path text = write_temp("notes.txt", "nothing to see here\n");
  expect_bad_trace(text, "cannot tell the format");
  // A profile cannot be derived from a latency log.
  CliResult r = run_sgdsim({"trace", kValidation + "bcaffe-googlenet/allreduce2.log", "--out",
                            temp_path("never.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no model profile can be derived from a osu file"), std::string::npos)
      << r.err;
  r = run_sgdsim({"trace", kHta, "--format", "perfetto"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format: expected one of"), std::string::npos) << r.err;
  for (const auto& p : {empty, cut, wrong, gz, bcaffe, osu, nccl, text}) fs::remove(p);
}

TEST(ValidateCli, ShippedCasesMeetTheTarget) {
  fs::path out = temp_path("validate");
  const std::string dir = SGDSIM_SOURCE_DIR "/experiments/validation/";
  CliResult r =
      run_sgdsim({"validate", dir + "hta-resnet50-ddp.json", dir + "bcaffe-googlenet.json",
                  dir + "osu-allreduce.json", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| case | metric | measured | simulated | error % |"), std::string::npos);
  json v = json::parse(slurp(out / "validation.json"));
  for (const auto& e : fs::recursive_directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  ASSERT_FALSE(v["cases"].empty());
  for (const auto& c : v["cases"])
    for (const char* k : {"name", "measured_s", "simulated_s", "error"}) EXPECT_TRUE(c.contains(k));
  const double med = v["median_abs_error"];
  EXPECT_LE(med, 0.10);
  EXPECT_LE(v["median_abs_error_out_of_sample"].get<double>(), 0.10);
  EXPECT_EQ(v["targets"].size(), 7u);
  int iteration_rows = 0;
  for (const auto& c : v["cases"]) {
    iteration_rows += c["metric"] == "iteration";
    EXPECT_NEAR(c["error"].get<double>(),
                (c["simulated_s"].get<double>() - c["measured_s"].get<double>()) /
                    c["measured_s"].get<double>(),
                1e-12);
  }
  EXPECT_EQ(iteration_rows, 4);
  // OSU: the simulated ring on the calibrated ideal star equals `sgdsim calibrate osu`'s check.
  for (const auto& t : v["targets"])
    if (t["case"] == "osu-allreduce" && t["target"] == "8 nodes") {
      EXPECT_NEAR(t["collective_median_abs_error"].get<double>(), 0.133, 0.001);
    }
  // The derived scenario of a target runs as is.
  EXPECT_TRUE(fs::exists(out / "bcaffe-googlenet" / "8-nodes" / "scenario.json"));
  EXPECT_TRUE(fs::exists(out / "bcaffe-googlenet" / "8-nodes" / "run" / "summary.json"));
  fs::remove_all(out);
}

TEST(ValidateCli, BadCasesExitTwo) {
  fs::path out = temp_path("validate-bad");
  const fs::path c1 = write_temp("case.json", "{\"name\": \"x\", \"targets\": [1]}");
  CliResult r = run_sgdsim({"validate", c1.string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(c1.string() + ": /calibration: expected an object"), std::string::npos)
      << r.err;
  const std::string osu = kValidation + "bcaffe-googlenet/allreduce2.log";
  const fs::path c2 = write_temp("case2.json", "{\"calibration\": {\"file\": \"" + osu +
                                                   "\"}, \"targets\": [{\"file\": \"" + osu +
                                                   "\"}], \"scenario\": {\"iterations\": 0}}");
  r = run_sgdsim({"validate", c2.string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("the derived scenario was rejected"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/iterations: expected an integer >= 1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "validation.json"));
  r = run_sgdsim({"validate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("usage: sgdsim validate"), std::string::npos);
  fs::remove_all(out);
  fs::remove(c1);
  fs::remove(c2);
}
