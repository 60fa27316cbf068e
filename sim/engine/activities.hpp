#pragma once
/// The SimGrid runner's activities and what each stands for (its Slot): Execs, host-to-host
/// Comms, and, with flow_private_routes "closed_form", the messages PrivateRoutes times in
/// closed form with the alarms (Execs on the timer host) that wake the runner when they end.
/// Internal to sim/engine.
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/platform.hpp"
#include "sim/engine/private_routes.hpp"
#include "sim/engine/runner_state.hpp"

namespace sgdsim {

/// The process on a message's sending host whose connections carry it.
struct MessageSender {
  int job = 0;               ///< the run's processes (0) or another job's
  bool from_server = false;  ///< a parameter server's, not the worker's (co-located)
};

/// Starts the runner's activities and says which slots ended when SimGrid ends one.
class Activities {
 public:
  /// Activities on `platform`; `private_routes` (or null) times messages in closed form.
  Activities(Platform& platform, std::unique_ptr<PrivateRoutes> private_routes);

  /// Starts an Exec of `flops` on `host` standing for `slot`.
  void start_exec(simgrid::s4u::Host* host, double flops, run_state::Slot slot);
  /// Sends a message of `bytes` standing for `slot`: in closed form where its route is
  /// private, else as a SimGrid Comm, handing the closed-form messages on its links over first.
  /// Where the pair's messages share one connection (Platform::connection_route) it waits for
  /// those `sender` sent before it.
  void send(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, run_state::Slot slot,
            MessageSender sender = {});
  /// SimGrid ended `a`: appends the slots whose work ended with it (its own, or an alarm's
  /// closed-form messages).
  void ended(const simgrid::s4u::Activity& a, std::vector<run_state::Slot>* done);

  /// Activities started or queued on a connection: Execs and messages, not alarms.
  uint64_t count() const { return count_; }
  /// Messages ended in closed form (-1 without private routes).
  int64_t closed_form_count() const { return private_ ? private_->ended_count() : -1; }
  /// Closed-form messages handed over to SimGrid.
  int64_t handover_count() const { return private_ ? private_->handover_count() : 0; }

 private:
  /// A connection's messages: one on the wire at a time, the others waiting in send order.
  struct Connection {
    /// A message waiting for the connection.
    struct Waiting {
      simgrid::s4u::Host* from;
      simgrid::s4u::Host* to;
      double bytes;
      run_state::Slot slot;
    };
    bool busy = false;
    std::deque<Waiting> waiting;
  };

  uint32_t new_slot();
  int connection_of(simgrid::s4u::Host* from, simgrid::s4u::Host* to, MessageSender sender);
  void transmit(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                run_state::Slot slot);
  void next_on(int connection);
  void start_comm(uint32_t s, simgrid::s4u::Host* from, simgrid::s4u::Host* to, double payload,
                  double latency_s);
  void wake();

  Platform& platform_;
  std::unique_ptr<PrivateRoutes> private_;
  std::vector<run_state::Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<simgrid::s4u::ActivityPtr> graveyard_;
  std::vector<PrivateRoutes::Handover> handovers_;
  std::vector<uint32_t> ended_;   // the closed-form messages an alarm ends
  std::multiset<double> alarms_;  // due times of the alarms on the timer host
  std::vector<Connection> connections_;
  /// A connection's key: the hosts and the sending process.
  struct ConnectionKey {
    const void* from;
    const void* to;
    int owner;  // 2 x job, + 1 for a parameter server
    bool operator==(const ConnectionKey&) const = default;
  };
  struct KeyHash {
    size_t operator()(const ConnectionKey& k) const {
      return (std::hash<const void*>()(k.from) * 31 + std::hash<const void*>()(k.to)) * 31 +
             std::hash<int>()(k.owner);
    }
  };
  // -> index into connections_, -1: messages apart (lookups only, never iterated)
  std::unordered_map<ConnectionKey, int, KeyHash> connection_index_;
  uint64_t count_ = 0;
};

}  // namespace sgdsim
