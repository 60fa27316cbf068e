#pragma once
/// Runs the sgdsim binary in a child process and captures its exit code, output and peak memory.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sgdsim::test {

/// What one invocation produced.
struct CliResult {
  int exit_code = -1;   ///< exit status (or 128 + signal)
  std::string out;      ///< standard output
  std::string err;      ///< standard error
  long max_rss_kb = 0;  ///< peak resident set size of the child
};

/// The sgdsim binary the tests run: $SGDSIM_TEST_BINARY if set (`make sanitize` points this
/// build's tests at the sanitized build's binary), else this build's.
const char* sgdsim_binary();
/// True when that binary is built with ASan (this build is, or $SGDSIM_TEST_SANITIZED is 1):
/// its peak memory is then not the program's.
bool sgdsim_sanitized();
/// Runs `sgdsim args...` from the source directory.
CliResult run_sgdsim(const std::vector<std::string>& args);
/// A fresh path (not created) in this process's scratch folder $TMPDIR/sgdsim-test-<pid>,
/// which is removed when the process ends.
std::filesystem::path temp_path(const std::string& tag);
/// Reads a whole file.
std::string slurp(const std::filesystem::path& p);
/// Writes `text` to `p`, creating its parent folders.
void write_text(const std::filesystem::path& p, const std::string& text);

/// The 8-worker star of private 10 Gb/s, 5 us links on the ideal network model.
inline const std::string kIdealStar = "tests/data/ideal-star.json";
/// The valid scenario the bad-input cases edit.
inline const std::string kBadInputBase = "tests/bad_inputs/base.json";
/// Runs `sgdsim run SCENARIO --set S...` into a fresh folder and returns its summary.json;
/// the folder is kept in `*out_dir` if given, else removed. A failed run is a test failure.
nlohmann::json run_scenario_summary(const std::string& scenario,
                                    const std::vector<std::string>& sets,
                                    std::filesystem::path* out_dir = nullptr);
/// run_scenario_summary on kIdealStar.
nlohmann::json run_on_ideal_star(const std::vector<std::string>& sets,
                                 std::filesystem::path* out_dir = nullptr);
/// Number of lines in `text`.
int count_lines(const std::string& text);
/// Complete ("X") slices of a Chrome trace file that break the rule that slices on one
/// thread nest: each overlaps a slice it is not inside, on the same pid and tid.
int overlapping_slices(const std::filesystem::path& timeline);

}  // namespace sgdsim::test
