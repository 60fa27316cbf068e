#pragma once
/// Messages on private routes in closed form (scenario flow_private_routes "closed_form").
/// Models: a message whose route's links carry messages of its own (source, destination) pair
/// only is timed with SimGrid 3.32's own arithmetic for it (CM02 without cross traffic: the
/// route's latency times the latency factor, then max-min's equal share of the route's
/// narrowest link among the pair's transferring messages, within the variable bound, times the
/// bandwidth factor) instead of being a SimGrid communication. When a SimGrid message or
/// another pair's message needs one of its links, the pair's messages are handed over to SimGrid
/// with what is left of them (remaining latency, remaining payload). Leaves out: nothing of the
/// sharing; the times equal SimGrid's to rounding (SimGrid updates remaining payloads at every
/// event of the run, this formula once per change of its pair; a handed-over message in its
/// transfer phase starts kHandoverLatency_s later with the payload of that time taken off),
/// and messages ending at the same instant may be taken in another order than SimGrid's.
/// Internal to sim/engine.
#include <cstdint>
#include <functional>
#include <queue>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sgdsim {

/// Closed-form timing of messages on routes no other pair uses, handed to SimGrid on contact.
class PrivateRoutes {
 public:
  /// A message SimGrid's model would make of a route: {latency factor, bandwidth factor}.
  using Factors =
      std::function<std::pair<double, double>(const simgrid::s4u::Host*, const simgrid::s4u::Host*,
                                              const std::vector<simgrid::s4u::Link*>&)>;

  /// A closed-form message handed to SimGrid: its runner slot, its route and what is left.
  struct Handover {
    uint32_t slot = 0;     ///< the runner's slot of the message
    int route = -1;        ///< its route (route())
    double payload = 0;    ///< remaining payload, SimGrid units (1/kByteScale byte)
    double latency_s = 0;  ///< remaining latency (at least kHandoverLatency_s)
  };

  /// A handed-over message in its transfer phase starts with this latency: SimGrid 3.32 gives a
  /// message without latency the sharing penalty 1 instead of its route's latency.
  static constexpr double kHandoverLatency_s = 1e-11;

  /// Times messages with SimGrid's `factors`, TCP-gamma and weight-S (SimGrid units).
  PrivateRoutes(Factors factors, double tcp_gamma, double weight_s);

  /// The id of the route from `src` to `dst` (routed once per pair).
  int route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  /// The sender of `route`.
  simgrid::s4u::Host* src(int route) const { return routes_[route].src; }
  /// The receiver of `route`.
  simgrid::s4u::Host* dst(int route) const { return routes_[route].dst; }

  /// Starts message `slot` of `payload` on `route` at `now_s` in closed form; false when a
  /// SimGrid message or another pair's message holds one of the route's links.
  bool try_start(int route, double payload, uint32_t slot, double now_s);
  /// A SimGrid message starts on `route` at `now_s`: the closed-form messages on its links are
  /// appended to `out` (each then a SimGrid message on its route), and the links count them
  /// and it until release().
  void claim(int route, double now_s, std::vector<Handover>* out);
  /// A SimGrid message on `route` ended.
  void release(int route);

  /// When the next closed-form message leaves its latency or ends (infinity if none).
  double next_event_s() const;
  /// Processes the events up to `until_s` in time order; appends the slots of the messages
  /// that ended.
  void advance(double until_s, std::vector<uint32_t>* ended);
  /// Messages that ended in closed form so far.
  int64_t ended_count() const { return ended_count_; }
  /// Messages handed over to SimGrid so far.
  int64_t handover_count() const { return handover_count_; }

 private:
  struct Route {
    simgrid::s4u::Host* src = nullptr;
    simgrid::s4u::Host* dst = nullptr;
    std::vector<uint32_t> links;  // SHARED links (indices into links_)
    std::vector<double> shared_Bps, fatpipe_Bps;
    double latency_s = 0, bandwidth_factor = 1, bound = -1, penalty = 1;
    bool eligible = true;         // only SHARED and FATPIPE links
    std::vector<uint32_t> flows;  // closed-form messages on it (indices into flows_)
  };
  struct LinkUse {
    int busy = 0;    // SimGrid messages on the link
    int owner = -1;  // the route whose closed-form messages hold it
  };
  struct Flow {
    uint32_t slot = 0, version = 0;
    int route = -1;
    double latency_end_s = 0, remains = 0, last_s = 0, rate = 0;
    bool transferring = false;
  };
  struct Event {
    double time_s;
    uint64_t order;
    uint32_t flow, version;
    bool operator>(const Event& o) const {
      return time_s != o.time_s ? time_s > o.time_s : order > o.order;
    }
  };

  Route make_route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  void reshare(Route& r, double now_s);
  void push(uint32_t flow, double time_s);
  void free_links(const Route& r);

  Factors factors_;
  double tcp_gamma_, weight_s_;
  std::vector<Route> routes_;
  std::unordered_map<const void*, std::unordered_map<const void*, int>> route_ids_;
  std::unordered_map<const simgrid::s4u::Link*, uint32_t> link_ids_;
  std::vector<LinkUse> links_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t order_ = 0;
  int64_t ended_count_ = 0, handover_count_ = 0;
};

}  // namespace sgdsim
