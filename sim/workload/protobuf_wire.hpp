#pragma once
/// A small protocol-buffers wire-format codec (varints, fixed 32/64-bit and length-delimited
/// fields, and the varint-length-prefixed message streams Chakra ET files use), written from the
/// public encoding description (protobuf.dev/programming-guides/encoding) so reading Chakra
/// files needs no protobuf package. Leaves out groups (wire types 3 and 4, deprecated): they
/// are rejected as malformed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sgdsim::pbwire {

/// Wire types of the encoding.
enum class WireType : uint8_t { varint = 0, fixed64 = 1, length = 2, fixed32 = 5 };

/// One field of a message: its number, wire type and value (payload for length-delimited).
struct Field {
  uint32_t number = 0;     ///< field number (>= 1)
  WireType type{};         ///< wire type
  uint64_t value = 0;      ///< varint or fixed value
  std::string_view bytes;  ///< payload of a length-delimited field (points into the input)
  uint64_t offset = 0;     ///< file offset of the value (of the payload when length-delimited)
};

/// Reads the fields of one message in order; malformed input throws InputError naming `file`,
/// the byte offset from the start of the file and what was expected.
class Reader {
 public:
  /// Reads `data`, which starts at byte `base_offset` of `file`.
  Reader(std::string_view data, std::string file, uint64_t base_offset = 0);
  /// True while fields remain.
  bool more() const { return pos_ < data_.size(); }
  /// The next field; throws InputError on a truncated or invalid one.
  Field next();
  /// A varint at the current position (used for stream length prefixes).
  uint64_t varint();
  /// `n` bytes at the current position.
  std::string_view take(uint64_t n, const char* what);
  /// Byte offset in the file of the current position.
  uint64_t offset() const { return base_ + pos_; }
  /// The file being read.
  const std::string& file() const { return file_; }
  /// Throws InputError at the current offset: "<what>: expected <expected>".
  [[noreturn]] void fail(const std::string& what, const std::string& expected) const;

 private:
  std::string_view data_;
  std::string file_;
  uint64_t base_ = 0;
  size_t pos_ = 0;
};

/// Appends the elements of a repeated varint field to `out`: a packed payload (wire type 2) or
/// one unpacked element; throws InputError naming `file` for other wire types or bad payloads.
void append_repeated_varints(const Field& field, const std::string& file,
                             std::vector<uint64_t>& out);

/// Zig-zag decoding of sint32/sint64 values.
inline int64_t zigzag_decode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}
/// Zig-zag encoding of sint32/sint64 values.
inline uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

/// Appends fields of one message to a byte string.
class Writer {
 public:
  /// Appends a varint field (omitted when `skip_default` and `value` is 0, as proto3 does).
  void varint(uint32_t number, uint64_t value, bool skip_default = true);
  /// Appends a fixed64 field holding a double.
  void double_field(uint32_t number, double value);
  /// Appends a length-delimited field (omitted when empty and `skip_default`).
  void bytes(uint32_t number, std::string_view payload, bool skip_default = true);
  /// Appends a packed repeated varint field (omitted when empty).
  void packed(uint32_t number, const std::vector<uint64_t>& values);
  /// The encoded message.
  const std::string& data() const { return out_; }

 private:
  void tag(uint32_t number, WireType type);
  std::string out_;
};

/// Appends `value` as a varint to `out`.
void append_varint(std::string& out, uint64_t value);

}  // namespace sgdsim::pbwire
