#pragma once
/// Model profiles: per-layer compute (measured ms at a batch size, or FLOPs per sample) and
/// parameter counts, in forward order (format: models/profiles/README.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sgdsim {

/// One layer of a profile.
struct ProfileLayer {
  std::string name;           ///< layer name
  int64_t parameters = 0;     ///< trainable parameters
  double forward_s = 0;       ///< measured forward time at the profile's batch size (measured)
  double backward_s = 0;      ///< measured backward time at the profile's batch size (measured)
  double forward_flops = 0;   ///< forward FLOPs per sample (flops)
  double backward_flops = 0;  ///< backward FLOPs per sample (flops)
};

/// A model profile.
struct Profile {
  std::string name;                  ///< model name
  std::string source;                ///< where the numbers come from
  bool measured = false;             ///< true: times at `batch_size`; false: FLOPs per sample
  int batch_size = 0;                ///< batch size of the measured times
  int bytes_per_parameter = 4;       ///< gradient bytes per parameter
  std::vector<ProfileLayer> layers;  ///< layers in forward order
  /// Total trainable parameters.
  int64_t total_parameters() const;
};

/// Validates a profile given as JSON (`file` and `pointer` locate it in messages).
Profile parse_profile(const nlohmann::json& j, const std::string& file, const std::string& pointer);
/// Reads and validates a profile file.
Profile load_profile(const std::string& path);

}  // namespace sgdsim
