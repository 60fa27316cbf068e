#include "sim/scenario/platform_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/limits.hpp"
#include "sim/scenario/platform_routing.hpp"
#include "sim/scenario/simgrid_units.hpp"
#include "sim/scenario/transport.hpp"
#include "sim/scenario/xml_reader.hpp"

namespace sgdsim {
namespace {

constexpr size_t kMaxHosts = limits::kMaxPlatformHosts;

using platform_xml::Kind;
using platform_xml::Netpoint;
using platform_xml::Quantity;
using platform_xml::RouteRec;
using platform_xml::Zone;

struct LinkRec {
  bool split_duplex = false;
};

/// Walks the element tree once, recording netpoints, links, zones and routes.
class Checker {
 public:
  Checker(const std::string& file) : file_(file) {}

  PlatformSummary run(const XmlElement& root, size_t hosts_used) {
    if (root.name != "platform")
      fail(root, fmt::format("the root element is <{}>, expected <platform>", root.name));
    const std::string* version = root.attr("version");
    if (version == nullptr || (*version != "4" && *version != "4.0" && *version != "4.1"))
      fail(root, fmt::format("<platform version=\"{}\">: expected version 4.1 (SimGrid 3.32's "
                             "DTD; simgrid_update_xml upgrades older files)",
                             version ? *version : std::string()));
    for (const auto& c : root.children) {
      if (c->name == "zone" || c->name == "AS" || c->name == "cluster" || c->name == "cabinet")
        element_in_zone(*c, -1);
      else if (c->name == "config")
        props(*c);
      else if (!ignored(c->name))
        fail(*c, fmt::format("<{}> is not allowed directly in <platform> (expected <zone>, "
                             "<cluster>, <config>, <trace> or <actor>)",
                             c->name));
    }
    if (summary_.hosts.empty()) fail(root, "the platform declares no host");
    check_pairs(hosts_used);
    return summary_;
  }

 private:
  [[noreturn]] void fail(const XmlElement& e, const std::string& what) const {
    throw InputError(file_, "", fmt::format("line {}: {}", e.line, what));
  }

  static bool ignored(const std::string& name) {
    // Read by SimGrid, not needed to check what sgdsim runs.
    return name == "trace" || name == "trace_connect" || name == "actor" || name == "process" ||
           name == "random" || name == "storage_type" || name == "storage";
  }

  const std::string& required(const XmlElement& e, const char* key) const {
    const std::string* v = e.attr(key);
    if (v == nullptr) fail(e, fmt::format("<{}> needs the attribute \"{}\"", e.name, key));
    return *v;
  }

  std::string optional_attr(const XmlElement& e, const char* key, const std::string& def) const {
    const std::string* v = e.attr(key);
    return v ? *v : def;
  }

  void one_of(const XmlElement& e, const char* key, const std::vector<std::string>& allowed,
              const std::string& def) const {
    const std::string v = optional_attr(e, key, def);
    for (const auto& a : allowed)
      if (v == a) return;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(e, fmt::format("<{} {}=\"{}\">: expected one of {}", e.name, key, v, list));
  }

  double quantity(const XmlElement& e, const char* key, Quantity q, bool positive) const {
    const std::string& v = required(e, key);
    const auto x = platform_xml::simgrid_quantity(v, q);
    const char* expected = q == Quantity::time        ? "a time such as \"1us\""
                           : q == Quantity::bandwidth ? "a bandwidth such as \"10Gbps\""
                                                      : "a speed such as \"1.5Gf\"";
    if (!x) fail(e, fmt::format("<{} {}=\"{}\">: expected {}", e.name, key, v, expected));
    if (*x < 0 || (positive && *x == 0))
      fail(e, fmt::format("<{} {}=\"{}\">: expected a value {} 0", e.name, key, v,
                          positive ? ">" : ">="));
    return *x;
  }

