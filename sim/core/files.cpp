#include "sim/core/files.hpp"

#include <unistd.h>

#include <sstream>
#include <system_error>

#include "sim/core/errors.hpp"

namespace sgdsim {

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)),
      tmp_path_(path_.string() + ".tmp-" + std::to_string(::getpid())),
      out_(tmp_path_, std::ios::binary | std::ios::trunc) {
  if (!out_) throw std::runtime_error("cannot write " + tmp_path_.string());
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_path_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw std::runtime_error("error writing " + tmp_path_.string());
  out_.close();
  std::filesystem::rename(tmp_path_, path_);
  committed_ = true;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  AtomicFile f(path);
  f.stream() << content;
  f.commit();
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), "", "cannot read file: no such regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sgdsim
