// Every platform file shipped in platforms/ (not platforms/examples/) loads and runs a small
// ring allreduce through the sgdsim binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// The .xml files directly under platforms/, as paths relative to the source directory
// (the directory run_sgdsim runs from). directory_iterator does not descend into
// platforms/examples/.
std::vector<std::string> shipped_platforms() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(SGDSIM_SOURCE_DIR) / "platforms"))
    if (e.is_regular_file() && e.path().extension() == ".xml")
      out.push_back((fs::path("platforms") / e.path().filename()).string());
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST(Platforms, EveryShippedFileRunsATwoRankRing) {
  const auto files = shipped_platforms();
  ASSERT_FALSE(files.empty()) << "no .xml files in platforms/";
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    CliResult r = run_sgdsim({"collective", "--algorithm", "ring", "--ranks", "2", "--bytes", "1MB",
                              "--platform", file, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_GT(j["time_s"].get<double>(), 0);
    EXPECT_EQ(j["ranks"], 2);
  }
}
