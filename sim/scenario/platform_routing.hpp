#pragma once
/// The route half of the platform check (platform_check.cpp reads the elements into it): the
/// netpoints and zones a platform file declares, each zone's routes, and whether SimGrid 3.32
/// finds a route between two netpoints, found the way NetZoneImpl::get_global_route walks zones.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sgdsim::platform_xml {

/// What a netpoint is (hosts, routers and zones share one namespace of names).
enum class Kind { host, router, zone };

/// "host", "router" or "zone".
const char* kind_name(Kind k);

/// A host, router or zone as declared.
struct Netpoint {
  std::string name;        ///< its id
  Kind kind = Kind::host;  ///< what it is
  int zone = -1;           ///< the zone it sits in (-1: none, the root zone)
  int self_zone = -1;      ///< for a zone: its index in Routing::zones
  int line = 0;            ///< line of its declaration
};

/// A declared route between two members of a zone.
struct RouteRec {
  int gw_src = -1;  ///< netpoint, or -1 between hosts/routers
  int gw_dst = -1;  ///< netpoint, or -1 between hosts/routers
  int line = 0;     ///< line of the route element
};

/// A zone (or cluster) and the routes declared in it.
struct Zone {
  std::string name;       ///< its id
  std::string routing;    ///< its routing, canonical spelling ("Full", "Floyd", ...)
  int parent = -1;        ///< enclosing zone (-1: top level)
  int netpoint = -1;      ///< its own netpoint
  int line = 0;           ///< line of its declaration
  bool computed = false;  ///< SimGrid computes its routes (cluster, star, Vivaldi, Wifi)
  bool none = false;      ///< routing "None": no route at all
  bool graph = false;     ///< Floyd / Dijkstra: routes are edges of a graph
  size_t members = 0;     ///< hosts, routers and zones directly inside it
  std::map<std::pair<int, int>, RouteRec> table;  ///< routes by (source, destination) member
  std::map<int, std::vector<std::pair<int, RouteRec>>> out;  ///< graph zones: table as edges
  bool out_built = false;                                    ///< whether `out` is made yet
};

/// The declared netpoints and zones, and route resolution between netpoints.
class Routing {
 public:
  std::vector<Netpoint> netpoints;  ///< in declaration order
  std::vector<Zone> zones;          ///< in declaration order

  /// Whether netpoint `np` sits in zone `zone`, directly or in a zone inside it.
  bool inside(int np, int zone) const;

  /// Empty if SimGrid finds a route from netpoint a to b, else what is missing (one line).
  std::string resolve(int a, int b);

 private:
  int member_of(int np, int z) const;
  int depth(int z) const;
  int common_zone(int a, int b) const;
  static std::vector<RouteRec> graph_path(Zone& z, int a, int b);
  std::string route_problem(int a, int b);

  std::unordered_map<uint64_t, std::string> memo_;  // gateway pairs followed so far
};

}  // namespace sgdsim::platform_xml
