#pragma once
/// The SimGrid runner: executes a lazily built sequence of fragments just in time on a loaded
/// Platform (compute tasks as Execs, point-to-point steps as host-to-host Comms, analytic
/// collectives and start delays as timed Execs on the timer host), and a single collective.
/// Internal to sim/engine.
#include "sim/analytic/observer.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/platform.hpp"
#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// Simulates `iterations` iterations of `scheme` on `platform`, reporting to `observer`.
EngineResult simulate_training(const EngineConfig& config, Platform& platform, const Scheme& scheme,
                               int iterations, const Collective& collective,
                               TaskObserver& observer);

/// Simulates one operation (config.group.op) of `bytes` over every rank of `platform`.
EngineResult simulate_collective(const EngineConfig& config, Platform& platform,
                                 const Collective& collective, double bytes);

/// Simulates `jobs` chains of `operations` operations of `bytes` over every rank of
/// `platform`, chain j held back j x `offset_s` on the timer host (config.start_delays), each
/// operation reported to `observer` as a comm task whose index is its job.
EngineResult simulate_jobs(const EngineConfig& config, Platform& platform,
                           const Collective& collective, double bytes, int jobs, int operations,
                           double offset_s, TaskObserver& observer);

}  // namespace sgdsim
