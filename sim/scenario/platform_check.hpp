#pragma once
/// A SimGrid-free reading of a SimGrid platform XML file (DTD 4.1): hosts, routers, links,
/// zones, <cluster>s and routes, checked the way SimGrid 3.32 would use them. It is the first
/// stage of the platform pre-check (before SimGrid loads the file, in a child process), so a
/// bad file gets one clear line with its line number, and it is what the `platform` fuzz target
/// exercises. What it leaves to SimGrid: trace files, actors, Vivaldi coordinates, Wifi,
/// bypass routes (their files are not route-checked here) and the routes inside
/// <cluster>/Cluster zones (SimGrid computes those itself).
#include <cstddef>
#include <string>
#include <vector>

namespace sgdsim {

/// What the static reading found.
struct PlatformSummary {
  std::vector<std::string> hosts;  ///< host names in declaration order (clusters expanded)
  size_t routers = 0;              ///< routers (clusters' included)
  size_t links = 0;                ///< declared links (a cluster's count as one declaration)
  size_t zones = 0;                ///< zones and clusters
  size_t routes = 0;               ///< route and zoneRoute elements
  size_t pairs_checked = 0;        ///< ordered host pairs whose route was followed
  bool routes_checked = true;      ///< false when bypass routes leave routing to SimGrid
};

/// Reads and checks platform XML `text` from `file`: well-formed XML, known elements and
/// required attributes, unique names, values with SimGrid's units, link technology
/// properties, references of routes (hosts, routers, zones, gateways, links, directions), and
/// a route between every ordered pair of the first `hosts_used` hosts (all hosts when
/// `hosts_used` is larger), found through zones as SimGrid routes them. Throws InputError
/// (file, "", "line N: ...") at the first problem.
PlatformSummary check_platform_xml(const std::string& text, const std::string& file,
                                   size_t hosts_used);

/// Reads `path` and checks it (check_platform_xml); throws InputError if it cannot be read.
PlatformSummary check_platform_file(const std::string& path, size_t hosts_used);

}  // namespace sgdsim
