// Inputs past the guarded limits of sim/core/limits.hpp (docs/hardening.md, Limits) that are too
// large to keep in tests/bad_inputs: each is made here, and must end in exit 2 with one line
// naming the file or flag and the limit, or in a correct result. The small reproductions are
// cases of tests/bad_inputs/cases.json.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"
#include "sim/workload/chakra_et.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// The line names `what` and says `expected`, alone on stderr, with exit code 2.
void expect_input_error(const CliResult& r, const std::string& what, const std::string& expected) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
}

/// One rank's Chakra trace: `parallel` compute nodes that can all run at once, then an allreduce.
std::string parallel_compute_et(int parallel) {
  sgdsim::ChakraTrace t;
  t.version = "0.0.4";
  sgdsim::ChakraNode ar;
  ar.id = static_cast<uint64_t>(parallel);
  ar.name = "allreduce";
  ar.type = sgdsim::ChakraNodeType::comm_coll;
  ar.comm_type = 0;
  ar.comm_size = 1 << 20;
  for (int i = 0; i < parallel; ++i) {
    sgdsim::ChakraNode n;
    n.id = static_cast<uint64_t>(i);
    n.name = "c";
    n.name += std::to_string(i);  // (GCC 12 warns, wrongly, of "c" + std::to_string(i))
    n.type = sgdsim::ChakraNodeType::comp;
    n.duration_micros = 1000 + static_cast<uint64_t>(i % 7);
    t.nodes.push_back(n);
    ar.data_deps.push_back(n.id);
  }
  t.nodes.push_back(ar);
  return sgdsim::encode_chakra(t);
}

}  // namespace

