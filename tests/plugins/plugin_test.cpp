// A scheme and a collective registered from one file each (lagged_sync_scheme.cpp,
// linear_collective.cpp, linked into this binary only) run end to end, math included, with no
// other file changed: the registries own names, options, update rules and traits.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/app/commands.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/trace/import.hpp"
#include "sim/trace/validation.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `sgdsim ARGS...` in a forked child of this binary (one SimGrid engine per process), so the
/// plugins registered here take part.
Result run_cli(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / ("sgdsim-plugin-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen((dir / "out").c_str(), "w", stdout) ||
        !std::freopen((dir / "err").c_str(), "w", stderr))
      ::_exit(3);
    int rc = 0;
    try {
      rc = sgdsim::dispatch(args);
    } catch (const sgdsim::InputError& e) {
      std::fprintf(stderr, "sgdsim: error: %s\n", e.what());
      rc = 2;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(rc);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(dir / "out"),
           slurp(dir / "err")};
  fs::remove_all(dir);
  return r;
}

/// A scenario of 4 workers training an MLP on the synthetic data with `scheme`.
fs::path write_scenario(const std::string& name, const json& scheme) {
  const json j = {{"model", "resnet50"},
                  {"seed", 7},
                  {"workers", {{"count", 4}}},
                  {"iterations", 12},
                  {"warmup_iterations", 2},
                  {"batch_size", 16},
                  {"collective", {{"algorithm", "linear"}}},
                  {"scheme", scheme},
                  {"variability", {{"stragglers", {{"fraction", 0.25}, {"slowdown", 2.0}}}}},
                  {"training",
                   {{"dataset", "synthetic"},
                    {"eval_every", 4},
                    {"model", {{"type", "mlp"}, {"hidden", {8}}}}}}};
  const fs::path p = fs::temp_directory_path() /
                     ("sgdsim-plugin-" + std::to_string(::getpid()) + "-" + name + ".json");
  std::ofstream(p) << j.dump(2);
  return p;
}

/// Runs `scheme` and returns {iterations.csv, convergence.csv}.
std::pair<std::string, std::string> run(const std::string& name, const json& scheme) {
  const fs::path out =
      fs::temp_directory_path() / ("sgdsim-plugin-out-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(out);
  Result r = run_cli({"run", write_scenario(name, scheme).string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto files = std::make_pair(slurp(out / "iterations.csv"), slurp(out / "convergence.csv"));
  fs::remove_all(out);
  return files;
}

}  // namespace

TEST(PluginScheme, RegisteredByItsOwnFile) {
  const auto names = sgdsim::scheme_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "lagged_sync"), names.end());
  const auto collectives = sgdsim::collective_names();
  EXPECT_NE(std::find(collectives.begin(), collectives.end(), "linear"), collectives.end());
}

TEST(PluginScheme, TrainsExactlyLikeTheBuiltInSchemeOfTheSameRule) {
  // lagged_sync with lag s builds ssp's graph and declares ssp's update rule; with a 2x
  // straggler its timing and its math must equal ssp's, byte for byte.
  std::vector<std::string> convergence;
  for (int lag : {0, 1, 2}) {
    const auto plugin = run("lagged", {{"type", "lagged_sync"}, {"lag", lag}});
    const auto builtin = run("ssp", {{"type", "ssp"}, {"staleness", lag}});
    EXPECT_FALSE(plugin.second.empty()) << "no convergence.csv at lag " << lag;
    EXPECT_EQ(plugin.first, builtin.first) << "iterations.csv at lag " << lag;
    EXPECT_EQ(plugin.second, builtin.second) << "convergence.csv at lag " << lag;
    convergence.push_back(plugin.second);
  }
  // The lag reaches the math: staler updates train differently.
  EXPECT_NE(convergence[0], convergence[1]);
  EXPECT_NE(convergence[1], convergence[2]);
}

