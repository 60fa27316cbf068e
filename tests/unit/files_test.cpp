// Output files: a write that fails (a full disk, a file-size limit) or cannot start (an
// unwritable folder) is an InputError naming the final path and the OS error, and leaves no
// temporary file; duplicate JSON keys are rejected with their pointer.
#include "sim/core/files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"

namespace fs = std::filesystem;

TEST(Files, AWriteBeyondTheFileSizeLimitIsAnInputErrorAndLeavesNoTemporaryFile) {
  const fs::path dir = fs::temp_directory_path() / ("sgdsim-files-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // In a child: the limit (like a full disk) makes write() fail with EFBIG once SIGXFSZ is
  // ignored. Exit 0 = the right error, 1 = another outcome.
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {};
    lim.rlim_cur = lim.rlim_max = 4096;
    ::setrlimit(RLIMIT_FSIZE, &lim);
    try {
      sgdsim::write_file_atomic(dir / "big.json", std::string(1 << 20, 'x'));
    } catch (const sgdsim::InputError& e) {
      const std::string what = e.what();
      ::_exit(what.find("big.json: cannot write output file: File too large") != std::string::npos
                  ? 0
                  : 1);
    } catch (...) {
    }
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::is_empty(dir));  // neither big.json nor its temporary file
  fs::remove_all(dir);
}

TEST(Files, AnUnwritableFolderNamesThePathAndTheOsError) {
  try {
    sgdsim::write_file_atomic("/proc/self/summary.json", "{}");
    FAIL() << "expected an InputError";
  } catch (const sgdsim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/self/summary.json: cannot write output file: "),
              std::string::npos)
        << e.what();
  }
}

TEST(JsonReader, DuplicateKeysAreErrorsWithTheirPointer) {
  try {
    sgdsim::parse_json_text(R"({"a": [1, {"b": 1, "c": {"d": 1, "d": 2}}]})", "x.json");
    FAIL() << "expected an InputError";
  } catch (const sgdsim::InputError& e) {
    EXPECT_EQ(e.pointer(), "/a/1/c/d");
    EXPECT_NE(std::string(e.what()).find("duplicate key \"d\""), std::string::npos);
  }
  // The same key in different objects is fine.
  EXPECT_NO_THROW(sgdsim::parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}})", "x.json"));
}
