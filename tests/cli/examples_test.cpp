// Golden tests: every scenario in experiments/examples/ runs and reproduces its summary in
// tests/golden/ (wall time excluded), and its timeline.json has no overlapping slices. `make
// golden` rewrites them after a deliberate change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> examples() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(SGDSIM_SOURCE_DIR) / "experiments/examples"))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

void expect_close(const json& got, const json& want, const std::string& where) {
  if (want.is_number_float() || (want.is_number() && got.is_number_float())) {
    double g = got.get<double>(), w = want.get<double>();
    EXPECT_NEAR(g, w, 1e-9 * std::max(1.0, std::abs(w))) << where;
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << where;
    EXPECT_EQ(got.size(), want.size()) << where;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << where << "/" << k;
      expect_close(got[k], v, where + "/" + k);
    }
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

}  // namespace

class Example : public ::testing::TestWithParam<std::string> {};

TEST_P(Example, ReproducesGoldenSummary) {
  const std::string name = GetParam();
  fs::path out = temp_path(name);
  CliResult r =
      run_sgdsim({"run", "experiments/examples/" + name + ".json", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("iteration time"), std::string::npos);
  json got = json::parse(slurp(out / "summary.json"));
  fs::path golden = fs::path(SGDSIM_SOURCE_DIR) / "tests/golden" / (name + ".summary.json");
  ASSERT_TRUE(fs::exists(golden)) << "no golden file for " << name << ": run `make golden`";
  json want = json::parse(slurp(golden));
  got.erase("wall_time_s");
  want.erase("wall_time_s");
  expect_close(got, want, name);
  // Perfetto drops or mis-draws slices that overlap on one track.
  if (fs::exists(out / "timeline.json")) {
    EXPECT_EQ(overlapping_slices(out / "timeline.json"), 0) << name;
  }
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Examples, Example, ::testing::ValuesIn(examples()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });
