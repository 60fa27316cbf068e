#pragma once
/// Crash-safe output files: written under a temporary name, renamed into place on commit.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace sgdsim {

/// An output file that appears under its final name only when `commit()` succeeds.
class AtomicFile {
 public:
  /// Creates `<path>.tmp-<pid>` (new, not through a link) for writing; throws InputError if it
  /// cannot, or if `path` is a symbolic link or exists and is not a regular file.
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

/// Installs SIGINT/SIGTERM/SIGHUP handlers that delete every temporary output file still open
/// and exit with 128 + signal, so an interrupted run leaves no partial file behind.
void install_interrupt_cleanup();

/// Deletes every temporary output file still open; async-signal-safe (for signal handlers
/// that end the process, such as install_interrupt_cleanup's and --time-limit's).
void remove_temporary_files() noexcept;

/// Throws InputError naming `path` if it is a symbolic link or exists and is not a regular file
/// (a folder, FIFO, socket or device): what an output file may replace.
void check_output_target(const std::filesystem::path& path);

/// The manifest every sgdsim writer keeps in its output folder: one "writer<TAB>name" line per
/// file or folder it put there (writers: "run", "sweep").
inline constexpr const char* kManifestName = ".sgdsim-manifest";

/// An output folder and its manifest. Opening it refuses (InputError, exit 2) a folder that
/// holds entries no manifest lists, unless `overwrite`; a re-run then replaces what the same
/// writer wrote before: `commit` removes the previous entries this run did not write again.
class OutputFolder {
 public:
  /// Reads `dir`'s manifest (a missing folder or manifest: nothing known) and checks that every
  /// entry of the folder is listed in it, or is one of their leftovers (`name.tmp-<pid>`;
  /// those of a process that no longer exists are removed). `option` names the command-line
  /// option for the message ("--out").
  OutputFolder(std::filesystem::path dir, std::string writer, bool overwrite,
               const std::string& option);
  /// Records that this writer is about to write `name` (a file or folder directly in dir);
  /// throws InputError if `name` is a symbolic link there.
  void will_write(const std::string& name);
  /// Writes the manifest listing what was there before and what this writer will write: if the
  /// run dies, its files are still known next time. Creates the folder if needed.
  void declare();
  /// Removes the previous entries of this writer it did not write this time (and `also`,
  /// sgdsim output names that a folder without a manifest may hold), then writes the manifest
  /// with this writer's entries replaced by this run's.
  void commit(const std::vector<std::string>& also = {});
  /// Undoes a failed run: removes the files this writer listed that no earlier manifest had,
  /// the manifest if the folder had none, and the folder if `remove_folder` and it is empty.
  void discard(bool remove_folder) noexcept;
  /// The folder.
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void write_manifest(bool with_previous) const;

  std::filesystem::path dir_;
  std::string writer_;
  std::vector<std::pair<std::string, std::string>> previous_;  // (writer, name) as read
  std::vector<std::string> names_;                             // this writer, this time
  bool had_manifest_ = false;
};

/// An exclusive lock on an output folder (flock on the folder itself, held until destruction
/// and by forked children): two sgdsim runs do not write one folder at once.
class FolderLock {
 public:
  /// Creates `dir` if missing and locks it; throws InputError (naming `option`) if another
  /// process holds the lock or the folder cannot be made.
  FolderLock(const std::filesystem::path& dir, const std::string& option);
  /// Releases the lock.
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  /// Whether the lock created the folder.
  bool created() const { return created_; }

 private:
  int fd_ = -1;
  bool created_ = false;
};

/// Writes `content` to `path` atomically.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
/// Flushes standard output (C++ and C streams); false if anything written to it was lost (a
/// full disk, /dev/full): the caller then fails with stdout_error().
bool stdout_written();
/// "cannot write standard output: REASON", the line for a lost standard output.
std::string stdout_error();

/// Reads a whole file; throws InputError naming `path` if it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace sgdsim
