#pragma once
/// Nine-decimal fixed-point text of a double, byte for byte as fmt's "{:.9f}" writes it, in
/// integer arithmetic: iterations.csv writes a few such numbers per row and 10^6 rows per second
/// of a large run, and fmt's general algorithm (the shortest digits, then rounding) was 6 % of
/// an async run's instructions.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <iterator>

namespace sgdsim {

/// Appends "," and `v` as fmt's "{:.9f}" writes it to `out`: the exact binary value rounded to
/// nine decimals, ties to even. Worked out here for 2^-20 <= v < 2^33 (a run's seconds), by
/// fmt for any other value.
inline void append_comma_fixed9(fmt::memory_buffer& out, double v) {
  if (!(v >= 0x1p-20 && v < 0x1p33)) {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE(",{:.9f}"), v);
    return;
  }
  // v = mantissa * 2^-shift with a 53-bit mantissa; in this range 20 <= shift <= 72, so
  // v * 10^9 = mantissa * 10^9 / 2^shift, whose numerator takes at most 83 bits.
  const auto bits = std::bit_cast<uint64_t>(v);
  const uint64_t mantissa = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int shift = 1075 - static_cast<int>(bits >> 52);
  constexpr uint64_t kScale = 1000000000;
  __extension__ typedef unsigned __int128 U128;  // GCC and Clang; not ISO C++
  const U128 scaled = static_cast<U128>(mantissa) * kScale;
  const U128 rest = scaled & ((U128{1} << shift) - 1), half = U128{1} << (shift - 1);
  auto n = static_cast<uint64_t>(scaled >> shift);
  if (rest > half || (rest == half && (n & 1) != 0)) ++n;  // to nearest, ties to even
  const fmt::format_int whole(n / kScale);
  char text[11] = {',', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  out.append(text, text + 1);
  out.append(whole.data(), whole.data() + whole.size());
  text[1] = '.';
  uint64_t fraction = n % kScale;
  for (int i = 10; i >= 2; --i, fraction /= 10) text[i] = static_cast<char>('0' + fraction % 10);
  out.append(text + 1, text + 11);
}

}  // namespace sgdsim
