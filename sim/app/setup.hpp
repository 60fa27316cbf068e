#pragma once
/// Composition shared by the subcommands: scenario -> workload -> scheme -> engine config.
#include <memory>
#include <string>
#include <vector>

#include "sim/analytic/platform_model.hpp"
#include "sim/analytic/predict.hpp"
#include "sim/app/cli.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/scheme.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// Everything needed to simulate or predict one scenario.
struct Setup {
  Scenario scenario;                       ///< validated scenario
  Workload workload;                       ///< per-worker costs
  std::unique_ptr<Scheme> scheme;          ///< fragment builder
  const Collective* collective = nullptr;  ///< collective algorithm
  std::optional<PlatformModel> platform;   ///< generated platform, if any
  std::vector<int> worker_host;            ///< host index of each worker (generated platforms)
  EngineConfig engine;                     ///< SimGrid configuration
  std::vector<std::string> warnings;       ///< one line each, printed on stderr by run/predict
};

/// Loads and validates a scenario file with overrides and prepares everything else.
std::unique_ptr<Setup> make_setup(const std::string& file,
                                  const std::vector<std::string>& overrides,
                                  const std::vector<std::string>& cfg);

/// The link technology option `opt` (else `fallback`) with its transport defaults; throws
/// InputError naming the technologies for an unknown one.
TransportParams technology_option(const Args& a, const std::string& opt,
                                  const std::string& fallback);

/// Guards `predict` and `dag`, which build the task graph of `iterations` iterations: the
/// activity count and memory `run` estimates for it at fidelity analytic (one task, one
/// activity), checked against run's limits; a warning goes to stderr (an excess without
/// `force` throws InputError).
void check_graph_resources(const Setup& setup, int iterations, bool force);

/// Contention-free critical-path prediction of the scenario (no SimGrid; sim/analytic).
Prediction predict(const Setup& setup);

}  // namespace sgdsim
