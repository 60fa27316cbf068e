#include "models/learn/gossip.hpp"

#include <stdexcept>

namespace sgdsim::learn {

std::vector<float> mix_row(const std::vector<std::pair<int, double>>& row,
                           const std::vector<std::vector<float>>& replicas) {
  const size_t n = replicas.empty() ? 0 : replicas.front().size();
  std::vector<double> sum(n, 0.0);
  for (const auto& [j, weight] : row) {
    const std::vector<float>& x = replicas[static_cast<size_t>(j)];
    for (size_t k = 0; k < n; ++k) sum[k] += weight * static_cast<double>(x[k]);
  }
  return std::vector<float>(sum.begin(), sum.end());
}

double consensus_distance(const std::vector<std::vector<float>>& replicas) {
  if (replicas.empty()) return 0;
  const size_t n = replicas.front().size();
  const auto count = static_cast<double>(replicas.size());
  std::vector<double> mean(n, 0.0);
  for (const auto& x : replicas)
    for (size_t k = 0; k < n; ++k) mean[k] += x[k] / count;
  double total = 0;
  for (const auto& x : replicas)
    for (size_t k = 0; k < n; ++k) total += (x[k] - mean[k]) * (x[k] - mean[k]);
  return total / count;
}

GossipReplicas::GossipReplicas(MixingRows mixing, const std::vector<float>& start)
    : mixing_(std::move(mixing)),
      params_(mixing_.size(), start),
      velocity_(mixing_.size(), std::vector<float>(start.size(), 0.0f)),
      mixed_through_(mixing_.size(), -1) {}

const std::vector<float>& GossipReplicas::at(int w, int it) {
  const auto k = static_cast<size_t>(w);
  // The scheme's graph runs a worker's next forward pass only after every message into it, so
  // its in-neighbours' replicas of it - 1 are all here.
  for (int mix = mixed_through_[k] + 1; mix < it; ++mix) {
    auto found = sent_.find(mix);
    if (found == sent_.end()) throw std::logic_error("gossip: mixing an iteration nobody sent");
    params_[k] = mix_row(mixing_[k], found->second);
    mixed_through_[k] = mix;
    if (--mixes_left_[mix] == 0) {
      sent_.erase(found);
      mixes_left_.erase(mix);
    }
  }
  return params_[k];
}

void GossipReplicas::sent(int w, int it) {
  auto& slot = sent_[it];
  if (slot.empty()) {
    slot.resize(mixing_.size());
    mixes_left_[it] = static_cast<int>(mixing_.size());
  }
  slot[static_cast<size_t>(w)] = params_[static_cast<size_t>(w)];
}

void GossipReplicas::average_pair(int a, int b) {
  auto& x = params_[static_cast<size_t>(a)];
  auto& y = params_[static_cast<size_t>(b)];
  for (size_t k = 0; k < x.size(); ++k) x[k] = y[k] = 0.5f * (x[k] + y[k]);
}

std::vector<std::vector<float>> GossipReplicas::mixed(int it) const {
  const auto& replicas = sent_.at(it);
  std::vector<std::vector<float>> out;
  out.reserve(mixing_.size());
  for (const auto& row : mixing_) out.push_back(mix_row(row, replicas));
  return out;
}

}  // namespace sgdsim::learn
