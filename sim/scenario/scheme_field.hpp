#pragma once
/// The scenario's `scheme` section: the keys every scheme type reads, then the options the
/// chosen type declares (SchemeType::params).
#include <nlohmann/json.hpp>

#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace sgdsim {

/// Reads `scheme` into `s.scheme`: the common keys, then the type's own options, each as
/// declared or its declared default (recorded); a key of another type is an error naming that
/// type. `raw` is the whole input scenario.
void read_scheme_field(JsonObject& root, const nlohmann::json& raw, Scenario& s);

/// Hosts the scheme's servers need beyond the workers', from the raw input before the platform
/// is read (its type decides; 0 when the section is malformed: reading it says why).
int raw_scheme_extra_hosts(const nlohmann::json& raw);

}  // namespace sgdsim
