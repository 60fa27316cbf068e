#pragma once
/// Collective algorithms as pure schedules of point-to-point steps plus their cost formulas.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sgdsim {

/// One point-to-point message of a collective, between ranks.
struct CommStep {
  int src = 0;       ///< sending rank
  int dst = 0;       ///< receiving rank
  double bytes = 0;  ///< message size (fractional: per-rank chunks of N/P bytes are exact)
};

/// A collective as a DAG of steps: a step may start once all its predecessors are done.
struct Schedule {
  int ranks = 0;                       ///< participating ranks
  std::vector<CommStep> steps;         ///< all messages
  std::vector<uint32_t> pred_count;    ///< predecessors of each step
  std::vector<uint32_t> succ_offsets;  ///< CSR offsets into `succ` (size steps + 1)
  std::vector<uint32_t> succ;          ///< successors, grouped by step
  /// Builds the CSR successor lists from per-step predecessor lists.
  void set_dependencies(const std::vector<std::vector<uint32_t>>& preds);
};

/// Alpha-beta(-gamma) parameters of a homogeneous network.
struct AlphaBeta {
  double alpha_s = 0;           ///< per-message latency
  double beta_s_per_byte = 0;   ///< inverse bandwidth
  double gamma_s_per_byte = 0;  ///< reduction compute per byte (0 = not modeled)
};

/// An allreduce algorithm: its schedule and its closed-form cost.
class Collective {
 public:
  virtual ~Collective() = default;
  /// Registered name (DESIGN.md §8).
  virtual std::string name() const = 0;
  /// The point-to-point steps of an allreduce of `bytes` over `ranks`.
  virtual Schedule schedule(int ranks, double bytes) const = 0;
  /// The textbook cost (Thakur, Rabenseifner & Gropp 2005) of the same allreduce.
  virtual double formula_s(int ranks, double bytes, const AlphaBeta& ab) const = 0;
};

/// The collective registered under `name` (or alias); throws std::out_of_range if unknown.
const Collective& collective_by_name(const std::string& name);
/// All registered names.
std::vector<std::string> collective_names();

/// Contention-free time of a schedule: each step lasts `cost(step)` once its predecessors end.
double schedule_time_s(const Schedule& schedule,
                       const std::function<double(const CommStep&)>& cost);

}  // namespace sgdsim
