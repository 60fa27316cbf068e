#include "sim/scenario/platform_routing.hpp"

#include <fmt/format.h>

#include <deque>

namespace sgdsim::platform_xml {

const char* kind_name(Kind k) {
  return k == Kind::host ? "host" : k == Kind::router ? "router" : "zone";
}

bool Routing::inside(int np, int zone) const {
  for (int z = netpoints[static_cast<size_t>(np)].zone; z >= 0;
       z = zones[static_cast<size_t>(z)].parent)
    if (z == zone) return true;
  return false;
}

/// The child of zone `z` (a netpoint directly in it) on the way to netpoint `np`.
int Routing::member_of(int np, int z) const {
  int cur = np;
  while (netpoints[static_cast<size_t>(cur)].zone != z)
    cur = zones[static_cast<size_t>(netpoints[static_cast<size_t>(cur)].zone)].netpoint;
  return cur;
}

int Routing::depth(int z) const {
  int d = 0;
  for (; z >= 0; z = zones[static_cast<size_t>(z)].parent) ++d;
  return d;
}

int Routing::common_zone(int a, int b) const {
  int za = netpoints[static_cast<size_t>(a)].zone, zb = netpoints[static_cast<size_t>(b)].zone;
  int da = depth(za), db = depth(zb);
  for (; da > db; --da) za = zones[static_cast<size_t>(za)].parent;
  for (; db > da; --db) zb = zones[static_cast<size_t>(zb)].parent;
  while (za != zb) {
    za = zones[static_cast<size_t>(za)].parent;
    zb = zones[static_cast<size_t>(zb)].parent;
  }
  return za;
}

/// Path of routes from member `a` to member `b` of graph-routed zone `z` (BFS), or empty.
std::vector<RouteRec> Routing::graph_path(Zone& z, int a, int b) {
  if (!z.out_built)
    for (const auto& [key, r] : z.table) z.out[key.first].push_back({key.second, r});
  z.out_built = true;
  auto& out = z.out;
  std::map<int, std::pair<int, RouteRec>> prev;
  std::deque<int> todo{a};
  prev[a] = {-1, {}};
  while (!todo.empty()) {
    const int v = todo.front();
    todo.pop_front();
    if (v == b) break;
    for (const auto& [w, r] : out[v])
      if (prev.emplace(w, std::pair{v, r}).second) todo.push_back(w);
  }
  std::vector<RouteRec> path;
  if (!prev.count(b)) return path;
  for (int v = b; v != a; v = prev[v].first) path.insert(path.begin(), prev[v].second);
  return path;
}

/// Empty if SimGrid finds a route from netpoint a to b, else what is missing.
std::string Routing::route_problem(int a, int b) {
  if (a == b) return "";
  const uint64_t key = (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
  auto memo = memo_.find(key);
  if (memo != memo_.end()) return memo->second;
  std::string problem = resolve(a, b);
  memo_.emplace(key, problem);
  return problem;
}

std::string Routing::resolve(int a, int b) {
  const int z = common_zone(a, b);
  if (z < 0) return "the two sit in different top-level zones";
  Zone& zr = zones[static_cast<size_t>(z)];
  const int ma = member_of(a, z), mb = member_of(b, z);
  const auto name = [&](int np) { return netpoints[static_cast<size_t>(np)].name; };
  if (zr.computed) return "";
  if (zr.none)
    return fmt::format(
        "zone \"{}\" (line {}) has routing None, so \"{}\" and \"{}\" cannot "
        "reach each other",
        zr.name, zr.line, name(ma), name(mb));
  std::vector<RouteRec> path;
  if (zr.graph) {
    path = graph_path(zr, ma, mb);
  } else if (auto it = zr.table.find({ma, mb}); it != zr.table.end()) {
    path.push_back(it->second);
  }
  if (path.empty())
    return fmt::format(
        "zone \"{}\" (line {}, routing {}) has no {} from \"{}\" to \"{}\"", zr.name, zr.line,
        zr.routing, netpoints[static_cast<size_t>(ma)].kind == Kind::zone ? "zoneRoute" : "route",
        name(ma), name(mb));
  // Into the source's zone, between consecutive hops, and out of the destination's zone.
  if (path.front().gw_src >= 0)
    if (auto p = route_problem(a, path.front().gw_src); !p.empty()) return p;
  for (size_t i = 1; i < path.size(); ++i)
    if (path[i - 1].gw_dst >= 0 && path[i].gw_src >= 0)
      if (auto p = route_problem(path[i - 1].gw_dst, path[i].gw_src); !p.empty()) return p;
  if (path.back().gw_dst >= 0)
    if (auto p = route_problem(path.back().gw_dst, b); !p.empty()) return p;
  return "";
}

}  // namespace sgdsim::platform_xml
