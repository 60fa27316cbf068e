#pragma once
/// Crash-safe output files: written under a temporary name, renamed into place on commit.
#include <filesystem>
#include <fstream>
#include <string>

namespace sgdsim {

/// An output file that appears under its final name only when `commit()` succeeds.
class AtomicFile {
 public:
  /// Opens `<path>.tmp-<pid>` for writing; throws std::runtime_error if it cannot.
  explicit AtomicFile(std::filesystem::path path);
  /// Removes the temporary file unless committed.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// The stream to write to.
  std::ofstream& stream() { return out_; }
  /// Flushes, closes and renames the temporary file to the final path.
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_path_;
  std::ofstream out_;
  bool committed_ = false;
  int slot_ = -1;  // entry in the interrupt-cleanup list
};

/// Installs SIGINT/SIGTERM handlers that delete every temporary output file still open and
/// exit with 128 + signal, so an interrupted run leaves no partial file behind.
void install_interrupt_cleanup();

/// Deletes every temporary output file still open; async-signal-safe (for signal handlers
/// that end the process, such as install_interrupt_cleanup's and --time-limit's).
void remove_temporary_files() noexcept;

/// Writes `content` to `path` atomically.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// Reads a whole file; throws InputError naming `path` if it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace sgdsim
