#pragma once
/// Nine-decimal fixed-point text of a double, byte for byte as fmt's "{:.9f}" writes it, in
/// integer arithmetic: iterations.csv writes a few such numbers per row and 10^6 rows per second
/// of a large run, and fmt's general algorithm (the shortest digits, then rounding) was 6 % of
/// an async run's instructions.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace sgdsim {

/// Longest text format_comma_fixed9 writes: ",-", the 309 digits of the largest double, ".",
/// nine digits (write_comma_fixed9 writes at most 21: ten digits before the point).
constexpr size_t kFixed9MaxChars = 321;

/// Writes "," and `v` as fmt's "{:.9f}" writes it at `out` (room for 21 chars) and returns the
/// end, for 2^-20 <= v < 2^33 (a run's seconds): the exact binary value rounded to nine
/// decimals, ties to even. Returns null for any other value (format_comma_fixed9 has fmt write
/// those).
inline char* write_comma_fixed9(char* out, double v) {
  if (!(v >= 0x1p-20 && v < 0x1p33)) return nullptr;
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
  *out++ = ',';
  out = std::copy(whole.data(), whole.data() + whole.size(), out);
  *out++ = '.';
  // Nine digits, two at a time from the right.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  auto fraction = static_cast<uint32_t>(n % kScale);
  for (int i = 7; i >= 1; i -= 2, fraction /= 100) {
    out[i] = kPairs[2 * (fraction % 100)];
    out[i + 1] = kPairs[2 * (fraction % 100) + 1];
  }
  out[0] = static_cast<char>('0' + fraction);
  return out + 9;
}

/// Writes "," and `v` as fmt's "{:.9f}" writes it at `out` (room for kFixed9MaxChars), for any
/// value; returns the end.
inline char* format_comma_fixed9(char* out, double v) {
  if (char* end = write_comma_fixed9(out, v)) return end;
  return fmt::format_to(out, FMT_COMPILE(",{:.9f}"), v);
}

/// Appends "," and `v` as fmt's "{:.9f}" writes it to `out`, for any value.
inline void append_comma_fixed9(fmt::memory_buffer& out, double v) {
  char text[kFixed9MaxChars];
  out.append(text, format_comma_fixed9(text, v));
}

}  // namespace sgdsim
