#pragma once
/// Reading measured files that may be gzip-compressed: a streaming buffer for large traces and
/// whole-file reads for small logs (zlib; a plain file passes through unchanged).
#include <cstddef>
#include <streambuf>
#include <string>
#include <vector>

struct gzFile_s;

namespace sgdsim {

/// A read-only stream buffer over a file, gunzipped on the fly when it is gzip-compressed.
/// Read errors (corrupt or truncated gzip data, too much unpacked data) throw InputError
/// naming the file.
class MaybeGzipBuffer : public std::streambuf {
 public:
  /// Opens `path`; throws InputError if it is missing or unreadable.
  explicit MaybeGzipBuffer(std::string path, size_t chunk_bytes = 1 << 18);
  ~MaybeGzipBuffer() override;
  MaybeGzipBuffer(const MaybeGzipBuffer&) = delete;
  MaybeGzipBuffer& operator=(const MaybeGzipBuffer&) = delete;
  /// True if the file starts with the gzip magic bytes.
  bool gzipped() const { return gzipped_; }
  /// The file being read.
  const std::string& path() const { return path_; }
  /// Uncompressed bytes handed out so far.
  size_t bytes_read() const { return bytes_read_; }

 protected:
  int_type underflow() override;

 private:
  /// Throws InputError when the data unpacked so far passes limits::kMaxDecompressedBytes or
  /// limits::kMaxGzipRatio (a decompression bomb).
  void check_expansion() const;
  std::string path_;
  gzFile_s* gz_ = nullptr;
  std::vector<char> buffer_;
  bool gzipped_ = false;
  size_t bytes_read_ = 0;
};

/// Reads a whole text file, gunzipping it if needed; throws InputError naming the file.
std::string read_text_maybe_gzip(const std::string& path);

/// The first `max_bytes` (or fewer) uncompressed bytes of a file, for format detection.
std::string peek_text_maybe_gzip(const std::string& path, size_t max_bytes);

}  // namespace sgdsim
