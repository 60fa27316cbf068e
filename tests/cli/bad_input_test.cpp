// Every case of tests/bad_inputs/cases.json (scenarios and profiles through `sgdsim run`, sweep
// files, traces and validation cases through their commands) exits 2 with one line naming the
// file, the JSON pointer and the expected message, and leaves no output folder behind.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct BadCase {
  std::string name, command, file, expect;
  std::vector<std::string> args;
  std::string names;  // what the message must name when it is not the scenario file
};

/// Keeps gtest from dumping the struct's bytes in test names and failures.
void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<BadCase> load_cases() {
  std::vector<BadCase> cases;
  json j = json::parse(slurp(fs::path(SGDSIM_SOURCE_DIR) / "tests/bad_inputs/cases.json"));
  for (const auto& c : j)
    cases.push_back({c["name"], c.value("command", std::string("run")), c["file"], c["expect"],
                     c.value("args", std::vector<std::string>{}), c.value("names", std::string())});
  return cases;
}

}  // namespace

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithOneClearLineAndNoOutput) {
  const BadCase& c = GetParam();
  fs::path out = temp_path("bad");
  std::string file = "tests/bad_inputs/" + c.file;
  std::vector<std::string> args = {c.command, file};
  if (c.command != "trace") args.insert(args.end(), {"--out", out.string()});  // trace: a file
  args.insert(args.end(), c.args.begin(), c.args.end());
  CliResult r = run_sgdsim(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(c.expect), std::string::npos)
      << "expected: " << c.expect << "\ngot: " << r.err;
  const std::string source = c.names.empty() ? c.file : c.names;
  EXPECT_NE(r.err.find(source), std::string::npos) << "the message does not name " << source;
  EXPECT_FALSE(fs::exists(out)) << "output folder created for " << c.name;
  fs::remove_all(out);
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
