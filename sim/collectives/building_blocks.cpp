#include "sim/collectives/building_blocks.hpp"

#include <algorithm>

namespace sgdsim {

Pof2Fold::Pof2Fold(int ranks) : p(ranks), p2(floor_pow2(ranks)), rem(ranks - floor_pow2(ranks)) {}

void Pof2Fold::add_pre(ScheduleBuilder& b, double bytes) const {
  b.next_round();
  for (int i = 0; i < rem; ++i) b.add_mpi(2 * i, 2 * i + 1, bytes, bytes);
}

void Pof2Fold::add_post(ScheduleBuilder& b, double bytes) const {
  b.next_round();
  for (int i = 0; i < rem; ++i) b.add_mpi(2 * i + 1, 2 * i, bytes, 0);
}

void add_binomial_reduce(ScheduleBuilder& b, const std::vector<int>& members, double bytes) {
  const int m = static_cast<int>(members.size());
  // Level k: member i with i % 2^(k+1) == 2^k sends to i - 2^k; receivers take their
  // children in level order (posted receives), so no link carries two messages at once.
  for (int mask = 1; mask < m; mask <<= 1) {
    b.next_round();
    for (int i = mask; i < m; i += 2 * mask) b.add_mpi(members[i], members[i - mask], bytes, bytes);
  }
}

void add_binomial_bcast(ScheduleBuilder& b, const std::vector<int>& members, double bytes) {
  const int m = static_cast<int>(members.size());
  int top = 1;
  while (top < m) top <<= 1;
  for (int mask = top >> 1; mask >= 1; mask >>= 1) {
    b.next_round();
    for (int i = 0; i + mask < m; i += 2 * mask) b.add_mpi(members[i], members[i + mask], bytes, 0);
  }
}

void add_binomial_gather(ScheduleBuilder& b, const std::vector<int>& members, double block_bytes) {
  const int m = static_cast<int>(members.size());
  // Level k: member i with i % 2^(k+1) == 2^k holds the blocks of [i, i + 2^k) by now.
  for (int mask = 1; mask < m; mask <<= 1) {
    b.next_round();
    for (int i = mask; i < m; i += 2 * mask)
      b.add_mpi(members[i], members[i - mask], std::min(mask, m - i) * block_bytes, 0);
  }
}

void add_binomial_scatter(ScheduleBuilder& b, const std::vector<int>& members, double block_bytes) {
  const int m = static_cast<int>(members.size());
  int top = 1;
  while (top < m) top <<= 1;
  for (int mask = top >> 1; mask >= 1; mask >>= 1) {
    b.next_round();
    for (int i = 0; i + mask < m; i += 2 * mask)
      b.add_mpi(members[i], members[i + mask], std::min(mask, m - i - mask) * block_bytes, 0);
  }
}

}  // namespace sgdsim
