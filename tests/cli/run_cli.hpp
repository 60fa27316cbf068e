#pragma once
/// Runs the sgdsim binary in a child process and captures its exit code, output and peak memory.
#include <filesystem>
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

/// Runs `sgdsim args...` from the source directory.
CliResult run_sgdsim(const std::vector<std::string>& args);
/// A fresh empty temporary directory path (not created).
std::filesystem::path temp_path(const std::string& tag);
/// Reads a whole file.
std::string slurp(const std::filesystem::path& p);
/// Number of lines in `text`.
int count_lines(const std::string& text);
/// Complete ("X") slices of a Chrome trace file that break the rule that slices on one
/// thread nest: each overlaps a slice it is not inside, on the same pid and tid.
int overlapping_slices(const std::filesystem::path& timeline);

}  // namespace sgdsim::test
