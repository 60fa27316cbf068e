#pragma once
/// The options nccl_tuner declares (sim/collectives/nccl_tuner.cpp): its latency model, the
/// tree/LL model and the inputs of NCCL's choice of algorithm and protocol, the staged network
/// path. Only nccl_tuner accepts other values than their defaults.
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// nccl_tuner's options, each bound to its CollectiveGroup field.
std::vector<CollectiveParam> nccl_tuner_params();

}  // namespace sgdsim
