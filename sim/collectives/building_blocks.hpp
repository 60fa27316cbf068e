#pragma once
/// Pieces shared by several algorithms: MPICH's fold of non-power-of-two groups and binomial
/// trees over a subset of ranks.
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// MPICH's handling of p ranks that are not a power of two: the first 2r ranks pair up (r =
/// p - p'), even ones hand their whole buffer to the odd neighbour before the algorithm and
/// get the result back after it; the other p' ranks run the power-of-two algorithm.
struct Pof2Fold {
  /// The fold of `p` ranks.
  explicit Pof2Fold(int p);
  int p = 1;    ///< all ranks
  int p2 = 1;   ///< ranks that run the power-of-two algorithm
  int rem = 0;  ///< p - p2
  /// Real rank of power-of-two rank `v`.
  int real(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
  /// Pre step: even ranks below 2 rem send `bytes` to the next rank, which reduces them.
  void add_pre(ScheduleBuilder& b, double bytes) const;
  /// Post step: the odd ranks below 2 rem send the `bytes` result back.
  void add_post(ScheduleBuilder& b, double bytes) const;
  /// Cost of the pre and post steps (0 for a power of two): 2 (a + n b) + n g.
  double extra_cost_s(double bytes, const AlphaBeta& ab) const {
    return rem > 0 ? 2.0 * (ab.alpha_s + bytes * ab.beta_s_per_byte) + bytes * ab.gamma_s_per_byte
                   : 0.0;
  }
};

/// Binomial reduce of `bytes` onto members[0] (each message reduced by its receiver).
void add_binomial_reduce(ScheduleBuilder& b, const std::vector<int>& members, double bytes);
/// Binomial broadcast of `bytes` from members[0].
void add_binomial_bcast(ScheduleBuilder& b, const std::vector<int>& members, double bytes);

/// Binomial gather onto members[0] of `block_bytes` per member (each sender forwards the
/// blocks of its subtree: 1, 2, 4, ... blocks per level).
void add_binomial_gather(ScheduleBuilder& b, const std::vector<int>& members, double block_bytes);
/// Binomial scatter from members[0] of `block_bytes` per member (the reverse of the gather).
void add_binomial_scatter(ScheduleBuilder& b, const std::vector<int>& members, double block_bytes);

}  // namespace sgdsim
