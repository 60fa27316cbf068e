// The runner's activities (activities.hpp says what they are).
#include "sim/engine/activities.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace sgdsim {

using run_state::kAlarm;
using run_state::Slot;

Activities::Activities(Platform& platform, std::unique_ptr<PrivateRoutes> private_routes)
    : platform_(platform), private_(std::move(private_routes)) {}

uint32_t Activities::new_slot() {
  if (!free_slots_.empty()) {
    const uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.emplace_back();
  return static_cast<uint32_t>(slots_.size() - 1);
}

void Activities::start_exec(sg4::Host* host, double flops, Slot slot) {
  const uint32_t s = new_slot();
  auto exec = sg4::Exec::init();
  exec->set_flops_amount(flops);
  exec->set_host(host);
  exec->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
  slot.activity = exec;
  slots_[s] = slot;
  ++count_;
  exec->start();
}

void Activities::send(sg4::Host* from, sg4::Host* to, double bytes, Slot slot,
                      MessageSender sender) {
  ++count_;
  const int c = connection_of(from, to, sender);
  if (c >= 0) {
    slot.connection = c;
    Connection& k = connections_[c];
    if (k.busy) {
      k.waiting.push_back({from, to, bytes, slot});
      return;
    }
    k.busy = true;
  }
  transmit(from, to, bytes, slot);
}

/// The connection `sender`'s messages from `from` to `to` share, or -1 (each a flow).
int Activities::connection_of(sg4::Host* from, sg4::Host* to, MessageSender sender) {
  if (!platform_.has_connections()) return -1;  // (most platforms)
  const ConnectionKey key{from, to, 2 * sender.job + (sender.from_server ? 1 : 0)};
  auto [it, fresh] = connection_index_.try_emplace(key, -1);
  if (fresh && platform_.connection_route(from, to) != nullptr) {
    connections_.emplace_back();
    it->second = static_cast<int>(connections_.size() - 1);
  }
  return it->second;
}

/// The message after the one that just ended on `connection`, if one waits. It pays the
/// route's latency again: a message started with less gets another sharing weight in SimGrid
/// (its penalty is its latency), so back-to-back bytes are not modelled.
void Activities::next_on(int connection) {
  Connection& k = connections_[connection];
  if (k.waiting.empty()) {
    k.busy = false;
    return;
  }
  const Connection::Waiting w = k.waiting.front();
  k.waiting.pop_front();
  transmit(w.from, w.to, w.bytes, w.slot);
}

void Activities::transmit(sg4::Host* from, sg4::Host* to, double bytes, Slot slot) {
  const uint32_t s = new_slot();
  const double payload = static_cast<double>(std::llround(bytes * kByteScale));
  if (private_) {
    const double now = sg4::Engine::get_clock();
    slot.route = private_->route(from, to);
    slots_[s] = slot;
    if (private_->try_start(slot.route, payload, s, now)) return wake();
    handovers_.clear();
    private_->claim(slot.route, now, &handovers_);
    for (const PrivateRoutes::Handover& h : handovers_)
      start_comm(h.slot, private_->src(h.route), private_->dst(h.route), h.payload, h.latency_s);
  } else {
    slots_[s] = slot;
  }
  start_comm(s, from, to, payload, -1);
}

/// Starts slot `s`'s Comm; `latency_s` >= 0 replaces the route's latency (a handover).
void Activities::start_comm(uint32_t s, sg4::Host* from, sg4::Host* to, double payload,
                            double latency_s) {
  auto comm = sg4::Comm::sendto_init(from, to);
  comm->set_payload_size(static_cast<uint64_t>(payload));
  comm->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
  slots_[s].activity = comm;
  if (latency_s >= 0) platform_.set_next_message_latency(latency_s);
  comm->start();
}

/// Keeps an alarm due at the next closed-form event (an earlier one may already be set).
void Activities::wake() {
  const double next = private_->next_event_s();
  if (next == std::numeric_limits<double>::infinity() ||
      (!alarms_.empty() && *alarms_.begin() <= next))
    return;
  alarms_.insert(next);
  const uint32_t s = new_slot();
  Slot slot{nullptr, 0, 0, kAlarm, 0, false};
  slot.until_s = next;
  auto exec = sg4::Exec::init();
  sg4::Host* timer = platform_.timer();
  exec->set_flops_amount(std::max(0.0, next - sg4::Engine::get_clock()) * timer->get_speed());
  exec->set_host(timer);
  exec->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
  slot.activity = exec;
  slots_[s] = slot;
  exec->start();
}

void Activities::ended(const sg4::Activity& a, std::vector<Slot>* done) {
  graveyard_.clear();  // (an activity is not destroyed inside its own completion callback)
  const auto s = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a.get_data<void>()));
  const Slot slot = slots_[s];
  graveyard_.push_back(std::move(slots_[s].activity));
  free_slots_.push_back(s);
  if (slot.collective != kAlarm) {
    if (slot.route >= 0) private_->release(slot.route);
    done->push_back(slot);
    if (slot.connection >= 0) next_on(slot.connection);
    return;
  }
  alarms_.erase(alarms_.find(slot.until_s));
  ended_.clear();
  private_->advance(slot.until_s, &ended_);
  for (uint32_t e : ended_) {
    done->push_back(slots_[e]);
    free_slots_.push_back(e);
  }
  wake();
}

}  // namespace sgdsim
