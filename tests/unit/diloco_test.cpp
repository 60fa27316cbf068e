// DiLoCo's outer step (sim/coupling: outer_optimizer_step) against the update written out by
// hand from torch.optim.SGD's momentum and Nesterov rules, and the reference case (lr 1,
// momentum 0) that makes DiLoCo with one inner step sync.
#include <gtest/gtest.h>

#include <vector>

#include "sim/coupling/trainer.hpp"

using namespace sgdsim;

TEST(DilocoOuterStep, LrOneWithoutMomentumGivesTheMeanBitForBit) {
  std::vector<float> global = {0.3f, -1.7f, 2.25f}, velocity(3, 0.0f);
  const std::vector<float> mean = {0.1f, -1.9f, 2.2500001f};
  outer_optimizer_step(global, velocity, mean, OuterOptimizer{1.0, 0.0, true});
  EXPECT_EQ(global, mean);
}

TEST(DilocoOuterStep, NesterovAndPlainMomentumFollowTorchSgd) {
  const float lr = 0.7f, mu = 0.9f;
  for (bool nesterov : {true, false}) {
    std::vector<float> global = {1.0f}, velocity = {0.5f};
    const std::vector<float> mean = {0.8f};
    outer_optimizer_step(global, velocity, mean, OuterOptimizer{lr, mu, nesterov});
    const double d = 1.0 - 0.8, v = mu * 0.5 + d;   // buf = mu buf + g
    const double step = nesterov ? d + mu * v : v;  // nesterov: g + mu buf
    EXPECT_NEAR(velocity[0], v, 1e-6);
    EXPECT_NEAR(global[0], 1.0 - lr * step, 1e-6) << nesterov;
  }
}

TEST(DilocoOuterStep, MomentumCarriesThePreviousPseudoGradients) {
  // Two outer steps with the same pseudo-gradient: the second moves further (momentum).
  std::vector<float> global = {1.0f}, velocity = {0.0f};
  const OuterOptimizer outer{0.5, 0.9, false};
  outer_optimizer_step(global, velocity, {0.9f}, outer);  // d = 0.1: moves 0.05
  const float first = 1.0f - global[0];
  const float before = global[0];
  outer_optimizer_step(global, velocity, {before - 0.1f}, outer);  // d = 0.1 again
  EXPECT_NEAR(first, 0.05f, 1e-6);
  EXPECT_NEAR(before - global[0], 0.5f * (0.9f * 0.1f + 0.1f), 1e-6);
}
