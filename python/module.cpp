// The extension `sgdsim._sgdsim`: the command line's subcommands called in a forked child of the
// Python interpreter. SimGrid 3.32 creates its engine once per process and keeps global state
// (clock, platform) that cannot be reset, so a second run in one process is impossible; a fork
// per call gives every run a fresh process (like `sgdsim sweep`'s runs) while still running the
// library code of `sgdsim run` — no sgdsim binary is started. The child writes into a scratch
// folder; the Python side (sgdsim/__init__.py) reads the files into dicts and DataFrames.
#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/app/commands.hpp"
#include "sim/app/sweep.hpp"
#include "sim/app/sweep_runner.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/process.hpp"
#include "sim/core/units.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace sgdsim {
namespace {

/// The message of an InputError without the "file: pointer: " prefix what() adds.
std::string bare_message(const InputError& e) {
  std::string m = e.what();
  for (const std::string& part : {e.file(), e.pointer()})
    if (!part.empty() && m.rfind(part + ": ", 0) == 0) m = m.substr(part.size() + 2);
  return m;
}

/// An error as the JSON the Python side turns into an exception.
json error_json(const std::string& kind, const std::string& what, const std::string& file,
                const std::string& pointer, const std::string& message) {
  return {
      {"kind", kind}, {"what", what}, {"file", file}, {"pointer", pointer}, {"message", message}};
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

/// Sets SGDSIM_DATA_DIR for this (child) process unless the user set it.
void use_data_dir(const std::string& data_dir) {
  const char* env = std::getenv("SGDSIM_DATA_DIR");
  if (!data_dir.empty() && (env == nullptr || *env == '\0'))
    ::setenv("SGDSIM_DATA_DIR", data_dir.c_str(), 1);
}

/// Sets SGDSIM_DATA_DIR like use_data_dir for its lifetime, then restores the caller's value.
class ScopedDataDir {
 public:
  explicit ScopedDataDir(const std::string& data_dir) {
    if (const char* env = std::getenv("SGDSIM_DATA_DIR")) old_ = env;
    use_data_dir(data_dir);
  }
  ~ScopedDataDir() {
    if (old_)
      ::setenv("SGDSIM_DATA_DIR", old_->c_str(), 1);
    else
      ::unsetenv("SGDSIM_DATA_DIR");
  }
  ScopedDataDir(const ScopedDataDir&) = delete;
  ScopedDataDir& operator=(const ScopedDataDir&) = delete;

 private:
  std::optional<std::string> old_;
};

/// Runs dispatch(args) with stdout and stderr in files of `work_dir`, writing error.json when it
/// throws; returns the exit code as the CLI's main would.
int child_main(const std::vector<std::string>& args, const std::string& work_dir) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, SIG_DFL);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open((work_dir + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open((work_dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) return 1;
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  try {
    return dispatch(args);
  } catch (const InputError& e) {
    write_text(work_dir + "/error.json",
               error_json("input", e.what(), e.file(), e.pointer(), bare_message(e)).dump());
    std::cerr << "sgdsim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    write_text(work_dir + "/error.json", error_json("internal", e.what(), "", "", e.what()).dump());
    std::cerr << "sgdsim: internal error: " << e.what() << "\n";
    return 1;
  }
}

/// Waits for `pid` without holding the GIL; returns its exit code (128 + signal if killed).
int wait_child(pid_t pid) {
  int status = 0;
  {
    py::gil_scoped_release release;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/// `sgdsim ARGS...` in a forked child; outputs in `work_dir` (stdout, stderr, error.json).
int call(const std::vector<std::string>& args, const std::string& work_dir,
         const std::string& data_dir) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    die_with_parent(parent, SIGTERM);  // no run outlives a killed interpreter
    use_data_dir(data_dir);
    int rc = child_main(args, work_dir);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return wait_child(pid);
}

/// Runs a sweep file into `out_dir` (results.jsonl, results.csv, runs/<name>/), each run in a
/// forked child calling `sgdsim run`'s code, `jobs` at once. Returns {"rc": exit code} or
/// {"error": {...}} for a bad sweep file (the parent never creates a SimGrid engine).
py::dict sweep(const std::string& file, const std::string& out_dir, int jobs,
               const std::vector<std::string>& cfg, const std::string& data_dir) {
  py::dict r;
  if (jobs < 1)  // no slot would ever start a run
    throw py::value_error("jobs: expected an integer >= 1, got " + std::to_string(jobs));
  ScopedDataDir scoped(data_dir);  // load_sweep's validation and the children resolve data here
  try {
    Sweep s = load_sweep(file, cfg);
    LocalPool pool([](const std::vector<std::string>& args) { return dispatch(args); }, jobs);
    int rc = 0;
    {
      py::gil_scoped_release release;
      rc = drive_sweep(s, SweepOptions{out_dir, true}, {&pool});
    }
    r["rc"] = rc;
  } catch (const InputError& e) {
    r["error"] = error_json("input", e.what(), e.file(), e.pointer(), bare_message(e)).dump();
  }
  return r;
}

/// A unit string as a number: kind "bandwidth" (B/s), "time" (s), "size" (bytes) or "speed"
/// (flop/s); None when `text` is not one (sim/core/units is the only unit parser).
std::optional<double> parse_quantity(const std::string& kind, const std::string& text) {
  if (kind == "bandwidth") return units::parse_bandwidth_Bps(text);
  if (kind == "time") return units::parse_time_s(text);
  if (kind == "size") return units::parse_size_bytes(text);
  if (kind == "speed") return units::parse_speed_flops(text);
  throw py::value_error("kind: expected bandwidth, time, size or speed, got \"" + kind + "\"");
}

}  // namespace
}  // namespace sgdsim

PYBIND11_MODULE(_sgdsim, m) {
  m.doc() = "sgdsim's library calls; use the sgdsim package, not this module";
  m.def("call", &sgdsim::call, py::arg("args"), py::arg("work_dir"), py::arg("data_dir"),
        "runs `sgdsim ARGS...` in a forked child writing into work_dir; returns the exit code");
  m.def("sweep", &sgdsim::sweep, py::arg("file"), py::arg("out_dir"), py::arg("jobs"),
        py::arg("cfg"), py::arg("data_dir"), "runs a sweep file, each run in a forked child");
  m.def("parse_quantity", &sgdsim::parse_quantity, py::arg("kind"), py::arg("text"),
        "a unit string as a number, or None");
  m.attr("version") = SGDSIM_VERSION;
}
