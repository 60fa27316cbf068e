#include "sim/core/files.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <sstream>
#include <system_error>

#include "sim/core/errors.hpp"

namespace sgdsim {

namespace {

// Temporary files open right now, in fixed storage a signal handler may read.
constexpr int kMaxOpen = 64;
constexpr size_t kMaxPath = 4096;
char g_open[kMaxOpen][kMaxPath];
volatile std::sig_atomic_t g_used[kMaxOpen];

int register_open(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kMaxOpen; ++i)
    if (!g_used[i]) {
      std::memcpy(g_open[i], path.c_str(), path.size() + 1);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the path before the flag
      g_used[i] = 1;
      return i;
    }
  return -1;
}

void unregister_open(int slot) {
  if (slot >= 0) g_used[slot] = 0;
}

extern "C" void remove_open_files(int sig) {
  remove_temporary_files();
  ::_exit(128 + sig);
}

}  // namespace

void remove_temporary_files() noexcept {
  for (int i = 0; i < kMaxOpen; ++i)
    if (g_used[i]) ::unlink(g_open[i]);
}

void install_interrupt_cleanup() {
  std::signal(SIGINT, remove_open_files);
  std::signal(SIGTERM, remove_open_files);
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), tmp_path_(path_.string() + ".tmp-" + std::to_string(::getpid())) {
  // Registered before the file exists: a signal in between cannot leave it behind.
  slot_ = register_open(tmp_path_.string());
  out_.open(tmp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    unregister_open(slot_);
    throw std::runtime_error("cannot write " + tmp_path_.string());
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_path_, ec);
  }
  unregister_open(slot_);
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw std::runtime_error("error writing " + tmp_path_.string());
  out_.close();
  std::filesystem::rename(tmp_path_, path_);
  committed_ = true;
  unregister_open(slot_);
  slot_ = -1;
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
