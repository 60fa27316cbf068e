#include "sim/core/files.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
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
  std::signal(SIGINT, remove_open_files);
  std::signal(SIGTERM, remove_open_files);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS}) install_crash_cleanup(sig);
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), tmp_path_(path_.string() + ".tmp-" + std::to_string(::getpid())) {
  // Registered before the file exists: a signal in between cannot leave it behind.
  slot_ = register_open(tmp_path_.string());
  errno = 0;
  out_.open(tmp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    unregister_open(slot_);
    throw InputError(path_.string(), "",
                     "cannot write output file: " + (errno != 0 ? os_error() : "open failed"));
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

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  AtomicFile f(path);
  f.stream() << content;
  f.commit();
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
