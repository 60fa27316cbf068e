// The protocol-buffers wire format (protobuf.dev/programming-guides/encoding): a message is a
// sequence of (tag = number << 3 | wire type, value) pairs; varints are little-endian base-128.
#include "sim/workload/protobuf_wire.hpp"

#include <fmt/format.h>

#include <cstring>

#include "sim/core/errors.hpp"

namespace sgdsim::pbwire {

Reader::Reader(std::string_view data, std::string file, uint64_t base_offset)
    : data_(data), file_(std::move(file)), base_(base_offset) {}

void Reader::fail(const std::string& what, const std::string& expected) const {
  throw InputError(file_, fmt::format("byte {}", offset()), what + ": expected " + expected);
}

uint64_t Reader::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size())
      fail("truncated varint", "more bytes (the last byte has bit 7 clear)");
    const auto b = static_cast<uint8_t>(data_[pos_++]);
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && b > 1) fail("varint longer than 64 bits", "at most 10 bytes");
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  fail("varint longer than 64 bits", "at most 10 bytes");
}

std::string_view Reader::take(uint64_t n, const char* what) {
  if (n > data_.size() - pos_)
    fail(fmt::format("truncated {} ({} bytes announced, {} left)", what, n, data_.size() - pos_),
         "a complete field");
  std::string_view s = data_.substr(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return s;
}

Field Reader::next() {
  const uint64_t tag = varint();
  Field f;
  const uint64_t number = tag >> 3;
  if (number == 0 || number > 536870911)
    fail(fmt::format("field number {}", number), "a field number in [1, 2^29 - 1]");
  f.number = static_cast<uint32_t>(number);
  const auto type = static_cast<uint8_t>(tag & 7);
  f.offset = offset();
  switch (type) {
    case 0:
      f.type = WireType::varint;
      f.value = varint();
      break;
    case 1: {
      f.type = WireType::fixed64;
      std::string_view b = take(8, "fixed64 field");
      for (int i = 7; i >= 0; --i) f.value = (f.value << 8) | static_cast<uint8_t>(b[i]);
      break;
    }
    case 2: {
      f.type = WireType::length;
      const uint64_t n = varint();
      f.offset = offset();
      f.bytes = take(n, "length-delimited field");
      break;
    }
    case 5: {
      f.type = WireType::fixed32;
      std::string_view b = take(4, "fixed32 field");
      for (int i = 3; i >= 0; --i) f.value = (f.value << 8) | static_cast<uint8_t>(b[i]);
      break;
    }
    default:
      fail(fmt::format("wire type {} of field {}", type, number),
           "0 (varint), 1 (64-bit), 2 (length-delimited) or 5 (32-bit)");
  }
  return f;
}

void append_repeated_varints(const Field& f, const std::string& file, std::vector<uint64_t>& out) {
  if (f.type == WireType::varint) {
    out.push_back(f.value);
    return;
  }
  if (f.type != WireType::length)
    throw InputError(file, fmt::format("byte {}", f.offset),
                     fmt::format("field {}: expected varints (packed or not)", f.number));
  Reader r(f.bytes, file, f.offset);
  while (r.more()) out.push_back(r.varint());
}

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void Writer::tag(uint32_t number, WireType type) {
  append_varint(out_, (static_cast<uint64_t>(number) << 3) | static_cast<uint8_t>(type));
}

void Writer::varint(uint32_t number, uint64_t value, bool skip_default) {
  if (skip_default && value == 0) return;
  tag(number, WireType::varint);
  append_varint(out_, value);
}

void Writer::double_field(uint32_t number, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  tag(number, WireType::fixed64);
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void Writer::bytes(uint32_t number, std::string_view payload, bool skip_default) {
  if (skip_default && payload.empty()) return;
  tag(number, WireType::length);
  append_varint(out_, payload.size());
  out_.append(payload);
}

void Writer::packed(uint32_t number, const std::vector<uint64_t>& values) {
  if (values.empty()) return;
  std::string payload;
  for (uint64_t v : values) append_varint(payload, v);
  bytes(number, payload);
}

}  // namespace sgdsim::pbwire
