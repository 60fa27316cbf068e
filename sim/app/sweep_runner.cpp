// Sweep execution: child processes, the local executor, and the driver loop.
#include "sim/app/sweep_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <optional>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sgdsim {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void note_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The last non-empty line of a child's log, without the "sgdsim: error: " prefix.
std::string last_log_line(const fs::path& log) {
  std::string text;
  try {
    text = read_file(log);
  } catch (const InputError&) {
    return "";
  }
  size_t end = text.size();
  while (end > 0) {
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
      --end;
    size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(start, end - start);
    if (line.find("\r") != std::string::npos) line = line.substr(line.rfind('\r') + 1);
    if (!line.empty()) {
      for (const char* prefix : {"sgdsim: error: ", "sgdsim: "})
        if (line.rfind(prefix, 0) == 0) return line.substr(std::strlen(prefix));
      return line;
    }
    end = start;
  }
  return "";
}

std::string fmt_duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
}

/// Holds an exclusive lock on DIR/.sweep.lock so two sweeps do not write one folder.
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) {
    fs::path p = dir / ".sweep.lock";
    fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw InputError("--out", "",
                       "cannot write in \"" + dir.string() + "\": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw InputError(
          "--out", "",
          "another sweep is writing into \"" + dir.string() + "\" (locked " + p.string() + ")");
    }
  }
  ~DirLock() { ::close(fd_); }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

int sweep_interrupt_signal() {
  return g_signal;
}

void install_sweep_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a nap ends early
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void sweep_nap(int ms) {
  struct timespec ts {
    0, static_cast<long>(ms) * 1000000L
  };
  ::nanosleep(&ts, nullptr);
}

fs::path self_executable() {
  return fs::read_symlink("/proc/self/exe");
}

// ---------------------------------------------------------------------------------------------

LocalPool::LocalPool(std::string sgdsim_binary, int jobs, std::vector<std::string> run_args)
    : binary_(std::move(sgdsim_binary)), jobs_(std::max(jobs, 0)), run_args_(std::move(run_args)) {}

LocalPool::LocalPool(RunFunction run, int jobs, std::vector<std::string> run_args)
    : run_(std::move(run)), jobs_(std::max(jobs, 0)), run_args_(std::move(run_args)) {}

LocalPool::~LocalPool() {
  if (!children_.empty()) abort();
}

int LocalPool::free_slots() {
  return jobs_ - static_cast<int>(children_.size());
}

void LocalPool::start(const RunTask& task) {
  const fs::path dir(task.run_dir);
  // The folder was checked for foreign files before the sweep started (drive_sweep); the
  // manifest tells the run which files are the sweep's.
  OutputFolder folder(dir, "sweep", true, "--out");
  for (const char* name : {"sweep-scenario.json", "sweep.log", "sweep-key"})
    folder.will_write(name);
  folder.declare();
  std::error_code ec;
  fs::remove(dir / "sweep-key", ec);  // written again only if this attempt succeeds
  fs::remove(dir / "summary.json", ec);
  const fs::path scenario = dir / "sweep-scenario.json";
  write_file_atomic(scenario, task.scenario.dump(2) + "\n");
  const std::string log = (dir / "sweep.log").string();
  const pid_t pid = launch(task, scenario.string(), log);
  children_.push_back({pid, task, now_s()});
}

pid_t LocalPool::launch(const RunTask& task, const std::string& scenario, const std::string& log) {
  std::vector<std::string> args = {"run", scenario, "--out", task.run_dir, "--quiet"};
  args.insert(args.end(), run_args_.begin(), run_args_.end());
  if (run_) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0)
      throw std::runtime_error(std::string("cannot fork a run: ") + std::strerror(errno));
    if (pid > 0) return pid;
    // The child: the interrupt handling and output of `sgdsim run`, then _exit (no atexit
    // handlers or destructors of the parent's objects); it ends with the sweep.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, SIG_DFL);
    die_with_parent(parent, SIGTERM);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (in < 0 || out < 0) ::_exit(1);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    int rc = 1;
    try {
      rc = run_(args);
    } catch (const InputError& e) {
      std::cerr << "sgdsim: error: " << e.what() << "\n";
      rc = 2;
    } catch (const std::exception& e) {
      std::cerr << "sgdsim: internal error: " << e.what() << "\n";
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  args.insert(args.begin(), binary_);
  return spawn_logged(args, log);  // ends with the sweep, even a SIGKILLed one
}

