// Benchmark of SimGrid 3.32 itself, not of sgdsim: how much a message costs with many in flight,
// started the way sgdsim's runner starts them (host-to-host comms from maestro's completion
// callbacks, which SimGrid detaches and lists in maestro's activity list) and the way an
// actor-per-rank runner would (non-detached mailbox comms, one actor per rank). The workload
// is a ring: on `ranks` hosts with private links (a SimGrid cluster, no backbone), each rank
// sends `steps` messages to the next one, message k+1 once its message k and its predecessor's
// message k have arrived, so `ranks` messages are in flight at any time. Left out: everything
// sgdsim adds (its task graph, observers, outputs). Prints the simulated time, the messages and
// the wall time as one JSON line.
//
// Usage: simgrid_comm_rate RANKS STEPS maestro|actors
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

/// `prefix` followed by `n` (appended: GCC 12 warns falsely on "literal" + std::string at -O3).
std::string numbered(const char* prefix, int n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

constexpr uint64_t kMessageBytes = 1000000;

int ranks = 0, steps = 0;
int64_t messages = 0;
std::vector<sg4::Host*> hosts;

/// Ring state of the maestro mode: per rank, its messages sent, arrived from its predecessor
/// and started, and its running comm (kept alive until its completion callback).
struct MaestroRing {
  std::vector<int> sent, received, started;
  std::vector<sg4::CommPtr> running;
  std::vector<sg4::CommPtr> ended;  // released at the next callback, after SimGrid is done

  void start(int r) {
    auto comm = sg4::Comm::sendto_init(hosts[r], hosts[(r + 1) % ranks]);
    comm->set_payload_size(kMessageBytes);
    comm->set_data(reinterpret_cast<void*>(static_cast<intptr_t>(r)));
    running[r] = comm;
    ++started[r];
    ++messages;
    comm->start();
  }
  /// Starts rank r's next message if its previous one and its predecessor's have arrived.
  void advance(int r) {
    if (started[r] < steps && sent[r] >= started[r] && received[r] >= started[r]) start(r);
  }
  void completed(int r) {
    ended.clear();
    ended.push_back(std::move(running[r]));
    const int next = (r + 1) % ranks;
    ++sent[r];
    ++received[next];
    advance(r);
    advance(next);
  }
};

void run_maestro() {
  static MaestroRing ring;
  ring.sent.assign(ranks, 0);
  ring.received.assign(ranks, 0);
  ring.started.assign(ranks, 0);
  ring.running.resize(ranks);
  sg4::Activity::on_completion_cb([](sg4::Activity const& a) {
    ring.completed(static_cast<int>(reinterpret_cast<intptr_t>(a.get_data<void>())));
  });
  for (int r = 0; r < ranks; ++r) ring.start(r);
}

void run_actors() {
  for (int r = 0; r < ranks; ++r)
    sg4::Actor::create(numbered("rank-", r), hosts[r], [r]() {
      sg4::Mailbox* next = sg4::Mailbox::by_name(numbered("rank-", (r + 1) % ranks));
      sg4::Mailbox* mine = sg4::Mailbox::by_name(numbered("rank-", r));
      static int payload = 0;  // mailbox comms carry a pointer; nothing reads it
      for (int k = 0; k < steps; ++k) {
        sg4::CommPtr send = next->put_async(&payload, kMessageBytes);
        void* got = nullptr;
        sg4::CommPtr recv = mine->get_async<void>(&got);
        send->wait();
        recv->wait();
        ++messages;
      }
    });
}

/// A cluster of `n` hosts with private 10 GB/s, 1 us links and no backbone, in a file of its
/// own (removed by main).
std::filesystem::path write_platform(int n) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() /
      (numbered("simgrid-comm-rate-", static_cast<int>(::getpid())) + ".xml");
  std::ofstream(p) << "<?xml version='1.0'?>\n"
                      "<!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>\n"
                      "<platform version='4.1'><cluster id='c' prefix='h' suffix='' radical='0-"
                   << n - 1 << "' speed='1Gf' bw='10GBps' lat='1us'/></platform>\n";
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const char* quiet[] = {argv[0], "--log=root.thres:critical"};
  int simgrid_argc = 2;
  if (argc != 4 || (std::string(argv[3]) != "maestro" && std::string(argv[3]) != "actors")) {
    std::fprintf(stderr, "usage: %s RANKS STEPS maestro|actors\n", argv[0]);
    return 2;
  }
  ranks = std::atoi(argv[1]);
  steps = std::atoi(argv[2]);
  if (ranks < 2 || steps < 1) {
    std::fprintf(stderr, "%s: expected RANKS >= 2 and STEPS >= 1\n", argv[0]);
    return 2;
  }
  sg4::Engine engine(&simgrid_argc, const_cast<char**>(quiet));
  const std::filesystem::path platform = write_platform(ranks);
  engine.load_platform(platform.string());
  std::filesystem::remove(platform);
  for (int r = 0; r < ranks; ++r) hosts.push_back(sg4::Host::by_name(numbered("h", r)));
  const auto t0 = std::chrono::steady_clock::now();
  if (std::string(argv[3]) == "maestro")
    run_maestro();
  else
    run_actors();
  engine.run();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "{\"mode\": \"%s\", \"ranks\": %d, \"steps\": %d, \"messages\": %lld, \"simulated_s\": "
      "%.9f, \"wall_s\": %.3f, \"us_per_message\": %.3f}\n",
      argv[3], ranks, steps, static_cast<long long>(messages), sg4::Engine::get_clock(), wall_s,
      1e6 * wall_s / static_cast<double>(messages));
  return 0;
}
