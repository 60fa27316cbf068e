#include "sim/core/errors.hpp"

namespace sgdsim {

namespace {
std::string compose(const std::string& file, const std::string& pointer, const std::string& msg) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!pointer.empty()) out += pointer + ": ";
  return out + msg;
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& pointer,
                       const std::string& message)
    : std::runtime_error(compose(file, pointer, message)), file_(file), pointer_(pointer) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

}  // namespace sgdsim
