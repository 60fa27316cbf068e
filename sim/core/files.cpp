#include "sim/core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <system_error>

#include "sim/core/errors.hpp"

namespace sgdsim {

namespace {

// Temporary files open right now, in fixed storage a signal handler may read.
constexpr int kMaxOpen = 64;
constexpr size_t kMaxPath = 4096;
char g_open[kMaxOpen][kMaxPath];
volatile std::sig_atomic_t g_used[kMaxOpen];

int register_open(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kMaxOpen; ++i)
    if (!g_used[i]) {
      std::memcpy(g_open[i], path.c_str(), path.size() + 1);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the path before the flag
      g_used[i] = 1;
      return i;
    }
  return -1;
}

void unregister_open(int slot) {
  if (slot >= 0) g_used[slot] = 0;
}

extern "C" void remove_open_files(int sig) {
  remove_temporary_files();
  ::_exit(128 + sig);
}

// The handlers that were in place before ours for the crash signals (SimGrid's, if any).
struct sigaction g_previous[NSIG];

// A crash (abort, segfault) still ends the process the way it would have, with its core and
// exit status, but first deletes the temporary files: the previous handler runs next.
extern "C" void remove_open_files_and_crash(int sig) {
  remove_temporary_files();
  ::sigaction(sig, &g_previous[sig], nullptr);
  if (sig == SIGABRT) ::raise(sig);  // a returning SIGSEGV/SIGBUS handler faults again
}

void install_crash_cleanup(int sig) {
  struct sigaction current {};
  ::sigaction(sig, nullptr, &current);
  if (current.sa_handler == remove_open_files_and_crash) return;  // already ours
  struct sigaction sa {};
  sa.sa_handler = remove_open_files_and_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK;  // a stack overflow needs SimGrid's alternate stack
  ::sigaction(sig, &sa, &g_previous[sig]);
}

std::string os_error() {
  return std::strerror(errno);
}

}  // namespace

void remove_temporary_files() noexcept {
  for (int i = 0; i < kMaxOpen; ++i)
    if (g_used[i]) ::unlink(g_open[i]);
}

void install_interrupt_cleanup() {
  // SIGHUP (a closed terminal, a dropped ssh session) ends a run like SIGTERM.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_open_files);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS}) install_crash_cleanup(sig);
}

void check_output_target(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // a new file (or a folder that fails later)
  if (S_ISLNK(st.st_mode))
    throw InputError(path.string(), "",
                     "cannot write output file: it is a symbolic link (sgdsim does not write "
                     "through links): expected a regular file or a new name");
  if (!S_ISREG(st.st_mode))
    throw InputError(path.string(), "",
                     std::string("cannot write output file: it is ") +
                         (S_ISDIR(st.st_mode)    ? "a folder"
                          : S_ISFIFO(st.st_mode) ? "a FIFO"
                          : S_ISSOCK(st.st_mode) ? "a socket"
                                                 : "a device") +
                         ", not a regular file: expected a regular file or a new name");
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), tmp_path_(path_.string() + ".tmp-" + std::to_string(::getpid())) {
  check_output_target(path_);
  // Registered before the file exists: a signal in between cannot leave it behind.
  slot_ = register_open(tmp_path_.string());
  // Created new, never through a link: a name left by a dead process of the same pid (a file
  // or a planted link) is removed first, not written through.
  errno = 0;
  int fd = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(tmp_path_.c_str()) == 0)
    fd = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) {
    // The stream opens the very file created (its descriptor), not whatever the name holds now.
    out_.open("/proc/self/fd/" + std::to_string(fd), std::ios::binary | std::ios::trunc);
    if (!out_) out_.open(tmp_path_, std::ios::binary | std::ios::trunc);  // no /proc
    ::close(fd);
  }
  if (fd < 0 || !out_) {
    const std::string why = errno != 0 ? os_error() : "open failed";
    if (fd >= 0) ::unlink(tmp_path_.c_str());
    unregister_open(slot_);
    throw InputError(path_.string(), "", "cannot write output file: " + why);
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_path_, ec);
  }
  unregister_open(slot_);
}

