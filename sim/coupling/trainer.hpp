#pragma once
/// Couples the simulation to real math: task completions, in simulated-time order, drive
/// gradient computations and updates of a small model (models/learn), so delays, staleness
/// and averaging are exactly those of the simulated run.
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/learn/learn.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schemes/update_rule.hpp"

namespace sgdsim {

/// One evaluation of the model during the run.
struct ConvergencePoint {
  double time_s = 0;    ///< simulated time
  int iteration = 0;    ///< iterations completed
  double loss = 0;      ///< test cross-entropy
  double accuracy = 0;  ///< test accuracy
  /// Gossip schemes: mean squared distance of the replicas to their mean (< 0: not reported).
  double consensus_distance = -1;
};

/// The predictor options a scenario's training section sets (training.predictor_*).
learn::PredictorOptions predictor_options(const TrainingSpec& training);

/// DiLoCo's outer step: pseudo-gradient d = global - mean, velocity = mu velocity + d, then
/// global -= lr (d + mu velocity) with Nesterov momentum (torch.optim.SGD's form) or lr
/// velocity without; computed as mean + (1 - lr) d - lr mu (...), equal in exact arithmetic,
/// so that lr 1 with mu 0 gives the mean bit for bit.
void outer_optimizer_step(std::vector<float>& global, std::vector<float>& velocity,
                          const std::vector<float>& mean, const OuterOptimizer& outer);

/// A TaskObserver that trains the proxy model as the simulated events happen, then forwards
/// every event to `inner` (the recorder).
class Trainer : public TaskObserver {
 public:
  /// Loads the dataset and builds the model (`buckets`: gradient buckets per iteration;
  /// `keys`: async's parameter-server keys); throws InputError if the dataset is missing.
  Trainer(const Scenario& scenario, int buckets, TaskObserver& inner, std::vector<PsKey> keys = {});
  ~Trainer() override;
  void task_started(const Task& task, double start_s) override;
  void task_done(const Task& task, double start_s, double end_s) override;
  bool should_stop() const override;
  /// Every evaluation, in order.
  const std::vector<ConvergencePoint>& convergence() const;
  /// The parameters after every step applied so far (the sync family's newest replica, async's
  /// servers); after the last update every sync-family replica holds them.
  const std::vector<float>& parameters() const;
  /// {"proxy_model", "dataset", "final_loss", "final_accuracy", "time_to_target_s", ...}.
  nlohmann::json summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgdsim
