#pragma once
/// The network models, fidelities, generated platform topologies and flow symmetries a
/// scenario and `sgdsim collective` / `sgdsim platform` may name. Each is an enum value read
/// once at input from the table in network_model.cpp, the only place their names are written:
/// every other layer compares enum values, asks the properties below, and prints
/// network_model_name() / fidelity_name() / topology_name() / flow_symmetry_name()
/// (Repo.NoSchemeOrCollectiveNameCompared).
#include <optional>
#include <string>
#include <vector>

namespace sgdsim {

/// What a message pays on top of its links' latency and bandwidth (scenario `network_model`).
enum class NetworkModel {
  links,  ///< "links": each link's technology sets the per-message costs
  lv08,   ///< "default": SimGrid's LV08 (TCP-calibrated latency and bandwidth factors)
  ideal,  ///< "ideal": plain alpha-beta (formula-exact)
  smpi,   ///< "smpi": SimGrid's SMPI-calibrated piecewise factors
};

/// How collectives are simulated (scenario `fidelity`).
enum class Fidelity {
  flow,      ///< "flow": every message is a SimGrid communication (contention, topology)
  analytic,  ///< "analytic": one timed activity per collective, lasting its formula
};

/// The shape of a generated platform (scenario `platform.generate.topology`).
enum class Topology {
  star,       ///< "star": every node on one switch
  fat_tree,   ///< "fat_tree": nodes under leaf switches, leaves under spines
  torus,      ///< "torus": SimGrid's TORUS cluster
  dragonfly,  ///< "dragonfly": SimGrid's DRAGONFLY cluster
};

/// Which messages a flow-fidelity run simulates (scenario `flow_symmetry`).
enum class FlowSymmetry {
  none,      ///< "none": every rank's messages
  rotation,  ///< "rotation": rank 0's messages, each standing for its images on every rank
};

/// The network models' names, in the table's order ("links", "default", "ideal", "smpi").
std::vector<std::string> network_model_names();
/// The model called `name`, nullopt if none is.
std::optional<NetworkModel> network_model_named(const std::string& name);
/// The name of `model` as a scenario writes it.
const std::string& network_model_name(NetworkModel model);

/// The fidelities' names, in the table's order ("flow", "analytic").
std::vector<std::string> fidelity_names();
/// The fidelity called `name`, nullopt if none is.
std::optional<Fidelity> fidelity_named(const std::string& name);
/// The name of `fidelity` as a scenario writes it.
const std::string& fidelity_name(Fidelity fidelity);

/// The topologies' names, in the table's order ("star", "fat_tree", "torus", "dragonfly").
std::vector<std::string> topology_names();
/// The topology called `name`, nullopt if none is.
std::optional<Topology> topology_named(const std::string& name);
/// The name of `topology` as a scenario writes it.
const std::string& topology_name(Topology topology);

/// The flow symmetries' names, in the table's order ("none", "rotation").
std::vector<std::string> flow_symmetry_names();
/// The flow symmetry called `name`, nullopt if none is.
std::optional<FlowSymmetry> flow_symmetry_named(const std::string& name);
/// The name of `symmetry` as a scenario writes it.
const std::string& flow_symmetry_name(FlowSymmetry symmetry);

/// Whether `topology` is one of SimGrid's own cluster topologies (torus, dragonfly): one host
/// per node, routes computed by SimGrid, no contention-free route model in sim/analytic.
bool is_simgrid_cluster(Topology topology);

/// Whether contention-free formulas of `model` apply SimGrid's LV08 factors (latency x13.01,
/// bandwidth x0.97): "default", and "smpi", whose size-dependent factors sgdsim predict does not
/// model.
bool applies_lv08_factors(NetworkModel model);

/// "a, b, c or d": `names` starting at `first` and going round (a command's choices, its
/// default first).
std::string choices_from(const std::vector<std::string>& names, const std::string& first);

}  // namespace sgdsim