TEST(InputLimits, A100000DeepJsonArrayIsAnInputErrorInRunPredictAndDag) {
  const fs::path dir = temp_path("limits-deep");
  const fs::path file = dir / "deep.json";
  json base = json::parse(slurp(kBadInputBase));
  base["description"] = "X";
  std::string text = base.dump();
  text.replace(text.find("\"X\""), 3, std::string(100000, '[') + std::string(100000, ']'));
  write(file, text);
  for (const std::string command : {"run", "predict", "dag"}) {
    std::vector<std::string> args = {command, file.string()};
    if (command == "run") args.insert(args.end(), {"--out", (dir / "out").string()});
    expect_input_error(run_sgdsim(args), file.string() + ": /description/0/0/...",
                       "JSON nested deeper than 1000 levels (the limit on JSON depth");
  }
  // The same through --set (60,000 levels: an argument is at most 128 KiB).
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  expect_input_error(run_sgdsim({"predict", kBadInputBase, "--set", "description=" + deep}),
                     "--set description", "the limit on JSON depth");
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(InputLimits, AGzipBombIsRefusedByItsExpansionRatio) {
  // 100 MiB of one JSON string in 0.1 MB: the ratio is checked once 64 MiB are unpacked.
  const fs::path dir = temp_path("limits-bomb");
  fs::create_directories(dir);
  const fs::path bomb = dir / "bomb.json.gz";
  const std::string make =
      "(printf '{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"'; head -c 100M "
      "/dev/zero | tr '\\0' a; printf '\"}]}') | gzip -9 > '" +
      bomb.string() + "'";
  ASSERT_EQ(std::system(make.c_str()), 0);
  expect_input_error(run_sgdsim({"trace", bomb.string()}), bomb.string(),
                     "the limit on the gzip ratio");
  expect_input_error(run_sgdsim({"trace", bomb.string(), "--format", "nccl-tests"}), bomb.string(),
                     "the limit on the gzip ratio");
  // A real trace, gzipped, still reads (its ratio is about 13).
  const fs::path trace = dir / "trace.json.gz";
  ASSERT_EQ(
      std::system(
          ("gzip -9 -c tests/data/kineto/ddp-two-layers.json > '" + trace.string() + "'").c_str()),
      0);
  EXPECT_EQ(run_sgdsim({"trace", trace.string()}).exit_code, 0);
  fs::remove_all(dir);
}

TEST(InputLimits, AFullZoneOf60000HostsIsRefusedBeforeSimGridBuildsItsTable) {
  const fs::path dir = temp_path("limits-full");
  const fs::path xml = dir / "full.xml";
  std::string text =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      "<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">\n";
  for (int i = 0; i < 60000; ++i)
    text += "    <host id=\"h" + std::to_string(i) + "\" speed=\"1Gf\"/>\n";
  text +=
      "    <link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
      "    <route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route>\n  </zone>\n</platform>\n";
  write(xml, text);
  const std::string expected =
      "zone \"world\" (line 4, routing Full) has more than 16384 members: SimGrid would allocate "
      "a routing table of 8 bytes per ordered pair of them, more than the limit of 2 GiB";
  expect_input_error(
      run_sgdsim({"collective", "--platform", xml.string(), "--ranks", "2", "--bytes", "1MB"}),
      xml.string(), expected);
  const fs::path scenario = dir / "scenario.json";
  write(scenario,
        "{\"model\": \"mlp\", \"workers\": {\"count\": 2}, \"device\": {\"speed\": \"1Tf\"}, "
        "\"platform\": {\"file\": \"" +
            xml.string() + "\"}, \"iterations\": 2}");
  expect_input_error(run_sgdsim({"run", scenario.string(), "--out", (dir / "out").string()}),
                     xml.string(), expected);
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(InputLimits, CollectiveIsGuardedLikeRun) {
  expect_input_error(run_sgdsim({"collective", "--ranks", "100000", "--bytes", "1MB"}), "--ranks",
                     "more than the limit of 1e+09");
  expect_input_error(run_sgdsim({"collective", "--ranks", "1000000000", "--bytes", "1MB",
                                 "--fidelity", "analytic"}),
                     "--ranks", "of memory");
  // --time-limit stops a long flow collective: exit 3, no result printed.
  const CliResult r = run_sgdsim(
      {"collective", "--ranks", "512", "--bytes", "1GB", "--time-limit", "0.5", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--time-limit reached"), std::string::npos) << r.err;
}

TEST(InputLimits, CollectiveSizesAndTimesPastTheEngineAreRefusedAndTheLimitIsExact) {
  for (const std::string bytes : {"1e30", "1e16"})
    expect_input_error(
        run_sgdsim({"collective", "--ranks", "4", "--bytes", bytes, "--bandwidth", "1Gbps"}),
        "--bytes", "281474976710656 bytes (2^48, the limit on message sizes)");
  expect_input_error(
      run_sgdsim({"collective", "--ranks", "4", "--bytes", "1MB", "--latency", "1e300s"}),
      "--latency", "the limit on input times");
  // At the limit the flow-level time still equals the formula (ideal network).
  const CliResult r = run_sgdsim({"collective", "--ranks", "4", "--bytes", "281474976710656",
                                  "--bandwidth", "1Gbps", "--network-model", "ideal", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_NEAR(j["time_s"].get<double>(), j["formula_s"].get<double>(),
              1e-9 * j["formula_s"].get<double>());
}

TEST(InputLimits, TimesPastInt64NanosecondsMakeAValidTimeline) {
  // 1e9 s latencies (LV08 multiplies them by 13) at 1 byte/s: about 4e10 s of simulated time.
  const fs::path out = temp_path("limits-timeline");
  const CliResult r = run_sgdsim({"run", kBadInputBase, "--out", out.string(), "--quiet", "--set",
                                  "platform.generate.node_link.latency=1e9s", "--set",
                                  "platform.generate.node_link.bandwidth=1Bps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = json::parse(slurp(out / "summary.json"));
  const double end_s = summary["simulated_time_s"].get<double>();
  EXPECT_GT(end_s, 9.3e9);  // past int64 nanoseconds: the case the timeline used to break on
  const json timeline = json::parse(slurp(out / "timeline.json"));  // throws if not JSON
  double last_us = 0;
  for (const auto& e : timeline["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      last_us = std::max(last_us, e["ts"].get<double>() + e["dur"].get<double>());
    }
  EXPECT_NEAR(last_us, end_s * 1e6, 1e-9 * end_s * 1e6);
  fs::remove_all(out);
}

TEST(InputLimits, ChakraNodesThatRunAtOnceCountInTheEstimate) {
  const fs::path dir = temp_path("limits-chakra");
  write(dir / "par.0.et", parallel_compute_et(100000));
  const std::string scenario = R"({"name": "par", "platform": {"generate": {"topology": "star",
      "nodes": 1}}, "workers": {"count": 1}, "workload": {"chakra": "par"}, "iterations": )";
  write(dir / "twenty.json", scenario + "20}");
  write(dir / "one.json", scenario + "1}");
  // 20 iterations of 10^10 sharing updates: refused before it starts.
  expect_input_error(
      run_sgdsim({"run", (dir / "twenty.json").string(), "--out", (dir / "out").string()}),
      (dir / "twenty.json").string(), "more than the limit of 1e+09");
  // One iteration is announced as large (it runs minutes), not started silently.
  const CliResult r =
      run_sgdsim({"run", (dir / "one.json").string(), "--out", (dir / "out").string(),
                  "--time-limit", "1", "--progress", "never"});
  EXPECT_NE(r.err.find("sgdsim: warning: large run: about 1e+08 SimGrid activities"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(InputLimits, CalibrateNcclTestsRefusesTimesThatDoNotGrow) {
  const std::string log = "tests/bad_inputs/traces/nccl-tests-constant-time.log";
  expect_input_error(run_sgdsim({"calibrate", "nccl-tests", log}), log,
                     "do not grow with message size");
}

TEST(InputLimits, TraceReadsAGzipCompressedChakraFileAsThePlainOne) {
  const fs::path dir = temp_path("limits-et");
  fs::create_directories(dir);
  const fs::path plain = dir / "plain.0.et";
  ASSERT_EQ(std::system(
                ("gzip -dc tests/bad_inputs/chakra/gzip.0.et > '" + plain.string() + "'").c_str()),
            0);
  const CliResult gz = run_sgdsim({"trace", "tests/bad_inputs/chakra/gzip.0.et", "--json"});
  const CliResult pl = run_sgdsim({"trace", plain.string(), "--json"});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  ASSERT_EQ(pl.exit_code, 0) << pl.err;
  json a = json::parse(gz.out), b = json::parse(pl.out);
  a.erase("file");
  b.erase("file");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["collectives"].size(), 1u);
  fs::remove_all(dir);
}

TEST(InputLimits, CollectivePlatformThatIsADirectoryIsNamedSo) {
  expect_input_error(run_sgdsim({"collective", "--platform", "tests/bad_inputs", "--ranks", "2",
                                 "--bytes", "1MB"}),
                     "tests/bad_inputs", "not a regular file");
}
