#include "sim/app/isolate.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "sim/core/errors.hpp"
#include "sim/core/process.hpp"

namespace sgdsim {
namespace {

volatile std::sig_atomic_t g_child = 0;

extern "C" void pass_on(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

/// True for the lines SimGrid writes when it dies: critical log lines, backtraces, its
/// segfault report.
bool dying_words(const std::string& line) {
  return line.find("/CRITICAL]") != std::string::npos || line.rfind("Backtrace", 0) == 0 ||
         line.rfind("  ->  ", 0) == 0 || line.find("Segmentation fault") != std::string::npos ||
         line.find("Access violation") != std::string::npos;
}

/// SimGrid's message in a log line "[time] file:line: [category/CRITICAL] message".
std::string message_of(const std::string& line) {
  const size_t tag = line.find("/CRITICAL] ");
  if (tag != std::string::npos) return line.substr(tag + std::strlen("/CRITICAL] "));
  return line;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

/// The child's stderr, forwarded line by line (and '\r'-refreshed progress as it comes) until
/// SimGrid's dying words start; from then on held back.
class Forwarder {
 public:
  void feed(const char* data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      line_ += data[i];
      if (data[i] == '\n' || data[i] == '\r') flush_line();
    }
  }
  void finish() {
    if (!line_.empty()) flush_line();
  }
  /// The first line of the held-back text, or empty.
  const std::string& first_held() const { return first_held_; }
  /// Forwards what was held back (the child did not die after all).
  void release() {
    write_all(2, held_);
    held_.clear();
  }
  /// Whether the last forwarded byte left a line open (a progress line on a terminal).
  bool open_line() const { return open_; }

 private:
  void flush_line() {
    if (!holding_ && dying_words(line_)) holding_ = true;
    if (holding_) {
      if (first_held_.empty() && line_ != "\n") {
        first_held_ = line_;
        while (!first_held_.empty() && (first_held_.back() == '\n' || first_held_.back() == '\r'))
          first_held_.pop_back();
      }
      held_ += line_;
    } else {
      write_all(2, line_);
      open_ = line_.back() != '\n';
    }
    line_.clear();
  }

  std::string line_, held_, first_held_;
  bool holding_ = false;
  bool open_ = false;
};

/// Removes `<entry>.tmp-<pid>` files the child left in `dir` (a SIGKILL gives it no chance).
void remove_child_temporaries(const std::filesystem::path& dir, pid_t pid) {
  const std::string tail = ".tmp-" + std::to_string(pid);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
      std::filesystem::remove(it->path(), ec);
  }
}

}  // namespace

namespace {

/// The child: stderr into the pipe, the body's exit code (InputError: 2).
[[noreturn]] void run_child_body(int fds[2], const sigset_t& old_mask, pid_t parent,
                                 const std::function<int()>& body) {
  die_with_parent(parent, SIGTERM);  // a SIGKILLed sgdsim leaves no simulation running
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(fds[0]);
  ::dup2(fds[1], 2);
  ::close(fds[1]);
  int rc = 1;
  try {
    rc = body();
  } catch (const InputError& e) {
    std::cerr << "sgdsim: error: " << e.what() << "\n";
    rc = 2;
  } catch (const std::exception& e) {
    std::cerr << "sgdsim: internal error: " << e.what() << "\n";
    rc = 1;
  }
  if (!stdout_written() && rc == 0) {
    std::cerr << "sgdsim: error: " << stdout_error() << "\n";
    rc = 1;
  }
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(rc);
}

/// Passes the child's stderr on through `fw` until the child closes it.
void forward_child_stderr(int fd, Forwarder& fw) {
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    fw.feed(buf, static_cast<size_t>(n));
  }
  fw.finish();
  ::close(fd);
}

/// The one line for a child that died of a signal: SimGrid aborted (xbt_die, xbt_assert, an
/// uncaught exception) or crashed.
int report_child_death(const IsolatedRun& run, const Forwarder& fw, int sig) {
  std::string why = fw.first_held().empty() ? std::string() : message_of(fw.first_held());
  if (why.empty() || why.rfind("Backtrace", 0) == 0 || why.rfind("  ->", 0) == 0)
    why = fmt::format("the simulation died of signal {} ({})", sig, strsignal(sig));
  if (fw.open_line()) write_all(2, ::isatty(2) ? "\r\033[K" : "\n");
  write_all(2, fmt::format("sgdsim: error: {}: SimGrid failed during the run: {} (no result "
                           "written)\n",
                           run.what, why));
  return 2;
}

}  // namespace

int run_isolated(const IsolatedRun& run, const std::function<int()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot start the run: pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  // SIGINT/SIGTERM wait until the parent knows the child and passes them on (a signal in
  // between would end the parent and leave the child writing).
  sigset_t stop, old_mask;
  sigemptyset(&stop);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
  ::sigprocmask(SIG_BLOCK, &stop, &old_mask);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    throw std::runtime_error("cannot start the run: fork failed");
  }
  if (pid == 0) run_child_body(fds, old_mask, parent, body);
  ::close(fds[1]);
  g_child = pid;
  struct sigaction sa {
  }, old_int{}, old_term{}, old_hup{};
  sa.sa_handler = pass_on;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  Forwarder fw;
  forward_child_stderr(fds[0], fw);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) {  // a failed, interrupted or killed run leaves the folder as it found it
    remove_child_temporaries(run.folder->dir(), pid);
    run.folder->discard(run.created_folder);
  }
  if (WIFEXITED(status)) {
    fw.release();
    return WEXITSTATUS(status);
  }
  return report_child_death(run, fw, WTERMSIG(status));
}

}  // namespace sgdsim
