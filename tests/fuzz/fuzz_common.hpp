#pragma once
/// Helpers shared by the libFuzzer targets: the input as text, as a temporary file for the
/// importers that read paths, and a loud failure for broken invariants.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sgdsim::fuzz {

/// The fuzzer's bytes as a string.
inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Reports a broken invariant and aborts, so libFuzzer records the input as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

/// A per-process scratch folder under $TMPDIR, removed at exit.
class ScratchDir {
 public:
  /// Creates `<tmp>/sgdsim-fuzz-<tag>-<pid>`.
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("sgdsim-fuzz-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  /// The folder.
  const std::filesystem::path& path() const { return path_; }
  /// Writes `bytes` to `name` inside the folder (replacing it) and returns its path.
  std::string write(const std::string& name, const uint8_t* data, size_t size) const {
    std::filesystem::path p = path_ / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) fail("cannot write the scratch file " + p.string());
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace sgdsim::fuzz
