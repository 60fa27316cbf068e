#pragma once
/// Factories of the schemes; registry.cpp lists them by name.
#include <memory>

#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// Synchronous (BSP) data-parallel SGD.
std::unique_ptr<Scheme> make_sync(const SchemeContext& context);
/// Asynchronous parameter-server SGD.
std::unique_ptr<Scheme> make_async(const SchemeContext& context);
/// Pseudo-synchronous SGD (one-step-delayed averaged gradient through a predictor).
std::unique_ptr<Scheme> make_pseudo_sync(const SchemeContext& context);
/// Stale synchronous parallel with staleness bound s.
std::unique_ptr<Scheme> make_ssp(const SchemeContext& context);
/// Local SGD with H local steps between synchronizations.
std::unique_ptr<Scheme> make_local_sgd(const SchemeContext& context);

}  // namespace sgdsim
