#pragma once
/// `sgdsim collective`'s options: the algorithm and the options it declares, the group, and the
/// platform it runs on (a platform file, or a generated star of exact latency and bandwidth).
#include <string>
#include <vector>

#include "sim/app/cli.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// `sgdsim collective`'s options, read and checked.
struct CollectiveCli {
  const Collective* coll = nullptr;         ///< --algorithm
  int ranks = 1;                            ///< --ranks
  int dpn = 1;                              ///< --devices-per-node
  int extra = 0;                            ///< dedicated server hosts the algorithm adds
  double bytes = 0;                         ///< --bytes
  NetworkModel model = NetworkModel::lv08;  ///< --network-model
  Fidelity fidelity = Fidelity::flow;       ///< --fidelity
  TransportParams node_transport;           ///< --technology (and --sockets)
  TransportParams intra_transport;          ///< --intra-technology
  EngineConfig cfg;                         ///< the engine's configuration being built
};

/// The registered collective option `opt` names (else `def`); an unknown name throws InputError
/// listing the registered ones.
const Collective& collective_option(const Args& a, const std::string& opt, const std::string& def);

/// --sockets LIB: the library's socket streams cap every message between nodes (as a tcp
/// node link's `sockets` with its defaults and the default stream goodput).
TransportParams with_sockets(const Args& a, NetworkModel model, TransportParams t);

/// The group's algorithm options: hierarchical's levels, pipelining, servers, reductions.
void read_group_options(const Args& a, CollectiveCli& c);

/// --platform FILE: the collective runs on the file's first hosts (no formula).
void use_platform_file(const Args& a, const std::string& platform_file, CollectiveCli& c);

/// The generated star of --bandwidth, --latency (and the intra-node options); returns the
/// closed form of the collective on its routes.
double use_generated_star(const Args& a, CollectiveCli& c);

}  // namespace sgdsim