TEST(PluginScheme, ItsOptionsAreItsOwn) {
  Result r = run_cli(
      {"run", write_scenario("bad-lag", {{"type", "lagged_sync"}, {"lag", -1}}).string(), "--out",
       (fs::temp_directory_path() / ("sgdsim-plugin-bad-" + std::to_string(::getpid()))).string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/scheme/lag"), std::string::npos) << r.err;
  r = run_cli(
      {"run", write_scenario("foreign", {{"type", "lagged_sync"}, {"staleness", 1}}).string(),
       "--out",
       (fs::temp_directory_path() / ("sgdsim-plugin-bad-" + std::to_string(::getpid()))).string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/scheme/staleness: only for scheme.type \"ssp\", not \"lagged_sync\""),
            std::string::npos)
      << r.err;
}

TEST(PluginScheme, ItsDeclaredOptionReachesTheScenarioAndTheSchema) {
  // `lag` is declared in lagged_sync_scheme.cpp only: the scenario parser reads it with the
  // integer getter into SchemeSpec::params, records it (its default when absent), and the
  // schema and the field table list it.
  json raw = {{"model", "resnet50"},
              {"workers", {{"count", 4}}},
              {"scheme", {{"type", "lagged_sync"}, {"lag", 3}}}};
  sgdsim::Scenario s = sgdsim::parse_scenario(raw, "plugin.json");
  EXPECT_EQ(s.scheme.params.number("lag"), 3);
  EXPECT_EQ(s.resolved["scheme"]["lag"], 3);
  EXPECT_EQ(std::get<sgdsim::AveragedUpdate>(sgdsim::scheme_update_rule(s)).lag, 3);
  raw["scheme"].erase("lag");
  s = sgdsim::parse_scenario(raw, "plugin.json");
  EXPECT_EQ(s.scheme.params.number("lag"), 1);
  EXPECT_EQ(s.resolved["scheme"]["lag"], 1);
  raw["scheme"]["lag"] = 1001;
  try {
    sgdsim::parse_scenario(raw, "plugin.json");
    ADD_FAILURE() << "no error";
  } catch (const sgdsim::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugin.json: /scheme/lag: expected an integer <= 1000, got 1001");
  }

  Result schema = run_cli({"schema"});
  ASSERT_EQ(schema.exit_code, 0) << schema.err;
  const json lag = json::parse(schema.out)["properties"]["scheme"]["properties"]["lag"];
  EXPECT_EQ(lag["type"], "integer");
  EXPECT_EQ(lag["minimum"], 0);
  EXPECT_EQ(lag["maximum"], 1000);
  EXPECT_EQ(lag["default"], 1);
  EXPECT_EQ(lag["description"], "iterations of delay");
  Result table = run_cli({"schema", "--markdown", "scenario"});
  EXPECT_NE(table.out.find("| `scheme.lag` | `1` | iterations of delay |"), std::string::npos)
      << table.out;
}

TEST(PluginCollective, FlowEqualsItsFormulaOnTheIdealNetwork) {
  for (const char* ranks : {"2", "5", "16"}) {
    Result r = run_cli({"collective", "--algorithm", "linear", "--ranks", ranks, "--bytes", "4MB",
                        "--bandwidth", "25Gbps", "--latency", "2us", "--network-model", "ideal",
                        "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    const double f = j["formula_s"].get<double>();
    EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f) << ranks;
    EXPECT_NEAR(f, 2.0 * (std::stoi(ranks) - 1) * (2e-6 + 4e6 * 8 / 25e9), 1e-9) << ranks;
  }
}

TEST(PluginCollective, ItsOwnOptionReachesTheScenarioAndTheCollective) {
  // `segments` is declared in linear_collective.cpp only: the scenario reads it and records
  // it, and the collective reads it from the group.
  json raw = {{"model", "resnet50"},
              {"workers", {{"count", 4}}},
              {"collective", {{"algorithm", "linear"}, {"segments", 4}}}};
  const sgdsim::Scenario s = sgdsim::parse_scenario(raw, "plugin.json");
  EXPECT_EQ(s.resolved["collective"]["segments"], 4);
  const sgdsim::CollectiveGroup g = sgdsim::collective_group(s);
  EXPECT_EQ(g.params.number("segments"), 4);
  const auto& linear = sgdsim::collective_by_name("linear");
  EXPECT_EQ(linear.message_count(g, 1e6), 2.0 * 3 * 4);
  // Absent, it takes its declared default, recorded like a built-in option's.
  raw["collective"].erase("segments");
  EXPECT_EQ(sgdsim::parse_scenario(raw, "plugin.json").resolved["collective"]["segments"], 1);
}

TEST(PluginCollective, ItsOwnOptionIsCheckedAndRefusedElsewhere) {
  auto error = [](const json& collective) {
    json raw = {{"model", "resnet50"}, {"workers", {{"count", 4}}}, {"collective", collective}};
    try {
      sgdsim::parse_scenario(raw, "plugin.json");
    } catch (const sgdsim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{"algorithm", "linear"}, {"segments", 0}}),
            "plugin.json: /collective/segments: expected an integer >= 1, got 0");
  EXPECT_EQ(error({{"algorithm", "ring"}, {"segments", 2}}),
            "plugin.json: /collective/segments: expected 1 (only algorithm \"linear\" uses it), "
            "got 2");
  EXPECT_EQ(error({{"algorithm", "ring"}, {"segments", 1}}), "no error");  // its default
}

TEST(PluginCollective, ItsOwnOptionIsAFlagOfSgdsimCollective) {
  // Pipelined down the chain: 2 (p + k - 2) (alpha + n/k beta), and flow equals it.
  auto run = [](const char* segments) {
    Result r = run_cli({"collective", "--algorithm", "linear", "--ranks", "5", "--bytes", "4MB",
                        "--bandwidth", "25Gbps", "--latency", "2us", "--network-model", "ideal",
                        "--segments", segments, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json j = run("4");
  const double f = j["formula_s"].get<double>();
  EXPECT_NEAR(f, 2.0 * (5 + 4 - 2) * (2e-6 + 1e6 * 8 / 25e9), 1e-9);
  EXPECT_NEAR(j["time_s"].get<double>(), f, 1e-6 * f);
  EXPECT_LT(f, run("1")["formula_s"].get<double>());
  Result bad = run_cli(
      {"collective", "--algorithm", "linear", "--ranks", "5", "--bytes", "4MB", "--segments", "0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--segments: expected an integer in [1, 64], got \"0\""),
            std::string::npos)
      << bad.err;
}

TEST(PluginCollective, ItsOwnOptionIsListedInTheSchemaTheHelpAndTheFieldReference) {
  Result schema = run_cli({"schema"});
  ASSERT_EQ(schema.exit_code, 0) << schema.err;
  const json seg = json::parse(schema.out)["properties"]["collective"]["properties"]["segments"];
  EXPECT_EQ(seg["type"], "integer");
  EXPECT_EQ(seg["minimum"], 1);
  EXPECT_EQ(seg["maximum"], 64);
  EXPECT_EQ(seg["default"], 1);
  EXPECT_EQ(seg["description"], "pieces the message is cut into down the chain");

  Result help = run_cli({"collective", "--help"});
  EXPECT_NE(help.out.find("--segments N"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("linear: pieces the message is cut into down the chain (default 1)"),
            std::string::npos)
      << help.out;

  // docs/fields.md's table is this command's output (make docs-check compares them).
  Result table = run_cli({"schema", "--markdown", "scenario"});
  EXPECT_NE(table.out.find(
                "| `collective.segments` | `1` | pieces the message is cut into down the chain |"),
            std::string::npos)
      << table.out;
}

/// A latency-csv file of a 4-rank allreduce benchmark: 1 KiB..1 MiB.
fs::path write_latency_csv() {
  const fs::path p =
      fs::temp_directory_path() / ("sgdsim-plugin-latency-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(p) << "# latency-csv\n1024,20.5\n65536,81\n1048576,930.25\n";
  return p;
}

TEST(PluginImporter, DetectedImportedAndListedWithNoOtherFileChanged) {
  const fs::path csv = write_latency_csv();
  Result r = run_cli({"trace", csv.string(), "--ranks", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "latency-csv");  // found by its detector, no --format given
  ASSERT_EQ(j["collectives"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["collectives"][2]["bytes"].get<double>(), 1048576.0);
  EXPECT_NEAR(j["collectives"][2]["time_s"].get<double>(), 930.25e-6, 1e-12);

  Result help = run_cli({"trace", "--help"});
  EXPECT_NE(help.out.find("latency-csv"), std::string::npos) << help.out;
  Result bad = run_cli({"trace", csv.string(), "--format", "latency-tsv"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("latency-csv"), std::string::npos) << bad.err;  // listed as a choice
  fs::remove(csv);
}

TEST(PluginImporter, AValidationCaseTakesItAsALatencyBenchmark) {
  // In process: `sgdsim validate` runs its simulations in children of the sgdsim binary,
  // which does not link this plugin.
  const fs::path dir =
      fs::temp_directory_path() / ("sgdsim-plugin-case-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(write_latency_csv(), dir / "bench.csv", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "case.json")
      << json{{"calibration", {{"file", "bench.csv"}, {"ranks", 4}}},
              {"targets", {{{"name", "4 ranks"}, {"file", "bench.csv"}, {"ranks", 4}}}}}
             .dump();
  const sgdsim::ValidationCase c = sgdsim::load_validation_case((dir / "case.json").string());
  EXPECT_EQ(c.kind, sgdsim::CaseKind::latency);
  EXPECT_EQ(c.targets.at(0).format, "latency-csv");  // detected
  EXPECT_EQ(sgdsim::import_measured(c.targets[0].file).collectives.size(), 3u);
  fs::remove_all(dir);
}

/// The same benchmark with its times in milliseconds.
fs::path write_latency_csv_ms() {
  const fs::path p = fs::temp_directory_path() /
                     ("sgdsim-plugin-" + std::to_string(::getpid()) + "-latency-ms.csv");
  std::ofstream(p) << "# latency-csv\n1024,0.0205\n65536,0.081\n1048576,0.93025\n";
  return p;
}

TEST(PluginImporter, ItsOwnOptionReachesTheImport) {
  // `time_unit` is declared in csv_importer.cpp only: --time-unit reaches import() as a
  // ParamValue, and without it the declared default ("us") does.
  const fs::path ms = write_latency_csv_ms();
  Result r = run_cli({"trace", ms.string(), "--ranks", "4", "--time-unit", "ms", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["collectives"].size(), 3u);
  EXPECT_NEAR(j["collectives"][2]["time_s"].get<double>(), 930.25e-6, 1e-12);
  EXPECT_NEAR(j["collectives"][0]["time_s"].get<double>(), 20.5e-6, 1e-12);
  Result as_us = run_cli({"trace", ms.string(), "--json"});
  ASSERT_EQ(as_us.exit_code, 0) << as_us.err;
  EXPECT_NEAR(json::parse(as_us.out)["collectives"][2]["time_s"].get<double>(), 0.93025e-6, 1e-15);
  // Checked as declared, and refused by a format that does not declare it.
  Result bad = run_cli({"trace", ms.string(), "--time-unit", "minutes"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("usage: --time-unit: expected us, ms, s, got \"minutes\""),
            std::string::npos)
      << bad.err;
  Result other = run_cli({"trace", "tests/data/kineto/ddp-two-layers.json", "--time-unit", "ms"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("usage: --time-unit: only for formats latency-csv, not \"kineto\""),
            std::string::npos)
      << other.err;
  Result skip = run_cli({"trace", ms.string(), "--skip", "1"});
  EXPECT_EQ(skip.exit_code, 2);
  EXPECT_NE(skip.err.find("usage: --skip: only for formats chrome, kineto, sgdsim, not "
                          "\"latency-csv\""),
            std::string::npos)
      << skip.err;
}

TEST(PluginImporter, ItsOwnOptionIsListedInTheHelpAndTheImporterTable) {
  Result help = run_cli({"trace", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("  --time-unit X    latency-csv: what the time column counts in "
                          "(default: us) (one of us, ms, s)"),
            std::string::npos)
      << help.out;
  Result validate = run_cli({"validate", "--help"});
  EXPECT_NE(validate.out.find("  \"time_unit\"      latency-csv: what the time column counts in"),
            std::string::npos)
      << validate.out;
  Result table = run_cli({"schema", "--markdown", "importers"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("| `--time-unit` (`\"time_unit\"`) | latency-csv | `\"us\"` | what "
                           "the time column counts in |"),
            std::string::npos)
      << table.out;
}

TEST(PluginImporter, AValidationCaseSourceTakesItsOwnOption) {
  const fs::path dir =
      fs::temp_directory_path() / ("sgdsim-plugin-" + std::to_string(::getpid()) + "-unit-case");
  fs::create_directories(dir);
  fs::copy_file(write_latency_csv(), dir / "us.csv", fs::copy_options::overwrite_existing);
  fs::copy_file(write_latency_csv_ms(), dir / "ms.csv", fs::copy_options::overwrite_existing);
  auto load = [&](const json& target) {
    std::ofstream(dir / "case.json")
        << json{{"calibration", {{"file", "us.csv"}, {"ranks", 4}}}, {"targets", {target}}}.dump();
    return sgdsim::load_validation_case((dir / "case.json").string());
  };
  // The same measurements in ms calibrate to the same network as in us: the option reached
  // the import of the case's source.
  sgdsim::ValidationCase c = load({{"file", "ms.csv"}, {"ranks", 4}, {"time_unit", "ms"}});
  EXPECT_EQ(c.targets.at(0).options.text("time_unit"), "ms");
  sgdsim::ValidationCase same = c;
  same.calibration = c.targets[0];
  const auto us_fit = sgdsim::calibrate_case(c).network;
  const auto ms_fit = sgdsim::calibrate_case(same).network;
  EXPECT_NEAR(ms_fit.alpha_s, us_fit.alpha_s, 1e-9 * us_fit.alpha_s);
  EXPECT_NEAR(ms_fit.beta_s_per_byte, us_fit.beta_s_per_byte, 1e-9 * us_fit.beta_s_per_byte);
  try {
    load({{"file", "ms.csv"}, {"skip", 1}});
    ADD_FAILURE() << "no error";
  } catch (const sgdsim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "/targets/0/skip: only for formats chrome, kineto, sgdsim, not \"latency-csv\""),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

/// Removes this process's scenario and data files from the temporary folder once every test
/// has run (they are named sgdsim-plugin-<pid>-*), so the suite leaves nothing behind.
class RemoveTemporaryFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    const std::string prefix = "sgdsim-plugin-" + std::to_string(::getpid()) + "-";
    const std::string csv = "sgdsim-plugin-latency-" + std::to_string(::getpid()) + ".csv";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) == 0 || name == csv) fs::remove_all(e.path(), ec);
    }
  }
};
const auto* const remove_temporary_files =
    ::testing::AddGlobalTestEnvironment(new RemoveTemporaryFiles);