std::vector<RunOutcome> LocalPool::poll() {
  std::vector<RunOutcome> done;
  for (size_t i = 0; i < children_.size();) {
    int status = 0;
    pid_t r = ::waitpid(children_[i].pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) {
      ++i;
      continue;
    }
    const Child c = children_[i];
    children_.erase(children_.begin() + static_cast<long>(i));
    RunOutcome o;
    o.index = c.task.index;
    o.wall_s = now_s() - c.start_s;
    const fs::path dir(c.task.run_dir);
    std::string error;
    if (r < 0) {
      error = std::string("lost the child process: ") + std::strerror(errno);
    } else if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) o.interrupted = true;
      error = fmt::format("killed by signal {} ({})", sig, strsignal(sig));
    } else if (WEXITSTATUS(status) != 0) {
      int code = WEXITSTATUS(status);
      if (code == 128 + SIGINT || code == 128 + SIGTERM || code == 128 + SIGHUP)
        o.interrupted = true;
      error = last_log_line(dir / "sweep.log");
      if (error.empty()) error = fmt::format("sgdsim run exited with code {}", code);
    }
    json summary;
    if (error.empty()) {
      try {
        summary = json::parse(read_file(dir / "summary.json"));
      } catch (const std::exception& e) {
        error = std::string("sgdsim run succeeded but its summary.json is unreadable: ") + e.what();
      }
    }
    if (error.empty()) write_file_atomic(dir / "sweep-key", c.task.key + "\n");
    o.line = result_line(c.task.name, c.task.params, c.task.key, error.empty() ? &summary : nullptr,
                         error);
    done.push_back(std::move(o));
  }
  return done;
}

void LocalPool::abort() {
  for (const auto& c : children_) ::kill(c.pid, SIGTERM);
  const double deadline = now_s() + 5.0;
  while (!children_.empty()) {
    for (size_t i = 0; i < children_.size();) {
      int status = 0;
      pid_t r = ::waitpid(children_[i].pid, &status, WNOHANG);
      if (r == children_[i].pid || (r < 0 && errno == ECHILD))
        children_.erase(children_.begin() + static_cast<long>(i));
      else
        ++i;
    }
    if (children_.empty()) break;
    if (now_s() > deadline)
      for (const auto& c : children_) ::kill(c.pid, SIGKILL);
    sweep_nap(5);
  }
}

// ---------------------------------------------------------------------------------------------

namespace {

/// Progress on stderr: a refreshed status line on a terminal, one line per finished run
/// otherwise (logs of batch jobs).
class SweepProgress {
 public:
  SweepProgress(size_t total, bool quiet) : total_(total), quiet_(quiet), tty_(::isatty(2) != 0) {}

  void finished(const std::string& name, const json& line, double wall_s, size_t done,
                size_t executed, size_t to_run, size_t failed, int running, double elapsed) {
    if (quiet_) return;
    done_ = done, executed_ = executed, to_run_ = to_run, failed_ = failed, running_ = running;
    elapsed_ = elapsed;
    clear();
    const bool ok = line.value("status", "") == "ok";
    if (!tty_ || !ok) {
      std::string msg = fmt::format("[{}/{}] {} {}", done, total_, ok ? "ok" : "FAILED", name);
      if (wall_s > 0) msg += fmt::format(" ({:.2f} s)", wall_s);
      if (!ok) msg += ": " + line.value("error", std::string());
      std::fprintf(stderr, "%s\n", msg.c_str());
    }
    draw();
  }

  void tick(int running, double elapsed) {
    if (quiet_ || !tty_) return;
    running_ = running;
    elapsed_ = elapsed;
    if (elapsed - last_draw_ < 0.5) return;
    clear();
    draw();
  }

  void clear() {
    if (tty_ && shown_) std::fputs("\r\033[K", stderr), shown_ = false;
  }

 private:
  void draw() {
    if (!tty_ || quiet_) return;
    std::string eta = "?";
    if (executed_ > 0 && to_run_ >= executed_)
      eta = fmt_duration(elapsed_ / static_cast<double>(executed_) *
                         static_cast<double>(to_run_ - executed_));
    std::fprintf(stderr, "\r\033[Ksweep: %zu/%zu done, %zu failed, %d running, ETA %s", done_,
                 total_, failed_, running_, eta.c_str());
    std::fflush(stderr);
    shown_ = true;
    last_draw_ = elapsed_;
  }

  size_t total_;
  bool quiet_;
  bool tty_;
  bool shown_ = false;
  size_t done_ = 0, executed_ = 0, to_run_ = 0, failed_ = 0;
  int running_ = 0;
  double elapsed_ = 0, last_draw_ = -1;
};

}  // namespace

namespace {

/// Run folders holding files sgdsim did not write are refused before anything is written.
void check_run_folders(const Sweep& sweep, const SweepOptions& options) {
  for (size_t i = 0; i < sweep.runs.size(); ++i) {
    if (!sweep.runs[i].error.empty()) continue;
    const RunTask task = make_task(sweep, i, options.out_dir);
    if (!completed_line(task))
      (void)OutputFolder(task.run_dir, "sweep", options.overwrite, "--out");
  }
}

/// Runs the missing runs of a sweep on the executors, keeping results.jsonl current.
class SweepDriver {
 public:
  SweepDriver(const Sweep& sweep, const SweepOptions& options,
              const std::vector<Executor*>& executors)
      : sweep_(sweep),
        options_(options),
        executors_(executors),
        out_(options.out_dir),
        n_(sweep.runs.size()),
        lines_(n_),
        progress_(n_, options.quiet) {}

