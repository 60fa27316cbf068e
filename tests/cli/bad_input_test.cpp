// Every case of tests/bad_inputs/cases.json (scenarios and profiles through `sgdsim run`, sweep
// files, traces and validation cases through their commands) exits 2 with one line naming the
// file, the JSON pointer and the expected message, and leaves nothing behind: no output folder
// (or, for a case with "out_files", that folder exactly as it was), nothing in its TMPDIR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

// Named, not anonymous: a TEST_P fixture derives from TestWithParam<BadCase>, and the
// test binaries compile in batches of files (GCC's -Wsubobject-linkage).
namespace bad_input_test {
struct BadCase {
  std::string name, command, file, expect;
  std::vector<std::string> args;
  std::string names;  // what the message must name when it is not the scenario file
  std::map<std::string, std::string> out_files;  // put in --out before the command
  int issue = 0;                                 // the issue that added the case, if noted
  int run_index = -1;  // the case's place among the `sgdsim run` cases (-1: another command)
};
/// Keeps gtest from dumping the struct's bytes in test names and failures.
void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}
}  // namespace bad_input_test
using bad_input_test::BadCase;

namespace {

std::vector<BadCase> load_cases() {
  std::vector<BadCase> cases;
  json j = json::parse(slurp(fs::path(SGDSIM_SOURCE_DIR) / "tests/bad_inputs/cases.json"));
  int runs = 0;
  for (const auto& c : j) {
    const std::string command = c.value("command", std::string("run"));
    cases.push_back({c["name"], command, c["file"], c["expect"],
                     c.value("args", std::vector<std::string>{}), c.value("names", std::string()),
                     c.value("out_files", std::map<std::string, std::string>{}),
                     c.value("issue", 0), command == "run" ? runs++ : -1});
  }
  return cases;
}

/// Every file under `dir` with its contents.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> m;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return m;
}

}  // namespace

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithOneClearLineAndNoOutput) {
  const BadCase& c = GetParam();
  // Under the sanitizers every third scenario case runs (each takes the scenario reader to
  // another error; the scenario and run fuzz targets run the reader there too) and every case
  // of the other commands; the release suite runs them all.
  if (sgdsim_sanitized() && c.run_index >= 0 && c.run_index % 3 != 0)
    GTEST_SKIP() << "a scenario case the release suite runs (every third runs sanitized)";
  fs::path out = temp_path("bad");
  for (const auto& [name, text] : c.out_files) {
    fs::create_directories((out / name).parent_path());
    std::ofstream(out / name) << text;
  }
  const auto before = contents(out);
  const fs::path tmp = temp_path("bad-tmpdir");
  fs::create_directories(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  std::string file = "tests/bad_inputs/" + c.file;
  std::vector<std::string> args = {c.command, file};
  if (c.command != "trace") args.insert(args.end(), {"--out", out.string()});  // trace: a file
  args.insert(args.end(), c.args.begin(), c.args.end());
  CliResult r = run_sgdsim(args);
  ::unsetenv("TMPDIR");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(c.expect), std::string::npos)
      << "expected: " << c.expect << "\ngot: " << r.err;
  const std::string source = c.names.empty() ? c.file : c.names;
  EXPECT_NE(r.err.find(source), std::string::npos) << "the message does not name " << source;
  if (c.out_files.empty())
    EXPECT_FALSE(fs::exists(out)) << "output folder created for " << c.name;
  else
    EXPECT_EQ(contents(out), before) << "the output folder was changed for " << c.name;
  EXPECT_TRUE(fs::is_empty(tmp)) << "a file was left in TMPDIR by " << c.name;
  fs::remove_all(out);
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           std::string n = info.param.name;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(BadInputCorpus, HasAtLeastThirtyCases) {
  EXPECT_GE(load_cases().size(), 30u);
}

TEST(BadInputCorpus, CoversSweepsTracesAndValidationCases) {
  std::map<std::string, int> per_command;
  for (const auto& c : load_cases()) ++per_command[c.command];
  EXPECT_GE(per_command["sweep"], 10);
  EXPECT_GE(per_command["trace"], 10);
  EXPECT_GE(per_command["validate"], 1);
  for (const auto& [command, n] : per_command)
    EXPECT_TRUE(command == "run" || command == "sweep" || command == "trace" ||
                command == "validate")
        << n << " cases with unknown command " << command;
}

TEST(BadInputCorpus, HoldsTwentyIssue15CasesOnPlatformsCfgFoldersAndStrictness) {
  int platform = 0, cfg = 0, folders = 0, all = 0;
  for (const auto& c : load_cases()) {
    if (c.issue != 15) continue;
    ++all;
    if (c.names.find(".xml") != std::string::npos) ++platform;
    if (c.names == "--cfg") ++cfg;
    if (!c.out_files.empty() || c.name.rfind("out-", 0) == 0) ++folders;
  }
  EXPECT_GE(all, 20 + 24);  // 24 came with the first issue-15 commits, 20 or more after them
  EXPECT_GE(platform, 10);
  EXPECT_GE(cfg, 5);
  EXPECT_GE(folders, 5);
}
