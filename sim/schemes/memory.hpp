#pragma once
/// Device memory per GPU of data-parallel training: the model states (parameters, gradients,
/// optimizer state) as the ZeRO paper counts them, what a sharded scheme gathers or buffers on
/// top, and the activations where the profile gives them.
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/scenario/scenario.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

/// How a scheme holds the model states on one GPU (SchemeTraits::memory).
struct ShardedStates {
  int degree = 1;           ///< ranks the sharded states are divided over (Nd)
  bool optimizer = false;   ///< optimizer state sharded (ZeRO stage >= 1)
  bool gradients = false;   ///< gradients sharded (stage >= 2)
  bool parameters = false;  ///< parameters sharded (stage 3, FSDP)
  /// Parameter-sharded: units all-gathered at once (1, 2 with prefetch); -1: every unit (kept
  /// gathered from forward to backward, FSDP's SHARD_GRAD_OP).
  int units_gathered = 0;
  /// Gradient-sharded: a unit's whole gradient is held until its reduce-scatter ends.
  bool unit_gradient_buffer = false;
};

/// Bytes per parameter of each model state (ZeRO paper section 3.1: 2 + 2 + K).
struct StateBytes {
  double parameter = 4;  ///< the working copy: gradient_precision's bytes
  double gradient = 4;   ///< gradient_precision's bytes
  double optimizer = 4;  ///< K: adam_amp 12 (fp32 master, momentum, variance), adam 8, sgd 4
};

/// One GPU's memory, by part.
struct MemoryBreakdown {
  double parameters_bytes = 0;              ///< its parameters (a shard of them when sharded)
  double gradients_bytes = 0;               ///< its gradients
  double optimizer_bytes = 0;               ///< its optimizer state
  double gathered_bytes = 0;                ///< all-gathered units in flight beyond its own shard
  double buffers_bytes = 0;                 ///< communication buffers (a unit's unsharded gradient)
  std::optional<double> activations_bytes;  ///< activations (unset: the profile has none)
  /// Parameters + gradients + optimizer state (the ZeRO paper's model states).
  double model_states_bytes() const { return parameters_bytes + gradients_bytes + optimizer_bytes; }
  /// The peak: everything above held at once.
  double peak_bytes() const {
    return model_states_bytes() + gathered_bytes + buffers_bytes + activations_bytes.value_or(0);
  }
};

/// The state bytes the scenario implies (gradient_precision, device.optimizer).
StateBytes state_bytes(const Scenario& s);

/// One GPU's memory for `parameters` parameters held as `states` says; `unit_parameters` are
/// the units' (buckets') parameter counts, in backward order.
MemoryBreakdown memory_per_gpu(double parameters, const StateBytes& bytes,
                               const ShardedStates& states,
                               const std::vector<double>& unit_parameters);

/// The same for a scenario's workload.
MemoryBreakdown memory_per_gpu(const Scenario& s, const Workload& w, const ShardedStates& states);

/// summary.json's `memory`: {peak_bytes, capacity_bytes, fits, model_states_bytes, parameters,
/// gradients, optimizer_state, gathered_units, communication_buffers, activations} (bytes;
/// activations null when the profile has none; capacity and fits null without device.memory).
nlohmann::json memory_summary(const MemoryBreakdown& m, const Scenario& s);

}  // namespace sgdsim
