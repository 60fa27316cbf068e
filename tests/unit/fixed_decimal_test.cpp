// append_comma_fixed9 writes iterations.csv's seconds: it must give fmt's "{:.9f}" byte for byte.
#include "sim/report/fixed_decimal.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

using sgdsim::append_comma_fixed9;

namespace {

/// What append_comma_fixed9 writes for `v`.
std::string fixed9(double v) {
  fmt::memory_buffer out;
  append_comma_fixed9(out, v);
  return {out.data(), out.size()};
}

/// What fmt writes for `v`.
std::string fmt_fixed9(double v) {
  return fmt::format(FMT_COMPILE(",{:.9f}"), v);
}

}  // namespace

TEST(FixedDecimal, EqualsFmtAtTheEdgesTiesAndOutsideItsRange) {
  for (double v : {0x1p-20, std::nextafter(0x1p-20, 0.0), std::nextafter(0x1p33, 0.0), 0x1p33,
                   0x1p-10, 3 * 0x1p-10, 5 * 0x1p-10, 1 + 0x1p-10, 0.0, -0.0, -1.5, 1e-9, 5e-10,
                   0.999999999, 0.9999999995, 1e300, 14.231502700110173, 123456.0000000005})
    EXPECT_EQ(fixed9(v), fmt_fixed9(v)) << v;
  // Exact ties (x.xxxxxxxxx5 in binary) go to the even last digit, as fmt rounds them.
  EXPECT_EQ(fixed9(0x1p-10), ",0.000976562");
  EXPECT_EQ(fixed9(3 * 0x1p-10), ",0.002929688");
}

TEST(FixedDecimal, EqualsFmtOnSeededRandomValues) {
  std::mt19937_64 rng(20261207);
  for (int i = 0; i < 50000; ++i) {
    // any bit pattern; a mantissa at a random scale; near a nanosecond grid; odd multiples of
    // powers of two (ties at the tenth decimal among them)
    const double any = std::fabs(std::bit_cast<double>(rng()));
    const double scaled = std::ldexp(static_cast<double>(rng() >> 11), -53) *
                          std::ldexp(1.0, static_cast<int>(rng() % 60) - 25);
    const double grid = static_cast<double>(rng() % 100000000000ULL) * 1e-9;
    const double odd = static_cast<double>(2 * (rng() % (uint64_t{1} << 40)) + 1) *
                       std::ldexp(1.0, -static_cast<int>(10 + rng() % 40));
    // Above 2^40 both sides are fmt's text (the range ends at 2^33), and fmt's text of a huge
    // double is slow under the sanitizers: one in 500 of those is enough.
    for (double v : {any, scaled, grid, std::nextafter(grid, 0.0), std::nextafter(grid, 1e30), odd})
      if (std::isfinite(v) && (v < 0x1p40 || i % 500 == 0)) {
        ASSERT_EQ(fixed9(v), fmt_fixed9(v)) << v;
      }
  }
}

TEST(FixedDecimal, WriteInPlaceEqualsAppendAndRefusesOutsideItsRange) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::ldexp(static_cast<double>(rng() >> 11), -53) *
                     std::ldexp(1.0, static_cast<int>(rng() % 56) - 21);
    char text[sgdsim::kFixed9MaxChars];
    const char* end = sgdsim::write_comma_fixed9(text, v);
    if (v >= 0x1p-20 && v < 0x1p33) {
      ASSERT_NE(end, nullptr) << v;
      ASSERT_LE(end - text, 21);
      ASSERT_EQ(std::string(static_cast<const char*>(text), end), fmt_fixed9(v)) << v;
    } else {
      ASSERT_EQ(end, nullptr) << v;
    }
  }
  // The longest: ten digits before the point.
  char text[sgdsim::kFixed9MaxChars];
  const double largest = std::nextafter(0x1p33, 0.0);
  const char* end = sgdsim::write_comma_fixed9(text, largest);
  EXPECT_EQ(std::string(static_cast<const char*>(text), end), fmt_fixed9(largest));
}

TEST(FixedDecimal, FormatAnyValueFitsItsRoomAndEqualsFmt) {
  // The longest text of any double (the most negative one), and the others fmt writes (zero,
  // negatives, infinities, NaN, from 2^33 on, below 2^-20).
  using limits = std::numeric_limits<double>;
  for (double v :
       {-limits::max(), limits::max(), 0.0, -1.5, 1e10, 0x1p33, 1e-30, limits::infinity(),
        -limits::infinity(), limits::quiet_NaN(), 14.231502700110173}) {
    char text[sgdsim::kFixed9MaxChars];
    const char* end = sgdsim::format_comma_fixed9(text, v);
    ASSERT_LE(end - text, static_cast<std::ptrdiff_t>(sgdsim::kFixed9MaxChars)) << v;
    EXPECT_EQ(std::string(static_cast<const char*>(text), end), fmt_fixed9(v)) << v;
  }
  EXPECT_EQ(fmt_fixed9(-limits::max()).size(), sgdsim::kFixed9MaxChars);
}
