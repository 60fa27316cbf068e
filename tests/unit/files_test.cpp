// Output files: a write that fails (a full disk, a file-size limit) or cannot start (an
// unwritable folder) is an InputError naming the final path and the OS error, and leaves no
// temporary file; an output that is a link, folder or FIFO is refused and kept; a folder lock
// refuses a second writer; dead processes' temporary files are removed; duplicate JSON keys are
// rejected with their pointer.
#include "sim/core/files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

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

namespace {

/// A fresh folder of this test process under $TMPDIR, removed by the caller.
fs::path scratch(const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("sgdsim-files-" + std::to_string(::getpid()) + "-" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sgdsim::InputError& e) {
    return e.what();
  }
  return "";
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(Files, AnOutputThatIsALinkFolderOrFifoIsRefusedAndKept) {
  const fs::path dir = scratch("targets");
  std::ofstream(dir / "precious") << "keep";
  fs::create_symlink(dir / "precious", dir / "link");
  fs::create_directories(dir / "folder");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  for (const auto& [name, why] :
       std::vector<std::pair<std::string, std::string>>{{"link", "it is a symbolic link"},
                                                        {"folder", "it is a folder"},
                                                        {"fifo", "it is a FIFO"}}) {
    const std::string e =
        error_of([&, n = name] { sgdsim::write_file_atomic(dir / n, "replaced"); });
    EXPECT_NE(e.find((dir / name).string() + ": cannot write output file: " + why),
              std::string::npos)
        << name << ": " << e;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(text_of(dir / "precious"), "keep");
  EXPECT_EQ(fs::status(dir / "fifo").type(), fs::file_type::fifo);
  // A link planted at the temporary name is removed, not written through.
  fs::create_symlink(dir / "precious", dir / ("out.json.tmp-" + std::to_string(::getpid())));
  sgdsim::write_file_atomic(dir / "out.json", "new");
  EXPECT_EQ(text_of(dir / "out.json"), "new");
  EXPECT_FALSE(fs::is_symlink(dir / "out.json"));
  EXPECT_EQ(text_of(dir / "precious"), "keep");
  fs::remove_all(dir);
}

TEST(Files, AFolderLockRefusesASecondWriterUntilReleased) {
  const fs::path dir = scratch("lock");
  {
    const sgdsim::FolderLock first(dir / "out", "--out");
    EXPECT_TRUE(first.created());
    const std::string e = error_of([&] { sgdsim::FolderLock second(dir / "out", "--out"); });
    EXPECT_NE(e.find("--out: another sgdsim is writing into"), std::string::npos) << e;
  }
  const sgdsim::FolderLock again(dir / "out", "--out");
  EXPECT_FALSE(again.created());
  std::ofstream(dir / "file") << "x";
  EXPECT_NE(error_of([&] {
              sgdsim::FolderLock f(dir / "file", "--out");
            }).find("exists and is not a folder"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Files, AnOutputFolderRemovesTheTemporaryFilesOfDeadProcesses) {
  const fs::path dir = scratch("stale");
  std::ofstream(dir / sgdsim::kManifestName) << "run\tsummary.json\n";
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string d = std::to_string(dead), live = std::to_string(::getpid());
  for (const std::string& name :
       {"summary.json.tmp-" + d, ".sgdsim-manifest.tmp-" + d, "summary.json.tmp-" + live})
    std::ofstream(dir / name) << "partial";
  sgdsim::OutputFolder folder(dir, "run", false, "--out");
  EXPECT_FALSE(fs::exists(dir / ("summary.json.tmp-" + d)));
  EXPECT_FALSE(fs::exists(dir / (".sgdsim-manifest.tmp-" + d)));
  EXPECT_TRUE(fs::exists(dir / ("summary.json.tmp-" + live)));  // a live writer's
  // A link among the outputs is refused before anything is written through it.
  fs::create_symlink("/etc/hostname", dir / "timeline.json");
  EXPECT_NE(error_of([&] { folder.will_write("timeline.json"); }).find("is a symbolic link"),
            std::string::npos);
  fs::remove_all(dir);
}
