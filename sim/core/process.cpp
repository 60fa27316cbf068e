#include "sim/core/process.hpp"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <limits>
#include <stdexcept>

extern char** environ;

namespace sgdsim {

void die_with_parent(pid_t parent, int sig) noexcept {
  ::prctl(PR_SET_PDEATHSIG, sig);
  if (::getppid() != parent) ::raise(sig);  // the parent died before the request
}

namespace {

/// The child between fork and exec (async-signal-safe calls only): reports a failure's errno
/// through `report` (close-on-exec, so a successful exec reports nothing).
[[noreturn]] void exec_child(pid_t parent, char* const* argv, const char* log, int report) {
  die_with_parent(parent, SIGTERM);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGALRM}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
  if (in >= 0 && out >= 0 && ::dup2(in, 0) >= 0 && ::dup2(out, 1) >= 0 && ::dup2(out, 2) >= 0) {
    if (in > 2) ::close(in);
    if (out > 2) ::close(out);
    ::execve(argv[0], argv, environ);
  }
  const int e = errno;
  ssize_t ignored = ::write(report, &e, sizeof e);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot start " + argv.at(0) + ": " + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw std::runtime_error("cannot start " + argv.at(0) + ": " + std::strerror(e));
  }
  if (pid == 0) exec_child(parent, args.data(), log.c_str(), report[1]);
  ::close(report[1]);
  int child_errno = 0;
  ssize_t n = 0;
  while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot start " + argv.at(0) + ": " + std::strerror(child_errno));
  }
  return pid;
}

void keep_freed_memory() noexcept {
#if defined(__GLIBC__)
  // glibc gives the top of its heap back once 2 x the (adaptive) mmap threshold of it is free,
  // and the kernel zeroes those pages again when the next iteration's fragment reuses them: 8 %
  // of a 262,144-worker sync run's CPU (perf). Never trimming, and allocating blocks up to
  // glibc's largest threshold (32 MiB on 64-bit) from the heap, keeps them; the peak resident
  // size is the same (the heap grows to it either way).
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

}  // namespace sgdsim
