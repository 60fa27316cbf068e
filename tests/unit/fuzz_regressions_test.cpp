// Inputs that crashed a fuzz target (tests/fuzz), replayed through the same target bodies: each
// file of tests/fuzz/regressions/ is named <target>-<what>, and must now end in an InputError
// or be accepted, with no other exception (and, in the dev preset, no sanitizer report).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/fuzz/run_target.hpp"
#include "tests/fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {

/// Every target by name: the SimGrid-free ones, and the run path.
const std::map<std::string, std::function<void(const uint8_t*, size_t)>>& all_targets() {
  static const auto t = [] {
    auto m = sgdsim::fuzz::targets();
    m.emplace("run", sgdsim::fuzz::run);
    return m;
  }();
  return t;
}

/// Every regression input as (target, path), in name order.
std::vector<std::pair<std::string, fs::path>> regressions() {
  std::vector<std::pair<std::string, fs::path>> out;
  const fs::path dir = fs::path(SGDSIM_SOURCE_DIR) / "tests/fuzz/regressions";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    for (const auto& [target, _] : all_targets())
      if (name.rfind(target + "-", 0) == 0) {
        out.emplace_back(target, e.path());
        break;
      }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(FuzzRegressions, EveryFileNamesATarget) {
  const fs::path dir = fs::path(SGDSIM_SOURCE_DIR) / "tests/fuzz/regressions";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename() != "README.md";
  EXPECT_EQ(regressions().size(), files) << "a file in " << dir << " names no fuzz target";
}

TEST(FuzzRegressions, TargetListMatchesTheBodies) {
  std::ifstream in(fs::path(SGDSIM_SOURCE_DIR) / "tests/fuzz/targets.txt");
  ASSERT_TRUE(in) << "tests/fuzz/targets.txt missing";
  std::set<std::string> listed;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      EXPECT_TRUE(listed.insert(line).second) << "listed twice: " << line;
    }
  std::set<std::string> bodies;
  for (const auto& [name, _] : all_targets()) bodies.insert(name);
  EXPECT_EQ(listed, bodies) << "tests/fuzz/targets.txt and the fuzz bodies disagree";
}

TEST(FuzzRegressions, ReplayWithoutCrashing) {
  for (const auto& [target, path] : regressions()) {
    SCOPED_TRACE(path.filename().string());
    const std::string bytes = read_bytes(path);
    EXPECT_NO_THROW(
        all_targets().at(target)(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}
