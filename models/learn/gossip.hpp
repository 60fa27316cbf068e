#pragma once
/// Decentralized SGD's replicas (D-PSGD): one parameter vector and momentum per worker, and the
/// stepped replicas each worker sent in an iteration, kept until every worker has mixed them.
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace sgdsim::learn {

/// A mixing matrix W in rows: row i lists (j, W_ij) for every j with W_ij > 0, i included.
using MixingRows = std::vector<std::vector<std::pair<int, double>>>;

/// Row `row` of W applied to `replicas`: sum_j W_ij x_j, accumulated in double and rounded once.
std::vector<float> mix_row(const std::vector<std::pair<int, double>>& row,
                           const std::vector<std::vector<float>>& replicas);

/// Mean over the replicas of their squared Euclidean distance to their average
/// (1/n sum_i ||x_i - mean||^2, in double).
double consensus_distance(const std::vector<std::vector<float>>& replicas);

/// Every worker's replica under adapt-then-combine gossip: a worker steps its own replica
/// (params(w), velocity(w)), sends it (sent), and before its next gradient replaces it by
/// sum_j W_wj of what its in-neighbours sent in that iteration.
class GossipReplicas {
 public:
  /// All replicas start at `start` with zero momentum.
  GossipReplicas(MixingRows mixing, const std::vector<float>& start);
  /// Worker w's parameters for its gradient of iteration `it` (mixes iteration it - 1 first).
  const std::vector<float>& at(int w, int it);
  /// Worker w's parameters (its local step writes them).
  std::vector<float>& params(int w) { return params_[static_cast<size_t>(w)]; }
  /// Worker w's momentum.
  std::vector<float>& velocity(int w) { return velocity_[static_cast<size_t>(w)]; }
  /// Worker w has taken its step of iteration `it`: its replica is what its messages carry.
  void sent(int w, int it);
  /// Every replica after the mixing of iteration `it` (every worker has sent it).
  std::vector<std::vector<float>> mixed(int it) const;
  /// AD-PSGD: replicas `a` and `b` both become their mean.
  void average_pair(int a, int b);
  /// Every replica as it is now.
  const std::vector<std::vector<float>>& replicas() const { return params_; }

 private:
  MixingRows mixing_;
  std::vector<std::vector<float>> params_, velocity_;
  std::vector<int> mixed_through_;                       // per worker: last iteration mixed
  std::map<int, std::vector<std::vector<float>>> sent_;  // iteration -> each worker's replica
  std::map<int, int> mixes_left_;                        // iteration -> workers yet to mix it
};

}  // namespace sgdsim::learn
