#include "sim/core/det_math.hpp"

#include <cmath>
#include <limits>

namespace sgdsim::detmath {

namespace {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (fdlibm's constants).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;

/// 1/n! for the Taylor series (exact constant folding by the compiler).
constexpr double inv_factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return 1.0 / f;
}

/// e^r for |r| <= ln2/2 + tiny: Taylor series to r^13 (truncation < 1e-17 relative).
double exp_reduced(double r) {
  double p = inv_factorial(13);
  for (int n = 12; n >= 0; --n) p = p * r + inv_factorial(n);
  return p;
}

/// sin and cos of |x| <= pi/4 by Taylor series to x^17 / x^16.
double sin_small(double x) {
  const double z = x * x;
  double p = inv_factorial(17);
  for (int n = 15; n >= 1; n -= 2) p = p * -z + inv_factorial(n);
  return p * x;
}
double cos_small(double x) {
  const double z = x * x;
  double p = inv_factorial(16);
  for (int n = 14; n >= 0; n -= 2) p = p * -z + inv_factorial(n);
  return p;
}
}  // namespace

double exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893383973096) return std::numeric_limits<double>::infinity();
  if (x < -745.13321910194110842) return 0.0;
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  return std::ldexp(exp_reduced(r), static_cast<int>(k));
}

double log(double x) {
  if (std::isnan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1), exact
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  // fdlibm e_log.c: with f = m - 1 and s = f / (2 + f), log(m) = f - hfsq + s (hfsq + R).
  constexpr double kLg[] = {6.666666666666735130e-01, 3.999999999940941908e-01,
                            2.857142874366239149e-01, 2.222219843214978396e-01,
                            1.818357216161805012e-01, 1.531383769920937332e-01,
                            1.479819860511658591e-01};
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s;
  double r = kLg[6];
  for (int i = 5; i >= 0; --i) r = r * z + kLg[i];
  r *= z;
  const double hfsq = 0.5 * f * f;
  const double k = e;
  return k * kLn2Hi - ((hfsq - (s * (hfsq + r) + k * kLn2Lo)) - f);
}

double log1p(double x) {
  if (std::isnan(x) || std::isinf(x)) return x < 0 ? std::numeric_limits<double>::quiet_NaN() : x;
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  // log(u) is exact up to rounding of u; scaling by x / (u - 1) removes that rounding error.
  return log(u) * (x / (u - 1.0));
}

double cos_turns(double u) {
  if (!std::isfinite(u)) return std::numeric_limits<double>::quiet_NaN();
  double t = 4.0 * (u - std::floor(u));  // quarter turns in [0, 4), exact
  double q = std::floor(t);
  t -= q;  // in [0, 1), exact
  if (t > 0.5) {
    t -= 1.0;  // in (-0.5, 0], exact
    q += 1.0;
  }
  const double x = t * 1.57079632679489661923;  // |x| <= pi/4
  switch (static_cast<int>(q) & 3) {
    case 0:
      return cos_small(x);
    case 1:
      return -sin_small(x);
    case 2:
      return -cos_small(x);
    default:
      return sin_small(x);
  }
}

double pow_int(double x, long n) {
  double result = 1.0;
  for (; n > 0; n >>= 1) {
    if (n & 1) result *= x;
    x *= x;
  }
  return result;
}

}  // namespace sgdsim::detmath
