// sgdsim_mpi_sweep: the runs of a sweep shared by MPI ranks. Rank 0 expands the sweep, skips
// completed runs and hands the others out one by one (a dynamic work queue over MPI_Send /
// MPI_Recv); every rank, rank 0 included, runs up to -j of them at a time as `sgdsim run`
// child processes and sends the result lines back; rank 0 writes results.jsonl and
// results.csv exactly as `sgdsim sweep` does. The output folder must be shared by the ranks.
// No SimGrid in this process.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/app/sweep.hpp"
#include "sim/app/sweep_options.hpp"
#include "sim/app/sweep_runner.hpp"
#include "sim/core/errors.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sgdsim {
namespace {

enum Tag : int {
  kReady = 1,   ///< worker -> 0: {"jobs": N}
  kTask = 2,    ///< 0 -> worker: a RunTask
  kResult = 3,  ///< worker -> 0: {"index", "line", "interrupted", "wall_s"}
  kStop = 4,    ///< 0 -> worker: no more work
  kAbort = 5,   ///< 0 -> worker: stop the running children, then no more work
  kBye = 6,     ///< worker -> 0: leaving (after kStop / kAbort, or on its own signal)
};

void send_json(int dest, int tag, const json& j) {
  std::string s = j.dump();
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

/// Receives the message announced by `status` as JSON.
json recv_json(const MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string s(static_cast<size_t>(count), '\0');
  MPI_Recv(s.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return s.empty() ? json::object() : json::parse(s);
}

/// The other ranks, seen from rank 0 as one executor with their free slots.
class MpiWorkers : public Executor {
 public:
  explicit MpiWorkers(int size)
      : free_(static_cast<size_t>(size), 0),
        inflight_(static_cast<size_t>(size), 0),
        gone_(static_cast<size_t>(size), false) {
    gone_[0] = true;  // rank 0 runs its own children through a LocalPool
  }

  int free_slots() override {
    drain();
    int n = 0;
    for (size_t r = 1; r < free_.size(); ++r)
      if (!gone_[r]) n += free_[r];
    return n;
  }

  void start(const RunTask& task) override {
    size_t best = 0;
    for (size_t r = 1; r < free_.size(); ++r)
      if (!gone_[r] && free_[r] > 0 && (best == 0 || free_[r] > free_[best])) best = r;
    if (best == 0) throw std::logic_error("no free MPI rank");
    send_json(static_cast<int>(best), kTask, task_to_json(task));
    --free_[best];
    ++inflight_[best];
  }

  std::vector<RunOutcome> poll() override {
    drain();
    return std::exchange(outcomes_, {});
  }

  int running() const override {
    int n = 0;
    for (size_t r = 1; r < inflight_.size(); ++r) n += inflight_[r];
    return n;
  }

  void abort() override { shutdown(kAbort); }

  /// Tells every remaining rank to leave (kStop or kAbort) and waits for their goodbyes.
  void shutdown(int tag) {
    for (size_t r = 1; r < gone_.size(); ++r)
      if (!gone_[r]) send_json(static_cast<int>(r), tag, json::object());
    while (std::find(gone_.begin(), gone_.end(), false) != gone_.end()) {
      MPI_Status st;
      MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      handle(st);
    }
    outcomes_.clear();
  }

 private:
  void drain() {
    while (true) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) return;
      handle(st);
    }
  }

  void handle(const MPI_Status& st) {
    json j = recv_json(st);
    const auto r = static_cast<size_t>(st.MPI_SOURCE);
    if (st.MPI_TAG == kReady) {
      free_[r] = j.value("jobs", 1);
    } else if (st.MPI_TAG == kResult) {
      RunOutcome o;
      o.index = j.at("index").get<size_t>();
      o.line = j.at("line");
      o.interrupted = j.value("interrupted", false);
      o.wall_s = j.value("wall_s", 0.0);
      outcomes_.push_back(std::move(o));
      ++free_[r];
      --inflight_[r];
    } else if (st.MPI_TAG == kBye) {
      gone_[r] = true;
      inflight_[r] = 0;
      free_[r] = 0;
    }
  }

  std::vector<int> free_;
  std::vector<int> inflight_;
  std::vector<bool> gone_;
  std::vector<RunOutcome> outcomes_;
};

/// A rank other than 0: runs what rank 0 sends until told to stop.
void worker_loop(const std::string& sgdsim_binary, int jobs,
                 const std::vector<std::string>& run_args) {
  send_json(0, kReady, json{{"jobs", jobs}});
  LocalPool pool(sgdsim_binary, jobs, run_args);
  bool stop = false;
  while (!stop) {
    bool active = false;
    while (true) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) break;
      json j = recv_json(st);
      active = true;
      if (st.MPI_TAG == kTask) {
        pool.start(task_from_json(j));
      } else if (st.MPI_TAG == kAbort) {
        pool.abort();
        stop = true;
      } else if (st.MPI_TAG == kStop) {
        stop = true;
      }
    }
    if (!stop && sweep_interrupt_signal() != 0) {
      pool.abort();  // this rank was signalled: leave; rank 0 runs the rest elsewhere
      stop = true;
    }
    for (auto& o : pool.poll()) {
      send_json(0, kResult,
                json{{"index", o.index},
                     {"line", o.line},
                     {"interrupted", o.interrupted},
                     {"wall_s", o.wall_s}});
      active = true;
    }
    if (!active && !stop) sweep_nap(2);
  }
  send_json(0, kBye, json::object());
}

int run(int argc, char** argv, int rank, int size) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      if (rank == 0)
        std::cout << sweep_help("mpirun -np P sgdsim_mpi_sweep")
                  << "  --sgdsim PATH  the sgdsim executable (default: sgdsim next to "
                     "sgdsim_mpi_sweep)\n";
      return 0;
    }
  SweepCommand c = parse_sweep_command(args);
  std::string binary = c.sgdsim_binary;
  if (binary.empty()) binary = (self_executable().parent_path() / "sgdsim").string();
  if (::access(binary.c_str(), X_OK) != 0)
    throw InputError("--sgdsim", "", "\"" + binary + "\" is not an executable sgdsim");
  install_sweep_signal_handlers();
  if (rank != 0) {
    worker_loop(binary, c.jobs, run_args(c));
    return 0;
  }
  MpiWorkers workers(size);
  try {
    Sweep sweep = load_sweep(c.sweep_file, c.cfg);
    if (c.list) {
      for (const auto& r : sweep.runs) std::cout << r.name << "\n";
      workers.shutdown(kStop);
      return 0;
    }
    LocalPool pool(binary, c.jobs, run_args(c));
    int code = drive_sweep(sweep, SweepOptions{c.out_dir, c.quiet, c.overwrite}, {&pool, &workers});
    workers.shutdown(kStop);  // no-op for ranks already gone after an abort
    return code;
  } catch (...) {
    workers.shutdown(kAbort);
    throw;
  }
}

}  // namespace
}  // namespace sgdsim

#ifdef SGDSIM_SANITIZED
/// Open MPI never frees its start-up allocations: keep LeakSanitizer from failing every rank.
extern "C" const char* __lsan_default_options() {
  return "detect_leaks=0";
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  try {
    code = sgdsim::run(argc, argv, rank, size);
  } catch (const sgdsim::InputError& e) {
    if (rank == 0) std::cerr << "sgdsim_mpi_sweep: error: " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "sgdsim_mpi_sweep: internal error (rank " << rank << "): " << e.what() << "\n";
    code = 1;
  }
  MPI_Finalize();
  return code;
}
