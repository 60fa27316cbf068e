// Gzip-transparent file input. zlib's gzread passes files without the gzip header through
// unchanged, so one code path serves both; errors are turned into InputErrors naming the file.
#include "sim/trace/input_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

namespace sgdsim {

namespace {

bool has_gzip_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::string gz_message(gzFile_s* gz) {
  int code = Z_OK;
  const char* msg = gzerror(gz, &code);
  return msg != nullptr && *msg != '\0' ? msg : "read error";
}

}  // namespace

MaybeGzipBuffer::MaybeGzipBuffer(std::string path, size_t chunk_bytes)
    : path_(std::move(path)), buffer_(chunk_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec))
    throw InputError(path_, "", "cannot read file: no such regular file");
  gzipped_ = has_gzip_magic(path_);
  gz_ = gzopen(path_.c_str(), "rb");
  if (gz_ == nullptr) throw InputError(path_, "", "cannot open file for reading");
  gzbuffer(gz_, static_cast<unsigned>(chunk_bytes));
}

MaybeGzipBuffer::~MaybeGzipBuffer() {
  if (gz_ != nullptr) gzclose(gz_);
}

MaybeGzipBuffer::int_type MaybeGzipBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const int n = gzread(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (n < 0)
    throw InputError(path_, "",
                     "corrupt gzip data (" + gz_message(gz_) + "): expected a gzip-compressed " +
                         "or plain text file");
  if (n == 0) {
    int code = Z_OK;
    gzerror(gz_, &code);
    if (code != Z_OK)
      throw InputError(path_, "",
                       "truncated gzip data (" + gz_message(gz_) +
                           "): expected a complete gzip-compressed file");
    return traits_type::eof();
  }
  bytes_read_ += static_cast<size_t>(n);
  if (gzipped_) check_expansion();
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  return traits_type::to_int_type(*gptr());
}

void MaybeGzipBuffer::check_expansion() const {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  if (bytes_read_ > limits::kMaxDecompressedBytes)
    throw InputError(path_, "",
                     fmt::format("gzip data unpacks to more than {:.0f} GiB (the limit on "
                                 "decompressed bytes): expected a smaller file",
                                 static_cast<double>(limits::kMaxDecompressedBytes) / kGiB));
  const z_off_t packed = gzoffset(gz_);
  if (bytes_read_ > limits::kGzipRatioAfterBytes && packed > 0 &&
      static_cast<double>(bytes_read_) > limits::kMaxGzipRatio * static_cast<double>(packed))
    throw InputError(
        path_, "",
        fmt::format("gzip data unpacks more than {:.0f} times ({} bytes from {}; the limit on the "
                    "gzip ratio, past which a file is taken for a decompression bomb): expected "
                    "a gzip-compressed trace or log",
                    limits::kMaxGzipRatio, bytes_read_, packed));
}

std::string read_text_maybe_gzip(const std::string& path) {
  MaybeGzipBuffer buf(path);
  std::string out;
  char tmp[1 << 16];
  for (;;) {
    std::streamsize n = buf.sgetn(tmp, sizeof tmp);
    if (n <= 0) break;
    out.append(tmp, static_cast<size_t>(n));
  }
  return out;
}

std::string peek_text_maybe_gzip(const std::string& path, size_t max_bytes) {
  MaybeGzipBuffer buf(path, 1 << 16);
  std::string out(max_bytes, '\0');
  std::streamsize n = buf.sgetn(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

}  // namespace sgdsim