  int run() {
    t0_ = now_s();
    collect();
    write_results(out_, sweep_, lines_);
    last_write_ = now_s();
    const int sig = loop();
    if (sig != 0) {
      // Keep what finished; stop the rest (their partial outputs are removed by the children).
      for (auto* e : executors_) record(e->poll());
      for (auto* e : executors_) e->abort();
    }
    write_results(out_, sweep_, lines_);
    progress_.clear();
    return finish(sig);
  }

 private:
  /// Invalid runs get their error line, completed ones their old line; the rest queue.
  void collect() {
    for (size_t i = 0; i < n_; ++i) {
      const SweepRun& run = sweep_.runs[i];
      if (!run.error.empty()) {
        lines_[i] = result_line(run.name, run.params, run.key, nullptr, run.error);
        ++invalid_;
      } else if (auto l = completed_line(make_task(sweep_, i, out_))) {
        lines_[i] = std::move(*l);
        ++already_;
      } else {
        queue_.push_back(i);
      }
    }
    to_run_ = queue_.size();
    if (!options_.quiet)
      std::fprintf(stderr, "sweep %s: %zu runs, %zu already done, %zu invalid, %zu to run\n",
                   sweep_.file.c_str(), n_, already_, invalid_, to_run_);
    done_ = already_;
    for (size_t i = 0; i < n_; ++i)
      if (lines_[i] && !sweep_.runs[i].error.empty()) {
        ++done_, ++failed_;
        progress_.finished(sweep_.runs[i].name, *lines_[i], 0, done_, executed_, to_run_, failed_,
                           0, 0);
      }
  }

  int running() const {
    int r = 0;
    for (auto* e : executors_) r += e->running();
    return r;
  }

  void record(std::vector<RunOutcome> outcomes) {
    for (auto& o : outcomes) {
      if (o.interrupted) continue;  // not a result: the run stays missing and runs on resume
      ++done_, ++executed_;
      if (o.line.value("status", "") != "ok") ++failed_;
      lines_[o.index] = std::move(o.line);
      dirty_ = true;
      progress_.finished(sweep_.runs[o.index].name, *lines_[o.index], o.wall_s, done_, executed_,
                         to_run_, failed_, running(), now_s() - t0_);
    }
  }

  /// Starts queued runs while slots are free and records outcomes; returns a signal or 0.
  int loop() {
    while (true) {
      if (const int sig = sweep_interrupt_signal(); sig != 0) return sig;
      bool active = false;
      for (auto* e : executors_)
        while (!queue_.empty() && e->free_slots() > 0) {
          e->start(make_task(sweep_, queue_.front(), out_));
          queue_.pop_front();
          active = true;
        }
      for (auto* e : executors_) {
        auto outcomes = e->poll();
        active = active || !outcomes.empty();
        record(std::move(outcomes));
      }
      if (queue_.empty() && running() == 0) return 0;
      if (dirty_ && now_s() - last_write_ > 2.0) {
        write_results(out_, sweep_, lines_);
        dirty_ = false;
        last_write_ = now_s();
      }
      progress_.tick(running(), now_s() - t0_);
      if (!active) sweep_nap(2);
    }
  }

  int finish(int sig) const {
    size_t ok = 0, missing = 0;
    for (const auto& l : lines_) {
      if (!l)
        ++missing;
      else if (l->value("status", "") == "ok")
        ++ok;
    }
    if (!options_.quiet) {
      std::string msg = fmt::format(
          "sgdsim sweep: {} runs: {} ok, {} failed, {} not run; {} executed, {} already done; "
          "{:.2f} s; results in {}",
          n_, ok, n_ - ok - missing, missing, executed_, already_, now_s() - t0_,
          (out_ / "results.jsonl").string());
      if (sig != 0) msg += fmt::format(" (interrupted by signal {})", sig);
      std::cout << msg << std::endl;
    }
    if (sig != 0) return 128 + sig;
    return ok == n_ ? 0 : 1;
  }

  const Sweep& sweep_;
  const SweepOptions& options_;
  const std::vector<Executor*>& executors_;
  const fs::path& out_;
  const size_t n_;
  std::vector<std::optional<json>> lines_;
  SweepProgress progress_;
  std::deque<size_t> queue_;
  size_t already_ = 0, invalid_ = 0, to_run_ = 0, done_ = 0, failed_ = 0, executed_ = 0;
  bool dirty_ = false;
  double t0_ = 0, last_write_ = 0;
};

}  // namespace

int drive_sweep(const Sweep& sweep, const SweepOptions& options,
                const std::vector<Executor*>& executors) {
  const fs::path& out = options.out_dir;
  OutputFolder top(out, "sweep", options.overwrite, "--out");
  check_run_folders(sweep, options);
  for (const char* name : {"results.jsonl", "results.csv", "runs", ".sweep.lock"})
    top.will_write(name);
  try {
    top.declare();
    fs::create_directories(out / "runs");
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out", "",
                     "cannot create output folder \"" + out.string() + "\": " + e.code().message());
  }
  DirLock lock(out);
  return SweepDriver(sweep, options, executors).run();
}

}  // namespace sgdsim
