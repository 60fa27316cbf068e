#pragma once
/// The network models and fidelities a scenario and `sgdsim collective` may name. Each is an
/// enum value read once at input from the table in network_model.cpp, the only place their
/// names are written: every other layer compares enum values, asks the properties below, and
/// prints network_model_name() / fidelity_name() (Repo.NoSchemeOrCollectiveNameCompared).
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

/// Whether contention-free formulas of `model` apply SimGrid's LV08 factors (latency x13.01,
/// bandwidth x0.97): "default", and "smpi", whose size-dependent factors sgdsim predict does not
/// model.
bool applies_lv08_factors(NetworkModel model);

/// "a, b, c or d": `names` starting at `first` and going round (a command's choices, its
/// default first).
std::string choices_from(const std::vector<std::string>& names, const std::string& first);

}  // namespace sgdsim
