#pragma once
/// Factories of the schemes; registry.cpp lists them by name.
#include <memory>

#include "sim/schemes/scheme.hpp"

namespace sgdsim {

/// Synchronous (BSP) data-parallel SGD.
std::unique_ptr<Scheme> make_sync(const SchemeContext& context);

}  // namespace sgdsim
