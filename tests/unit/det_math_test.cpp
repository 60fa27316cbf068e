// sim/core/det_math: the libm-free elementary functions agree with glibc to a few ulp over
// their ranges and handle the special values; Rng::normal is Box-Muller through them.
#include "sim/core/det_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sim/core/rng.hpp"

namespace sgdsim {
namespace {

/// Distance in units in the last place between two finite doubles of the same sign.
double ulps(double a, double b) {
  if (a == b) return 0;
  return std::fabs(a - b) / std::fabs(std::nextafter(a, b) - a);
}

TEST(DetMath, ExpWithinTwoUlpOfLibm) {
  Rng rng(1);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = -740 + 1449 * rng.uniform();
    worst = std::max(worst, ulps(detmath::exp(x), std::exp(x)));
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(detmath::exp(0.0), 1.0);
  EXPECT_EQ(detmath::exp(800.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(detmath::exp(-800.0), 0.0);
  EXPECT_TRUE(std::isnan(detmath::exp(std::nan(""))));
}

TEST(DetMath, LogWithinTwoUlpOfLibm) {
  Rng rng(2);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(0.5 + rng.uniform(), static_cast<int>(rng.uniform() * 2000) - 1000);
    worst = std::max(worst, ulps(detmath::log(x), std::log(x)));
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(detmath::log(1.0), 0.0);
  EXPECT_EQ(detmath::log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(detmath::log(-1.0)));
  EXPECT_NEAR(detmath::log(1e-300), std::log(1e-300), 1e-13);  // Box-Muller's floor
}

TEST(DetMath, Log1pAccurateForSmallArguments) {
  for (double x : {1e-18, 1e-10, 1e-4, 0.01, 0.25, 1.0, 3.0, 1e6}) {
    EXPECT_LE(ulps(detmath::log1p(x), std::log1p(x)), 4.0) << x;
  }
  EXPECT_EQ(detmath::log1p(0.0), 0.0);
}

TEST(DetMath, CosTurnsEqualsCosOfTwoPiU) {
  Rng rng(3);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = rng.uniform();
    worst = std::max(worst, std::fabs(detmath::cos_turns(u) - std::cos(2 * M_PI * u)));
  }
  EXPECT_LE(worst, 1e-15);  // abs: libm's own argument 2 pi u is rounded
  EXPECT_EQ(detmath::cos_turns(0.0), 1.0);
  EXPECT_EQ(detmath::cos_turns(0.5), -1.0);
  EXPECT_EQ(detmath::cos_turns(0.25), -0.0);
}

TEST(DetMath, PowIntIsRepeatedMultiplication) {
  EXPECT_EQ(detmath::pow_int(0.1, 0), 1.0);
  EXPECT_EQ(detmath::pow_int(0.5, 10), std::ldexp(1.0, -10));
  EXPECT_EQ(detmath::pow_int(3.0, 5), 243.0);
  EXPECT_NEAR(detmath::pow_int(0.1, 3), 1e-3, 1e-18);
}

TEST(DetMath, NormalDeviatesAreBoxMuller) {
  Rng rng(42);
  const double a = rng.normal(), b = rng.normal();
  Rng again(42);
  EXPECT_EQ(a, again.normal());
  EXPECT_EQ(b, again.normal());
  EXPECT_NEAR(
      a,
      std::sqrt(-2 * std::log(std::max(1e-300, Rng(42).uniform()))) * std::cos(2 * M_PI *
                                                                               [] {
                                                                                 Rng r(42);
                                                                                 r.uniform();
                                                                                 return r.uniform();
                                                                               }()),
      1e-14);
}

}  // namespace
}  // namespace sgdsim