  /// Host speeds: one per pstate, comma-separated.
  void speeds(const XmlElement& e, const char* key) const {
    const std::string& v = required(e, key);
    size_t start = 0;
    while (true) {
      const size_t comma = v.find(',', start);
      std::string one =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!one.empty() && (one.front() == ' ' || one.front() == '\t')) one.erase(0, 1);
      while (!one.empty() && (one.back() == ' ' || one.back() == '\t')) one.pop_back();
      const auto x = platform_xml::simgrid_quantity(one, Quantity::speed);
      if (!x || *x <= 0)
        fail(e, fmt::format("<{}{} {}=\"{}\">: expected speeds > 0 such as \"1.5Gf\" (one per "
                            "pstate, comma-separated)",
                            e.name, e.attr("id") ? " id=\"" + *e.attr("id") + "\"" : "", key, v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  int add_netpoint(const XmlElement& e, const std::string& name, Kind kind, int zone) {
    if (name.empty()) fail(e, fmt::format("<{}> has an empty id", e.name));
    auto [it, fresh] = netpoint_by_name_.emplace(name, static_cast<int>(routing_.netpoints.size()));
    if (!fresh) {
      const Netpoint& old = routing_.netpoints[static_cast<size_t>(it->second)];
      fail(e, fmt::format("\"{}\" is declared twice (a {} on line {}; hosts, routers and zones "
                          "share one namespace)",
                          name, platform_xml::kind_name(old.kind), old.line));
    }
    routing_.netpoints.push_back({name, kind, zone, -1, e.line});
    if (zone >= 0) routing_table_fits(e, routing_.zones[static_cast<size_t>(zone)]);
    if (kind == Kind::host) {
      summary_.hosts.push_back(name);
      if (summary_.hosts.size() > kMaxHosts) fail(e, fmt::format("more than {} hosts", kMaxHosts));
      hosts_.push_back(it->second);
    }
    if (kind == Kind::router) ++summary_.routers;
    return it->second;
  }

  /// SimGrid 3.32 allocates a Full zone's table of routes (8 bytes per ordered pair of its
  /// members) and a Floyd zone's three tables (24 bytes) when the zone is sealed, whatever the
  /// file declares: a member past limits::kMaxRoutingTableBytes is refused before it loads.
  void routing_table_fits(const XmlElement& e, Zone& z) const {
    ++z.members;
    const double per_pair = z.routing == "Full" ? 8 : z.routing == "Floyd" ? 24 : 0;
    const double n = static_cast<double>(z.members);
    if (per_pair * n * n <= limits::kMaxRoutingTableBytes) return;
    fail(e, fmt::format("zone \"{}\" (line {}, routing {}) has more than {} members: SimGrid would "
                        "allocate a routing table of {} bytes per ordered pair of them, more than "
                        "the limit of {:.0f} GiB (use routing \"Dijkstra\" or a <cluster> for a "
                        "zone this large)",
                        z.name, z.line, z.routing, z.members - 1, per_pair,
                        limits::kMaxRoutingTableBytes / 1073741824.0));
  }

  int add_zone(const XmlElement& e, const std::string& name, const std::string& routing,
               int parent) {
    const int np = add_netpoint(e, name, Kind::zone, parent);
    Zone z;
    z.name = name;
    z.routing = routing;
    z.parent = parent;
    z.netpoint = np;
    z.line = e.line;
    routing_.zones.push_back(std::move(z));
    routing_.netpoints[static_cast<size_t>(np)].self_zone =
        static_cast<int>(routing_.zones.size() - 1);
    ++summary_.zones;
    return static_cast<int>(routing_.zones.size() - 1);
  }

  void add_link(const XmlElement& e, const std::string& name, bool split) {
    if (name.empty()) fail(e, fmt::format("<{}> has an empty id", e.name));
    if (!links_.emplace(name, LinkRec{split}).second)
      fail(e, fmt::format("link \"{}\" is declared twice", name));
    ++summary_.links;
  }

  /// <prop> children: id and value required; nothing else allowed.
  void props(const XmlElement& e) const {
    for (const auto& c : e.children) {
      if (c->name != "prop") fail(*c, fmt::format("<{}> is not allowed in <{}>", c->name, e.name));
      required(*c, "id");
      required(*c, "value");
    }
  }

  /// A link's transport properties, read and checked by their one reader (transport.hpp).
  void link_props(const XmlElement& link, double latency_s) const {
    const std::string& id = *link.attr("id");
    std::map<std::string, const XmlElement*> by_key;  // the last <prop> of each id counts
    for (const auto& c : link.children) {
      if (c->name != "prop") fail(*c, fmt::format("<{}> is not allowed in <link>", c->name));
      const std::string& key = required(*c, "id");
      required(*c, "value");
      by_key[key] = c.get();
    }
    const LinkProperties read = read_link_properties(
        id, latency_s,
        [&](const char* key) -> const char* {
          auto it = by_key.find(key);
          return it == by_key.end() ? nullptr : it->second->attr("value")->c_str();
        },
        TransportParams{});
    // A bad <prop> is named at its line, a latency the transport cannot use at the link's.
    if (const auto& p = read.problem)
      fail(p->property.empty() ? link : *by_key.at(p->property), p->message);
  }

  /// Host names of a <cluster> or <cabinet>: prefix + each radical + suffix.
  void radical_hosts(const XmlElement& e, int zone) {
    const std::string& prefix = required(e, "prefix");
    const std::string& suffix = required(e, "suffix");
    const std::string& radical = required(e, "radical");
    size_t start = 0;
    auto number = [&](const std::string& s) -> long long {
      if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
        fail(e, fmt::format("<{} radical=\"{}\">: expected numbers and ranges such as "
                            "\"0-15\" or \"1,3,5-7\"",
                            e.name, radical));
      return std::stoll(s);
    };
    while (true) {
      const size_t comma = radical.find(',', start);
      const std::string part =
          radical.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const size_t dash = part.find('-');
      const long long lo = number(part.substr(0, dash));
      const long long hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
      if (hi < lo)
        fail(e, fmt::format("<{} radical=\"{}\">: range {} is empty", e.name, radical, part));
      if (static_cast<size_t>(hi - lo) >= kMaxHosts)
        fail(e, fmt::format("more than {} hosts", kMaxHosts));
      for (long long i = lo; i <= hi; ++i)
        add_netpoint(e, prefix + std::to_string(i) + suffix, Kind::host, zone);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  /// "a,b,..." of positive integers (`count` of them, or any number when 0).
  bool int_list(const std::string& s, size_t count) const {
    size_t n = 0, start = 0;
    while (true) {
      const size_t comma = s.find(',', start);
      const std::string part =
          s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (part.empty() || part.size() > 9 ||
          part.find_first_not_of("0123456789") != std::string::npos || std::stoll(part) == 0)
        return false;
      ++n;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return count == 0 || n == count;
  }

  void topology(const XmlElement& e, const std::string& topo) const {
    if (topo == "FLAT") return;
    const std::string& p = required(e, "topo_parameters");
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      const size_t semi = p.find(';', start);
      parts.push_back(
          p.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    bool ok = false;
    const char* expected = "";
    if (topo == "TORUS") {
      ok = parts.size() == 1 && int_list(parts[0], 0);
      expected = "dimensions such as \"4,4\"";
    } else if (topo == "DRAGONFLY") {
      ok = parts.size() == 4 && int_list(parts[0], 2) && int_list(parts[1], 2) &&
           int_list(parts[2], 2) && int_list(parts[3], 1);
      expected = "groups,links;chassis,links;routers,links;nodes such as \"2,1;2,1;2,1;2\"";
    } else if (topo == "FAT_TREE") {
      ok = parts.size() == 4 && int_list(parts[0], 1);
      if (ok) {
        const size_t levels = static_cast<size_t>(std::stoll(parts[0]));
        ok = int_list(parts[1], levels) && int_list(parts[2], levels) && int_list(parts[3], levels);
      }
      expected = "levels;down;up;parallel such as \"2;4,4;1,2;1,2\"";
    }
    if (!ok)
      fail(e, fmt::format("<{} topology=\"{}\" topo_parameters=\"{}\">: expected {}", e.name, topo,
                          p, expected));
  }

  void cluster(const XmlElement& e, int parent) {
    const std::string& id = required(e, "id");
    one_of(e, "topology", {"FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"}, "FLAT");
    one_of(e, "sharing_policy", {"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"}, "SPLITDUPLEX");
    one_of(e, "bb_sharing_policy", {"SHARED", "FATPIPE"}, "SHARED");
    topology(e, optional_attr(e, "topology", "FLAT"));
    speeds(e, "speed");
    quantity(e, "bw", Quantity::bandwidth, true);
    quantity(e, "lat", Quantity::time, false);
    for (const char* key : {"bb_bw", "loopback_bw", "limiter_link"})
      if (const std::string* v = e.attr(key); v && !v->empty())
        quantity(e, key, Quantity::bandwidth, true);
    for (const char* key : {"bb_lat", "loopback_lat"})
      if (const std::string* v = e.attr(key); v && !v->empty())
        quantity(e, key, Quantity::time, false);
    const int z = add_zone(e, id, "Cluster", parent);
    routing_.zones[static_cast<size_t>(z)].computed = true;
    radical_hosts(e, z);
    const std::string router = optional_attr(e, "router_id", "");
    add_netpoint(
        e, router.empty() ? required(e, "prefix") + id + "_router" + required(e, "suffix") : router,
        Kind::router, z);
    props(e);
  }

  void zone(const XmlElement& e, int parent) {
    const std::string& id = required(e, "id");
    const std::string& routing = required(e, "routing");
    static const std::vector<std::string> known = {"Full", "Floyd",   "Dijkstra", "DijkstraCache",
                                                   "None", "Vivaldi", "Wifi",     "Cluster"};
    std::string canonical;
    for (const auto& k : known)
      if (k.size() == routing.size() &&
          std::equal(k.begin(), k.end(), routing.begin(),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
        canonical = k;
    if (canonical.empty())
      fail(e, fmt::format("<zone id=\"{}\" routing=\"{}\">: expected one of Full, Floyd, "
                          "Dijkstra, DijkstraCache, None, Vivaldi, Wifi, Cluster",
                          id, routing));
    const int z = add_zone(e, id, canonical, parent);
    Zone& zr = routing_.zones[static_cast<size_t>(z)];
    zr.computed = canonical == "Vivaldi" || canonical == "Wifi" || canonical == "Cluster";
    zr.none = canonical == "None";
    zr.graph = canonical == "Floyd" || canonical == "Dijkstra" || canonical == "DijkstraCache";
    // Declarations first (routes name what came before them), then routes.
    for (const auto& c : e.children) element_in_zone(*c, z);
  }

  void element_in_zone(const XmlElement& c, int z) {
    const std::string& n = c.name;
    if (n == "zone" || n == "AS") return zone(c, z);
    if (n == "cluster") return cluster(c, z);
    if (z < 0) fail(c, fmt::format("<{}> must sit inside a <zone>", n));
    if (n == "prop") {
      required(c, "id");
      required(c, "value");
    } else if (n == "host") {
      speeds(c, "speed");
      if (const std::string* core = c.attr("core");
          core && (core->empty() || core->find_first_not_of("0123456789") != std::string::npos ||
                   core->size() > 9 || std::stoll(*core) == 0))
        fail(c, fmt::format("<host core=\"{}\">: expected an integer >= 1", *core));
      add_netpoint(c, required(c, "id"), Kind::host, z);
      for (const auto& p : c.children)
        if (p->name != "prop" && p->name != "disk" && p->name != "mount")
          fail(*p, fmt::format("<{}> is not allowed in <host>", p->name));
    } else if (n == "peer") {
      speeds(c, "speed");
      quantity(c, "bw_in", Quantity::bandwidth, true);
      quantity(c, "bw_out", Quantity::bandwidth, true);
      add_netpoint(c, required(c, "id"), Kind::host, z);
    } else if (n == "cabinet") {
      speeds(c, "speed");
      quantity(c, "bw", Quantity::bandwidth, true);
      quantity(c, "lat", Quantity::time, false);
      required(c, "id");
      radical_hosts(c, z);
    } else if (n == "router") {
      add_netpoint(c, required(c, "id"), Kind::router, z);
    } else if (n == "link") {
      link(c);
    } else if (n == "backbone") {
      quantity(c, "bandwidth", Quantity::bandwidth, true);
      quantity(c, "latency", Quantity::time, false);
      add_link(c, required(c, "id"), false);
    } else if (n == "route" || n == "zoneRoute" || n == "ASroute") {
      route(c, z);
    } else if (n == "bypassRoute" || n == "bypassZoneRoute" || n == "bypassASroute") {
      summary_.routes_checked = false;
      required(c, "src");
      required(c, "dst");
      link_list(c);
    } else if (n == "host_link" || n == "include" || n == "storage_type" || n == "storage" ||
               ignored(n)) {
      // SimGrid checks these itself; sgdsim uses none of them.
    } else {
      fail(c,
           fmt::format("unknown element <{}> in <zone> (SimGrid 3.32's DTD has no such tag)", n));
    }
  }

  void link(const XmlElement& c) {
    const std::string& id = required(c, "id");
    one_of(c, "sharing_policy", {"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE", "WIFI"},
           "SHARED");
    const std::string policy = optional_attr(c, "sharing_policy", "SHARED");
    const std::string& bw = required(c, "bandwidth");
    // WIFI links list one bandwidth per station rate.
    size_t start = 0;
    while (true) {
      const size_t sep = bw.find_first_of(",;", start);
      const std::string one =
          bw.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
      const auto x = platform_xml::simgrid_quantity(one, Quantity::bandwidth);
      if (!x || *x <= 0)
        fail(c, fmt::format("<link id=\"{}\" bandwidth=\"{}\">: expected a bandwidth > 0 such "
                            "as \"10Gbps\"",
                            id, bw));
      if (sep == std::string::npos || policy != "WIFI") {
        if (sep != std::string::npos)
          fail(c, fmt::format("<link id=\"{}\" bandwidth=\"{}\">: one bandwidth expected (lists "
                              "are for WIFI links)",
                              id, bw));
        break;
      }
      start = sep + 1;
    }
    // The DTD gives latency a default, but SimGrid 3.32 fails on a link without one
    // ("cannot parse number:").
    const double latency_s = quantity(c, "latency", Quantity::time, false);
    add_link(c, id, policy == "SPLITDUPLEX" || policy == "FULLDUPLEX");
    link_props(c, latency_s);
  }

  /// A route's <link_ctn> list: every link declared before, directions only on duplex links.
  size_t link_list(const XmlElement& r) const {
    size_t n = 0;
    for (const auto& l : r.children) {
      if (l->name != "link_ctn")
        fail(*l, fmt::format("<{}> is not allowed in <{}> (expected <link_ctn>)", l->name, r.name));
      const std::string& id = required(*l, "id");
      one_of(*l, "direction", {"UP", "DOWN", "NONE"}, "NONE");
      const std::string dir = optional_attr(*l, "direction", "NONE");
      auto it = links_.find(id);
      if (it == links_.end() && dir != "NONE" && links_.count(id + "_" + dir)) continue;
      if (it == links_.end())
        fail(*l, fmt::format("<link_ctn id=\"{}\">: no link \"{}\" is declared before this route",
                             id, id));
      if (dir != "NONE" && !it->second.split_duplex)
        fail(*l, fmt::format("<link_ctn id=\"{}\" direction=\"{}\">: a direction needs a "
                             "SPLITDUPLEX link, and \"{}\" is not one",
                             id, dir, id));
      ++n;
    }
    return n;
  }

  int netpoint(const XmlElement& e, const char* key) const {
    const std::string& name = required(e, key);
    auto it = netpoint_by_name_.find(name);
    if (it == netpoint_by_name_.end())
      fail(e, fmt::format("<{} {}=\"{}\">: no host, router or zone \"{}\" is declared before it",
                          e.name, key, name, name));
    return it->second;
  }

  void route(const XmlElement& c, int z) {
    ++summary_.routes;
    const bool zone_route = c.name != "route";
    one_of(c, "symmetrical", {"YES", "NO", "yes", "no"}, "YES");
    const bool symmetrical = optional_attr(c, "symmetrical", "YES") == "YES" ||
                             optional_attr(c, "symmetrical", "YES") == "yes";
    const int src = netpoint(c, "src");
    const int dst = netpoint(c, "dst");
    Zone& zr = routing_.zones[static_cast<size_t>(z)];
    RouteRec rec;
    rec.line = c.line;
    const Netpoint& s = routing_.netpoints[static_cast<size_t>(src)];
    const Netpoint& d = routing_.netpoints[static_cast<size_t>(dst)];
    for (const Netpoint* p : {&s, &d}) {
      const bool is_zone = p->kind == Kind::zone;
      if (zone_route && !is_zone)
        fail(c, fmt::format("<{}>: \"{}\" is a {}, a zoneRoute joins zones (use <route> between "
                            "hosts and routers)",
                            c.name, p->name, platform_xml::kind_name(p->kind)));
      if (!zone_route && is_zone)
        fail(c, fmt::format("<route>: \"{}\" is a zone, a route joins hosts and routers (use "
                            "<zoneRoute> between zones)",
                            p->name));
      if (p->zone != z && !zr.computed)
        fail(c, fmt::format("<{}>: \"{}\" is not in zone \"{}\" (a route joins members of the "
                            "zone it is declared in)",
                            c.name, p->name, zr.name));
    }
    if (zone_route) {
      rec.gw_src = netpoint(c, "gw_src");
      rec.gw_dst = netpoint(c, "gw_dst");
      for (auto [gw, zone_np, key] :
           {std::tuple{rec.gw_src, src, "gw_src"}, std::tuple{rec.gw_dst, dst, "gw_dst"}}) {
        const Netpoint& g = routing_.netpoints[static_cast<size_t>(gw)];
        if (g.kind == Kind::zone)
          fail(c, fmt::format("<{} {}=\"{}\">: a gateway is a host or a router, not a zone", c.name,
                              key, g.name));
        const Netpoint& zn = routing_.netpoints[static_cast<size_t>(zone_np)];
        if (!routing_.inside(gw, zn.self_zone))
          fail(c, fmt::format("<{} {}=\"{}\">: the gateway is not inside zone \"{}\"", c.name, key,
                              g.name, zn.name));
      }
      if (rec.gw_src == rec.gw_dst)
        fail(c, fmt::format("<{}>: gw_src and gw_dst are both \"{}\"", c.name,
                            routing_.netpoints[static_cast<size_t>(rec.gw_src)].name));
    }
    if (link_list(c) == 0)
      fail(c, fmt::format("<{}> from \"{}\" to \"{}\" has no <link_ctn> (SimGrid forbids empty "
                          "routes)",
                          c.name, s.name, d.name));
    if (zr.computed) return;  // star/cluster routes: SimGrid's business
    auto add = [&](int a, int b, RouteRec r, bool reverse) {
      auto [it, fresh] = zr.table.emplace(std::pair{a, b}, r);
      if (!fresh)
        fail(c, fmt::format("the route from \"{}\" to \"{}\" already exists (line {}){}",
                            routing_.netpoints[static_cast<size_t>(a)].name,
                            routing_.netpoints[static_cast<size_t>(b)].name, it->second.line,
                            reverse ? ": routes are symmetrical by default, give the reverse "
                                      "route symmetrical=\"NO\" or leave it out"
                                    : ""));
    };
    add(src, dst, rec, false);
    if (symmetrical && src != dst) add(dst, src, RouteRec{rec.gw_dst, rec.gw_src, rec.line}, true);
  }

  void check_pairs(size_t hosts_used) {
    if (!summary_.routes_checked) return;
    const size_t n = std::min(hosts_used, hosts_.size());
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        ++summary_.pairs_checked;
        const std::string p = routing_.resolve(hosts_[i], hosts_[j]);  // host pairs repeat never
        if (!p.empty())
          throw InputError(
              file_, "",
              fmt::format("line {}: no route from host \"{}\" to host \"{}\" (every pair of the "
                          "run's hosts needs one): {}",
                          routing_.netpoints[static_cast<size_t>(hosts_[i])].line,
                          routing_.netpoints[static_cast<size_t>(hosts_[i])].name,
                          routing_.netpoints[static_cast<size_t>(hosts_[j])].name, p));
      }
  }

  const std::string& file_;
  PlatformSummary summary_;
  platform_xml::Routing routing_;  // netpoints and zones, in declaration order
  std::unordered_map<std::string, int> netpoint_by_name_;
  std::unordered_map<std::string, LinkRec> links_;
  std::vector<int> hosts_;
};

}  // namespace

PlatformSummary check_platform_xml(const std::string& text, const std::string& file,
                                   size_t hosts_used) {
  const XmlDocument doc = parse_xml(text, file);
  // SimGrid's parser stops at "Unexpected character `<' in prolog" without one.
  if (doc.doctype != "platform")
    throw InputError(file, "",
                     fmt::format("line {}: no <!DOCTYPE platform SYSTEM "
                                 "\"https://simgrid.org/simgrid.dtd\"> before <{}> (SimGrid "
                                 "3.32 reads no platform file without it)",
                                 doc.root->line, doc.root->name));
  return Checker(file).run(*doc.root, hosts_used);
}

PlatformSummary check_platform_file(const std::string& path, size_t hosts_used) {
  return check_platform_xml(read_file(path), path, hosts_used);
}

}  // namespace sgdsim