void AtomicFile::commit() {
  // A failed earlier write left its errno (EFBIG, ENOSPC); else clear it for flush and close.
  if (out_) {
    errno = 0;
    out_.flush();
  }
  if (out_) out_.close();  // close writes what is still buffered: it can fail too
  if (!out_) {
    const std::string why = errno != 0 ? os_error() : "write failed";
    std::error_code ec;
    std::filesystem::remove(tmp_path_, ec);
    throw InputError(path_.string(), "", "cannot write output file: " + why);
  }
  std::error_code ec;
  try {
    check_output_target(path_);  // what appeared there while the file was written
  } catch (...) {
    std::filesystem::remove(tmp_path_, ec);
    throw;
  }
  std::filesystem::rename(tmp_path_, path_, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp_path_, ec);
    throw InputError(path_.string(), "", "cannot write output file: " + why);
  }
  committed_ = true;
  unregister_open(slot_);
  slot_ = -1;
}

namespace {

/// "name.tmp-<digits>": a temporary file a killed sgdsim left behind.
bool temporary_of(const std::string& entry, const std::string& name) {
  const std::string stem = name + ".tmp-";
  return entry.size() > stem.size() && entry.compare(0, stem.size(), stem) == 0 &&
         entry.find_first_not_of("0123456789", stem.size()) == std::string::npos;
}

/// Whether `entry` is "name.tmp-PID" of a process that no longer exists (SIGKILL, SIGHUP of an
/// older sgdsim, a power cut): nothing will ever rename or remove it.
bool stale_temporary(const std::string& entry, const std::string& name) {
  if (!temporary_of(entry, name)) return false;
  const std::string digits = entry.substr(name.size() + 5);
  if (digits.size() > 9) return true;  // no such pid
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

OutputFolder::OutputFolder(std::filesystem::path dir, std::string writer, bool overwrite,
                           const std::string& option)
    : dir_(std::move(dir)), writer_(std::move(writer)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return;
  if (!fs::is_directory(dir_, ec))
    throw InputError(option, "", "\"" + dir_.string() + "\" exists and is not a folder");
  had_manifest_ = fs::is_regular_file(dir_ / kManifestName, ec);
  if (had_manifest_) {
    std::istringstream in(read_file(dir_ / kManifestName));
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const size_t tab = line.find('\t');
      if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() ||
          line.find('/', tab) != std::string::npos)
        throw InputError(
            (dir_ / kManifestName).string(), "",
            "not an sgdsim manifest line: \"" + line + "\" (expected WRITER<TAB>NAME)");
      previous_.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
  }
  std::vector<std::string> foreign;
  fs::directory_iterator it(dir_, ec);
  if (ec)
    throw InputError(option, "",
                     "cannot read output folder \"" + dir_.string() + "\": " + ec.message());
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name == kManifestName) continue;
    // A dead process's temporary files go (the manifest's own among them).
    bool stale = stale_temporary(name, kManifestName);
    for (const auto& [w, n] : previous_) stale = stale || stale_temporary(name, n);
    if (stale) {
      std::error_code rm;
      std::filesystem::remove(entry.path(), rm);
      continue;
    }
    bool known = temporary_of(name, kManifestName);
    for (const auto& [w, n] : previous_)
      if (n == name || temporary_of(name, n)) known = true;
    if (!known) foreign.push_back(name);
  }
  if (foreign.empty() || overwrite) return;
  std::sort(foreign.begin(), foreign.end());
  std::string shown;
  for (size_t i = 0; i < foreign.size() && i < 3; ++i) shown += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 3) shown += fmt::format(" and {} more", foreign.size() - 3);
  throw InputError(option, "",
                   fmt::format("output folder \"{}\" holds files sgdsim did not write there ({}; "
                               "not in its {}): use an empty or new folder, or --overwrite",
                               dir_.string(), shown, kManifestName));
}

