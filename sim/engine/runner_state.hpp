#pragma once
/// The SimGrid runner's bookkeeping of fragments, collectives, queues and activities.
/// Internal to sim/engine (runner.cpp).
#include <cstdint>
#include <deque>
#include <map>
#include <simgrid/s4u.hpp>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim::run_state {

/// A fragment being run: its tasks' pending predecessors, starts and completions.
struct Live {
  Fragment f;
  std::vector<uint32_t> pending;
  std::vector<double> start;
  std::vector<uint8_t> done;
  std::vector<uint32_t> succ_off, succ;
  std::map<uint32_t, std::vector<std::pair<int, uint32_t>>> cross_out;  // task -> (iter, task)
  uint32_t remaining = 0;
};

/// A first-block compute task and its followers (rotation by blocks, uniform compute).
struct Image {
  double start_s = -1, duration_s = 0;
  std::vector<std::tuple<uint64_t, int, uint32_t>> followers;  // (start order, fid, task)
};

/// A flow collective under way: its schedule's steps still pending.
struct CollectiveRun {
  const Schedule* schedule = nullptr;
  std::vector<uint32_t> pending;
  uint32_t remaining = 0;
  int iteration = 0;
  uint32_t task = 0;
  int job = 0;  // whose processes send its messages: the run's (0) or another job's (1, 2, ...)
};

/// Tasks sharing a queue id (a server's applies): one at a time, in ready order.
struct Queue {
  bool busy = false;
  std::deque<std::pair<int, uint32_t>> waiting;
};

/// Slot::step of a collective's start delay.
inline constexpr uint32_t kStartDelay = UINT32_MAX;

/// Slot::collective of the Exec that releases followers.
inline constexpr int kRelease = -2;

/// Slot::collective of the Exec that wakes the runner for closed-form messages (PrivateRoutes).
inline constexpr int kAlarm = -3;

/// What a running SimGrid activity stands for.
struct Slot {
  simgrid::s4u::ActivityPtr activity;
  int iteration = 0;
  uint32_t task = 0;
  int collective = -1;  // index into collectives_, -1 for a compute task
  uint32_t step = 0;
  bool reduction = false;  // the receiver's reduction after step `step`
  int route = -1;          // a SimGrid message's PrivateRoutes route, released when it ends
  double until_s = 0;      // an alarm's time (kAlarm)
  int connection = -1;     // a message's shared connection (Activities), freed when it ends
};

}  // namespace sgdsim::run_state
