// Closed-form messages on private routes (private_routes.hpp says what is modelled). The
// arithmetic follows SimGrid 3.32's CM02 model step for step (src/surf/network_cm02.cpp:
// communicate, comm_action_set_bounds, comm_action_set_variable; src/kernel/lmm/maxmin.cpp:
// maxmin_solve), so that a message alone on its route ends when SimGrid would end it.
#include "sim/engine/private_routes.hpp"

#include <algorithm>
#include <limits>

namespace sg4 = simgrid::s4u;

namespace sgdsim {

namespace {

/// SimGrid's double_update: subtract, and snap to zero below the precision.
void double_update(double* value, double delta, double precision) {
  *value -= delta;
  if (*value < precision) *value = 0.0;
}

/// SimGrid's payload precision (maxmin/precision 1e-5 x surf/precision 1e-12, sgdsim's).
constexpr double kRemainsPrecision = 1e-5 * 1e-12;

}  // namespace

PrivateRoutes::PrivateRoutes(Factors factors, double tcp_gamma, double weight_s)
    : factors_(std::move(factors)), tcp_gamma_(tcp_gamma), weight_s_(weight_s) {}

int PrivateRoutes::route(sg4::Host* src, sg4::Host* dst) {
  auto& by_dst = route_ids_[src];
  auto it = by_dst.find(dst);
  if (it != by_dst.end()) return it->second;
  routes_.push_back(make_route(src, dst));
  const int id = static_cast<int>(routes_.size() - 1);
  by_dst.emplace(dst, id);
  return id;
}

/// The route's links and SimGrid's bounds for a message on it (comm_action_set_bounds and
/// comm_action_set_variable with no user rate).
PrivateRoutes::Route PrivateRoutes::make_route(sg4::Host* src, sg4::Host* dst) {
  Route r;
  r.src = src, r.dst = dst;
  std::vector<sg4::Link*> links;
  double latency = 0;
  src->route_to(dst, links, &latency);
  const auto [latency_factor, bandwidth_factor] = factors_(src, dst, links);
  double bandwidth_bound = -1.0, penalty = latency;
  for (sg4::Link* l : links) {
    const auto policy = l->get_sharing_policy();
    if (policy == sg4::Link::SharingPolicy::SHARED) {
      auto [it, fresh] = link_ids_.try_emplace(l, static_cast<uint32_t>(links_.size()));
      if (fresh) links_.emplace_back();
      r.links.push_back(it->second);
      r.shared_Bps.push_back(l->get_bandwidth());
    } else if (policy == sg4::Link::SharingPolicy::FATPIPE) {
      r.fatpipe_Bps.push_back(l->get_bandwidth());
    } else {
      r.eligible = false;
    }
    if (bandwidth_bound == -1.0 || l->get_bandwidth() < bandwidth_bound)
      bandwidth_bound = l->get_bandwidth();
    if (weight_s_ > 0) penalty += weight_s_ / l->get_bandwidth();
  }
  r.eligible = r.eligible && !links.empty() && bandwidth_factor > 0;
  r.latency_s = latency * latency_factor;
  r.bandwidth_factor = bandwidth_factor;
  r.bound = latency > 0 ? std::min(bandwidth_bound, tcp_gamma_ / (2.0 * latency)) : bandwidth_bound;
  // The variable starts disabled while the latency lasts, then takes the route's penalty.
  r.penalty = r.latency_s > 0 ? penalty : 1.0;
  if (!(r.penalty > 0)) r.eligible = false;
  return r;
}

bool PrivateRoutes::try_start(int route, double payload, uint32_t slot, double now_s) {
  Route& r = routes_[route];
  if (!r.eligible) return false;
  for (uint32_t l : r.links)
    if (links_[l].busy > 0 || (links_[l].owner >= 0 && links_[l].owner != route)) return false;
  for (uint32_t l : r.links) links_[l].owner = route;
  uint32_t id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.slot = slot, f.route = route, f.remains = payload, f.rate = 0, f.last_s = now_s;
  f.latency_end_s = now_s + r.latency_s;
  f.transferring = false;
  r.flows.push_back(id);
  if (r.latency_s > 0) {
    push(id, f.latency_end_s);
  } else {
    f.transferring = true;
    reshare(r, now_s);
  }
  return true;
}

/// The pair's transferring messages share the route as maxmin_solve shares them: usage
/// n / penalty on each SHARED link, 1 / penalty on each FATPIPE one, the least
/// remaining / usage, capped by the variable bound, times the bandwidth factor.
void PrivateRoutes::reshare(Route& r, double now_s) {
  double usage = 0;
  for (uint32_t id : r.flows) {
    Flow& f = flows_[id];
    if (!f.transferring) continue;
    double_update(&f.remains, f.rate * (now_s - f.last_s), kRemainsPrecision);
    f.last_s = now_s;
    usage += 1.0 / r.penalty;
  }
  if (usage == 0) return;
  double min_usage = std::numeric_limits<double>::infinity();
  for (double c : r.shared_Bps) min_usage = std::min(min_usage, c / usage);
  for (double c : r.fatpipe_Bps) min_usage = std::min(min_usage, c / (1.0 / r.penalty));
  const double value =
      r.bound > 0 && r.bound * r.penalty < min_usage ? r.bound : min_usage / r.penalty;
  const double rate = value * r.bandwidth_factor;
  for (uint32_t id : r.flows) {
    Flow& f = flows_[id];
    if (!f.transferring) continue;
    f.rate = rate;
    ++f.version;
    push(id, now_s + f.remains / rate);
  }
}

void PrivateRoutes::push(uint32_t flow, double time_s) {
  events_.push({time_s, order_++, flow, flows_[flow].version});
}

void PrivateRoutes::free_links(const Route& r) {
  for (uint32_t l : r.links) links_[l].owner = -1;
}

void PrivateRoutes::claim(int route, double now_s, std::vector<Handover>* out) {
  Route& r = routes_[route];
  for (uint32_t l : r.links) {
    const int owner = links_[l].owner;
    if (owner < 0) continue;
    Route& o = routes_[owner];
    free_links(o);
    for (uint32_t id : o.flows) {
      Flow& f = flows_[id];
      Handover h{f.slot, owner, f.remains, f.latency_end_s - now_s};
      if (f.transferring) {
        // SimGrid's message starts after kHandoverLatency_s, which this one would have spent
        // sending at its rate: nothing else sends on its links then (new messages are in their
        // latency, handed-over ones in this one).
        h.payload = f.remains - f.rate * (now_s + kHandoverLatency_s - f.last_s);
        h.latency_s = 0;
      }
      h.payload = std::max(0.0, h.payload);
      h.latency_s = std::max(h.latency_s, kHandoverLatency_s);
      out->push_back(h);
      ++handover_count_;
      for (uint32_t k : o.links) ++links_[k].busy;
      ++f.version;
      f.route = -1;
      free_flows_.push_back(id);
    }
    o.flows.clear();
  }
  for (uint32_t l : r.links) ++links_[l].busy;
}

void PrivateRoutes::release(int route) {
  for (uint32_t l : routes_[route].links) --links_[l].busy;
}

double PrivateRoutes::next_event_s() const {
  // Stale events (a changed share, a handed-over message) only wake the runner early.
  return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().time_s;
}

void PrivateRoutes::advance(double until_s, std::vector<uint32_t>* ended) {
  while (!events_.empty() && events_.top().time_s <= until_s) {
    const Event e = events_.top();
    events_.pop();
    Flow& f = flows_[e.flow];
    if (f.version != e.version || f.route < 0) continue;
    Route& r = routes_[f.route];
    if (!f.transferring) {  // the latency is paid
      f.transferring = true;
      f.last_s = e.time_s;
      reshare(r, e.time_s);
      continue;
    }
    ended->push_back(f.slot);
    ++ended_count_;
    ++f.version;
    r.flows.erase(std::find(r.flows.begin(), r.flows.end(), e.flow));
    f.route = -1;
    free_flows_.push_back(e.flow);
    if (r.flows.empty())
      free_links(r);
    else
      reshare(r, e.time_s);
  }
}

}  // namespace sgdsim