void OutputFolder::will_write(const std::string& name) {
  // Never through a link out of the folder (a planted "runs" or "summary.json" link).
  std::error_code ec;
  if (std::filesystem::is_symlink(dir_ / name, ec))
    throw InputError((dir_ / name).string(), "",
                     "is a symbolic link: sgdsim writes its outputs only inside the output folder "
                     "(remove the link)");
  if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
}

void OutputFolder::write_manifest(bool with_previous) const {
  std::string text =
      "# sgdsim output manifest: what each sgdsim writer put in this folder (WRITER<TAB>NAME);\n"
      "# a re-run replaces its writer's files, other files make sgdsim refuse the folder\n";
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& p : previous_)
    if (with_previous || p.first != writer_) lines.push_back(p);
  for (const auto& n : names_) lines.emplace_back(writer_, n);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  for (const auto& [w, n] : lines) text += w + "\t" + n + "\n";
  write_file_atomic(dir_ / kManifestName, text);
}

void OutputFolder::declare() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw InputError("--out", "",
                     "cannot create output folder \"" + dir_.string() + "\": " + ec.message());
  write_manifest(true);
}

void OutputFolder::commit(const std::vector<std::string>& also) {
  std::vector<std::string> stale = also;
  for (const auto& [w, n] : previous_)
    if (w == writer_) stale.push_back(n);
  for (const auto& n : stale) {
    if (std::find(names_.begin(), names_.end(), n) != names_.end()) continue;
    std::error_code ec;
    std::filesystem::remove(dir_ / n, ec);
    if (ec)
      throw InputError((dir_ / n).string(), "",
                       "cannot remove the previous run's output: " + ec.message());
  }
  write_manifest(false);
}

void OutputFolder::discard(bool remove_folder) noexcept {
  std::error_code ec;
  for (const auto& n : names_) {
    bool had = false;
    for (const auto& p : previous_)
      if (p.second == n) had = true;
    if (!had) std::filesystem::remove(dir_ / n, ec);
  }
  if (!had_manifest_) std::filesystem::remove(dir_ / kManifestName, ec);
  if (remove_folder && std::filesystem::is_empty(dir_, ec)) std::filesystem::remove(dir_, ec);
}

FolderLock::FolderLock(const std::filesystem::path& dir, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(option, "", "\"" + dir.string() + "\" exists and is not a folder");
  created_ = fs::create_directories(dir, ec);
  if (ec)
    throw InputError(option, "",
                     "cannot create output folder \"" + dir.string() + "\": " + ec.message());
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0)
    throw InputError(option, "",
                     "cannot open output folder \"" + dir.string() + "\": " + os_error());
  // Held by the open folder itself (no lock file): released when the process ends, however.
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd_);
    fd_ = -1;
    if (created_) fs::remove(dir, ec);
    throw InputError(option, "",
                     "another sgdsim is writing into \"" + dir.string() +
                         "\" (the folder is locked): wait for it to end or use another folder");
  }
  // Other errors (a file system without flock): run unlocked, as before.
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  AtomicFile f(path);
  f.stream() << content;
  f.commit();
}

namespace {
int g_stdout_errno = 0;  // why standard output failed, when it first did
}  // namespace

bool stdout_written() {
  // A write that failed earlier left its errno (ENOSPC), unless a later call replaced it.
  const int earlier = errno;
  errno = 0;
  std::cout.flush();
  bool ok = !std::cout.fail();
  if (std::fflush(stdout) != 0) ok = false;
  if (std::ferror(stdout)) ok = false;
  if (!ok && g_stdout_errno == 0)
    g_stdout_errno = errno != 0 ? errno : earlier != 0 ? earlier : EIO;
  return ok;
}

std::string stdout_error() {
  return std::string("cannot write standard output: ") +
         std::strerror(g_stdout_errno != 0 ? g_stdout_errno : EIO);
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), "", "cannot read file: no such regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sgdsim
