// Memory per GPU after Rajbhandari et al., "ZeRO" (SC 2020), section 3.1 and Figure 1: mixed-
// precision Adam holds 2 bytes of fp16 parameters, 2 of fp16 gradients and K = 12 of fp32
// master parameters, momentum and variance per parameter; stage 1 divides K by Nd, stage 2
// also the gradients' bytes, stage 3 also the parameters'. On top: the units a sharded scheme
// has all-gathered at once, and a unit's whole gradient before its reduce-scatter. Leaves out
// activations (the profiles carry no activation sizes), temporary buffers of the framework,
// fragmentation and the CUDA context.
#include "sim/schemes/memory.hpp"

#include <algorithm>

namespace sgdsim {

StateBytes state_bytes(const Scenario& s) {
  StateBytes b;
  b.parameter = b.gradient = s.gradient_bytes_per_parameter;
  if (s.device.optimizer == "adam_amp") b.optimizer = 12;  // fp32 master + momentum + variance
  if (s.device.optimizer == "adam" || s.device.optimizer == "adamw_loop")
    b.optimizer = 8;  // fp32 momentum + variance
  return b;           // momentum SGD (sgd, or the default step): one fp32 momentum, 4
}

MemoryBreakdown memory_per_gpu(double parameters, const StateBytes& bytes, const ShardedStates& st,
                               const std::vector<double>& unit_parameters) {
  const double nd = std::max(1, st.degree);
  MemoryBreakdown m;
  m.parameters_bytes = parameters * bytes.parameter / (st.parameters ? nd : 1.0);
  m.gradients_bytes = parameters * bytes.gradient / (st.gradients ? nd : 1.0);
  m.optimizer_bytes = parameters * bytes.optimizer / (st.optimizer ? nd : 1.0);
  double largest = 0, largest_pair = 0;
  for (size_t u = 0; u < unit_parameters.size(); ++u) {
    largest = std::max(largest, unit_parameters[u]);
    const double next = u + 1 < unit_parameters.size() ? unit_parameters[u + 1] : 0.0;
    largest_pair = std::max(largest_pair, unit_parameters[u] + next);
  }
  if (st.parameters && st.units_gathered != 0) {
    // Gathered units hold every rank's shard; this rank's own shard is already counted.
    const double gathered = st.units_gathered < 0   ? parameters
                            : st.units_gathered > 1 ? largest_pair
                                                    : largest;
    m.gathered_bytes = gathered * bytes.parameter * (1.0 - 1.0 / nd);
  }
  if (st.gradients && st.unit_gradient_buffer) m.buffers_bytes = largest * bytes.gradient;
  return m;
}

MemoryBreakdown memory_per_gpu(const Scenario& s, const Workload& w, const ShardedStates& st) {
  const StateBytes b = state_bytes(s);
  std::vector<double> units;
  for (const Bucket& bucket : w.buckets) units.push_back(bucket.bytes / b.gradient);
  return memory_per_gpu(static_cast<double>(w.parameters), b, st, units);
}

nlohmann::json memory_summary(const MemoryBreakdown& m, const Scenario& s) {
  using nlohmann::json;
  json j = {{"peak_bytes", m.peak_bytes()},
            {"model_states_bytes", m.model_states_bytes()},
            {"parameters_bytes", m.parameters_bytes},
            {"gradients_bytes", m.gradients_bytes},
            {"optimizer_state_bytes", m.optimizer_bytes},
            {"gathered_units_bytes", m.gathered_bytes},
            {"communication_buffers_bytes", m.buffers_bytes}};
  j["activations_bytes"] = m.activations_bytes ? json(*m.activations_bytes) : json(nullptr);
  const bool capped = s.device.memory_bytes > 0;
  j["capacity_bytes"] = capped ? json(s.device.memory_bytes) : json(nullptr);
  j["fits"] = capped ? json(m.peak_bytes() <= s.device.memory_bytes) : json(nullptr);
  return j;
}

}  // namespace sgdsim
