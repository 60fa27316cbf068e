#pragma once
/// Error types shared by every layer; only `main` maps them to exit codes.
#include <stdexcept>
#include <string>

namespace sgdsim {

/// Bad user input: names the file, the JSON pointer, the bad value and what was expected.
class InputError : public std::runtime_error {
 public:
  /// Builds "file: pointer: message" (empty parts are left out).
  InputError(const std::string& file, const std::string& pointer, const std::string& message);
  /// A message that already names its source.
  explicit InputError(const std::string& message);
  /// The file the error is about (may be empty).
  const std::string& file() const { return file_; }
  /// The JSON pointer the error is about (may be empty).
  const std::string& pointer() const { return pointer_; }

 private:
  std::string file_;
  std::string pointer_;
};

}  // namespace sgdsim
