// sgdsim collective on an ideal contention-free star equals the ring alpha-beta formula.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;

namespace {
json collective(int ranks, const std::string& bytes, const std::string& model,
                const std::string& bw = "10Gbps", const std::string& lat = "1us") {
  CliResult r =
      run_sgdsim({"collective", "--algorithm", "ring", "--ranks", std::to_string(ranks), "--bytes",
                  bytes, "--bandwidth", bw, "--latency", lat, "--network-model", model, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}
}  // namespace

class RingFormula : public ::testing::TestWithParam<int> {};

TEST_P(RingFormula, IdealEqualsAlphaBetaFormula) {
  const int p = GetParam();
  const double L = 1e-6, B = 10e9 / 8;
  for (const char* n : {"1KB", "64KiB", "1MB", "100MB", "1GB"}) {
    json j = collective(p, n, "ideal");
    const double bytes = j["bytes"];
    const double expected = 2.0 * (p - 1) * L + 2.0 * (p - 1) / p * bytes / B;
    EXPECT_NEAR(j["time_s"].get<double>(), expected, 1e-6 * expected) << "P=" << p << " N=" << n;
    EXPECT_NEAR(j["formula_s"].get<double>(), expected, 1e-12 * expected);
    EXPECT_EQ(j["activities"], 2 * (p - 1) * p);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, RingFormula, ::testing::Values(2, 3, 37, 64, 256));

TEST(Collective, DefaultNetworkModelIsSlowerThanIdeal) {
  // LV08 multiplies latency by ~13 and bandwidth by ~0.97.
  json ideal = collective(8, "1KB", "ideal"), lv08 = collective(8, "1KB", "default");
  EXPECT_GT(lv08["time_s"].get<double>(), 5 * ideal["time_s"].get<double>());
}

TEST(Collective, OneRankTakesNoTime) {
  json j = collective(1, "1MB", "ideal");
  EXPECT_EQ(j["time_s"].get<double>(), 0.0);
}

TEST(Collective, RunsOnThePlatformFileHosts) {
  CliResult r =
      run_sgdsim({"collective", "--ranks", "8", "--bytes", "1MB", "--platform",
                  "platforms/examples/4x2-56Gbps.xml", "--network-model", "ideal", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_GT(j["time_s"].get<double>(), 0);
  EXPECT_TRUE(j["formula_s"].is_null());
  CliResult too_many = run_sgdsim({"collective", "--ranks", "9", "--bytes", "1MB", "--platform",
                                   "platforms/examples/4x2-56Gbps.xml"});
  EXPECT_EQ(too_many.exit_code, 2);
}

TEST(Collective, BadArgumentsExit2) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"collective", "--ranks", "0", "--bytes", "1MB"},
           {"collective", "--ranks", "4", "--bytes", "lots"},
           {"collective", "--ranks", "4"},
           {"collective", "--algorithm", "butterfly", "--ranks", "4", "--bytes", "1MB"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--bandwidth", "fast"},
           {"collective", "--ranks", "4", "--bytes", "1MB", "--frobnicate"}}) {
    CliResult r = run_sgdsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
}
