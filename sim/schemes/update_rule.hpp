#pragma once
/// How the real math applies a scheme's gradients: every registered scheme declares one of
/// these rules, and sim/coupling's trainer implements each, so the math never asks a scheme's
/// name and a scheme the math cannot train cannot be registered.
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace sgdsim {

/// The averaged gradient of iteration i - lag, delivered by its allreduce, updates every
/// replica at iteration i (sync: lag 0; ssp: lag s); `predicted`: it goes through the
/// pseudo-sync predictor first (pseudo_sync: lag 1).
struct AveragedUpdate {
  int lag = 0;             ///< iterations between a gradient's allreduce and its update
  bool predicted = false;  ///< the delayed average is corrected by training.predictor
};

/// DiLoCo's outer optimizer (Douillard et al. 2023): at each synchronization the
/// pseudo-gradient (global parameters minus the replicas' mean) takes an SGD step with
/// momentum, Nesterov's by default, from the global parameters.
struct OuterOptimizer {
  double learning_rate = 1;  ///< outer step size (1 with momentum 0: the replicas' mean)
  double momentum = 0;       ///< outer momentum
  bool nesterov = true;      ///< Nesterov momentum, as DiLoCo's outer optimizer
};

/// DiLoCo's inner AdamW (Douillard et al. 2023), in torch.optim.AdamW's terms; its learning
/// rate is the training section's.
struct InnerAdamW {
  double beta1 = 0.9;         ///< first moment's decay
  double beta2 = 0.95;        ///< second moment's decay
  double eps = 1e-8;          ///< added to the second moment's root
  double weight_decay = 0.1;  ///< decoupled weight decay
};

/// Each worker steps its own replica; every `period` iterations the replicas average their
/// parameters and momentum (local SGD; period 1 is sync), or, with an outer optimizer, the
/// global parameters take its step on the pseudo-gradient and every replica restarts there
/// with its own inner momentum kept (DiLoCo).
struct LocalUpdate {
  int period = 1;                                      ///< iterations between averaging
  std::optional<OuterOptimizer> outer = std::nullopt;  ///< DiLoCo's; none: local SGD's average
  std::optional<InnerAdamW> adamw = std::nullopt;      ///< DiLoCo's inner AdamW; none: SGD
  /// Streaming DiLoCo: the parameters in this many fragments (forward order), each
  /// synchronized once per `period` at its own offset (fragment_synchronizes); 1: all at once.
  int fragments = 1;
};

/// Whether fragment `fragment` of `fragments` is synchronized after iteration `iteration` with
/// `period` H (Streaming DiLoCo, Douillard et al. 2025): fragment p's outer steps come every H
/// iterations, floor(p H / F) iterations before fragment 0's (which are local SGD's, at
/// iterations H - 1, 2 H - 1, ...), so the fragments' exchanges are staggered.
inline bool fragment_synchronizes(int fragment, int fragments, int period, int iteration) {
  const int offset = static_cast<int>(static_cast<long long>(fragment) * period / fragments);
  return (iteration + 1 + offset) % period == 0;
}

/// Parameter servers apply each worker's gradient key by key as it arrives; workers compute at
/// the parameters they last pulled (async).
struct ServerUpdate {};

/// A mixing matrix W in rows: row i lists (j, W_ij) for every j with W_ij > 0, i included.
using MixingRows = std::vector<std::vector<std::pair<int, double>>>;

/// Decentralized SGD (D-PSGD): each worker steps its own replica with its own gradient and
/// momentum, then replaces it by the average of its in-neighbours' stepped replicas through W.
/// `pairwise` (AD-PSGD): no W; a worker's gradient is taken at its replica as read when its
/// forward pass starts, and its update first averages its replica with the partner the update
/// task names (Task::dst), then applies the gradient to its own.
struct GossipUpdate {
  MixingRows mixing;      ///< W, one row per worker
  bool pairwise = false;  ///< AD-PSGD's asynchronous pairwise averaging instead of W
};

/// One of the rules above.
using UpdateRule = std::variant<AveragedUpdate, LocalUpdate, ServerUpdate, GossipUpdate>;

/// Iterations between an allreduce and the update that applies it (0 unless averaged).
inline int update_lag(const UpdateRule& rule) {
  const auto* averaged = std::get_if<AveragedUpdate>(&rule);
  return averaged ? averaged->lag : 0;
}

}  // namespace sgdsim
