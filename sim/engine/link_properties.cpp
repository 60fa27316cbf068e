// Link properties on SimGrid: each link's transport read once through read_link_properties,
// and the per-message factors SimGrid asks for (link_properties.hpp says why).
#include "sim/engine/link_properties.hpp"

#include <algorithm>
#include <exception>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_set>
#include <xbt/config.hpp>

#include "sim/core/errors.hpp"
#include "sim/engine/engine.hpp"

namespace sg4 = simgrid::s4u;

namespace sgdsim {

TransportParams link_transport(const sg4::Link& route_link, const TransportParams& fallback,
                               const std::string& file) {
  // A SPLITDUPLEX link "x" routes as "x_UP" and "x_DOWN"; its properties stay on "x".
  const sg4::Link* declared = &route_link;
  for (const std::string suffix : {"_UP", "_DOWN"}) {
    const std::string& n = route_link.get_name();
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      try {
        if (auto* l = sg4::Engine::get_instance()->split_duplex_link_by_name(
                n.substr(0, n.size() - suffix.size())))
          declared = l;
      } catch (const std::exception&) {  // a plain link whose name ends in _UP
      }
  }
  const sg4::Link& link = *declared;
  const LinkProperties read = read_link_properties(
      link.get_name(), link.get_latency(), [&](const char* key) { return link.get_property(key); },
      fallback);
  if (read.problem) throw InputError(file, "", read.problem->message);
  return read.transport;
}

void LinkTransports::install(sg4::Engine& engine, const TransportParams& fallback,
                             const std::string& file) {
  double window_bytes = 0;
  for (auto* link : engine.get_all_links()) {
    // SimGrid's loopback carries a host's messages to itself (sgdsim sends none).
    const TransportParams t = link->get_name() == "__loopback__"
                                  ? TransportParams{}
                                  : link_transport(*link, fallback, file);
    if (t.window_bytes > 0)
      window_bytes = window_bytes > 0 ? std::min(window_bytes, t.window_bytes) : t.window_bytes;
    has_connections_ = has_connections_ || t.connection_per_pair;
    transport_.emplace(link, t);
  }
  // SimGrid 3.32 bounds a host-to-host message only through TCP-gamma (window / 2 x route
  // latency), one value for the whole platform: the smallest window of any link.
  if (window_bytes > 0 && simgrid::config::is_default("network/TCP-gamma") == false &&
      simgrid::config::get_value<double>("network/TCP-gamma") == 0)
    sg4::Engine::set_config("network/TCP-gamma", window_bytes * kByteScale);
  for (const char* opt : {"network/latency-factor", "network/bandwidth-factor"})
    if (!simgrid::config::is_default(opt))
      throw InputError("--cfg", "",
                       std::string("network_model \"links\" sets every message's factors from "
                                   "its links' technologies: drop --cfg ") +
                           opt + " or use network_model \"default\"");
  auto* model = engine.get_netzone_root()->get_network_model();
  model->set_lat_factor_cb([this](double, const sg4::Host* src, const sg4::Host* dst,
                                  const std::vector<sg4::Link*>& links,
                                  const std::unordered_set<sg4::NetZone*>&) {
    if (next_latency_s_ >= 0) return take_next_latency(links);
    return route_info(src, dst, links).latency_factor;
  });
  model->set_bw_factor_cb([this](double, const sg4::Host* src, const sg4::Host* dst,
                                 const std::vector<sg4::Link*>& links,
                                 const std::unordered_set<sg4::NetZone*>&) {
    return route_info(src, dst, links).bandwidth_factor;
  });
}

void LinkTransports::install_latency_only(sg4::Engine& engine, double factor) {
  engine.get_netzone_root()->get_network_model()->set_lat_factor_cb(
      [this, factor](double, const sg4::Host*, const sg4::Host*,
                     const std::vector<sg4::Link*>& links,
                     const std::unordered_set<sg4::NetZone*>&) {
        return next_latency_s_ >= 0 ? take_next_latency(links) : factor;
      });
}

double LinkTransports::take_next_latency(const std::vector<sg4::Link*>& links) {
  double latency = 0;
  for (const auto* l : links) latency += l->get_latency();
  const double factor = latency > 0 ? next_latency_s_ / latency : 1.0;
  next_latency_s_ = -1;
  return factor;
}

const LinkTransports::RouteInfo& LinkTransports::route_info(const sg4::Host* src,
                                                            const sg4::Host* dst,
                                                            const std::vector<sg4::Link*>& links) {
  auto [it, fresh] = route_info_.try_emplace({src, dst});
  if (!fresh) return it->second;
  std::vector<const TransportParams*> transports;
  std::vector<double> bandwidths;
  double latency = 0;
  for (const auto* l : links) {
    transports.push_back(&transport_.at(l));
    bandwidths.push_back(l->get_bandwidth() / kByteScale);
    latency += l->get_latency();
  }
  const RouteTransport t = combine_route(transports, bandwidths, latency);
  RouteInfo& r = it->second;
  r.latency_factor = latency > 0 ? (latency + t.overhead_s) / latency : 1.0;
  r.bandwidth_factor = t.efficiency;
  r.rate_bound_Bps = t.rate_bound_Bps;
  r.latency_s = latency + t.overhead_s;
  r.bottleneck_Bps =
      bandwidths.empty() ? 0 : *std::min_element(bandwidths.begin(), bandwidths.end());
  r.connection_per_pair = t.connection_per_pair;
  return r;
}

const LinkTransports::RouteInfo& LinkTransports::route_info(const sg4::Host* src,
                                                            const sg4::Host* dst) {
  auto it = route_info_.find({src, dst});
  if (it != route_info_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  src->route_to(dst, links, &latency);
  return route_info(src, dst, links);
}

bool LinkTransports::same_transport(const sg4::Link& a, const sg4::Link& b) const {
  if (!installed()) return true;
  const TransportParams &ta = transport_.at(&a), &tb = transport_.at(&b);
  return ta.overhead_s == tb.overhead_s && ta.efficiency == tb.efficiency &&
         ta.window_bytes == tb.window_bytes;
}

}  // namespace sgdsim
