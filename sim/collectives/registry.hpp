#pragma once
/// Factories of the collective algorithms; registry.cpp lists them by name.
#include <memory>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// Ring allreduce.
std::unique_ptr<Collective> make_ring();

}  // namespace sgdsim
