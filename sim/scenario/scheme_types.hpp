#pragma once
/// The scheme types a scenario accepts: each registered scheme (sim/schemes) tells the scenario
/// layer its options, so parse_scenario never names a scheme.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario/fields.hpp"

namespace sgdsim {

class JsonObject;
struct Scenario;

/// One option a scheme declares: its parameter and the SchemeSpec field it fills, if any.
struct SchemeParam {
  Param param{};  ///< key (of the `scheme` object), type, default, range and documentation
  /// Stores a value in a typed field of the scenario's SchemeSpec (null: the value is only in
  /// SchemeSpec::params).
  std::function<void(Scenario&, const ParamValue&)> apply = nullptr;
};

/// What the scenario layer asks of a scheme type.
struct SchemeType {
  std::string name;  ///< scheme.type
  /// Its own keys of the `scheme` object (beyond type, overlap and fusion_bytes), declared once:
  /// the scenario parser reads each with the getter of its type (its default from the defaults
  /// table, recorded in the resolved scenario) into SchemeSpec::params, and `sgdsim schema` and
  /// docs/fields.md list them ("/scheme/KEY", once when several types declare it); a key of
  /// another type is an error naming the types that declare it.
  std::vector<SchemeParam> params;
  /// Whether `key` of the `scheme` object is one of its options.
  bool has_option(const std::string& key) const;
  /// Checks of its options beyond their declarations (against workers and platform), after they
  /// are read; null: none.
  std::function<void(JsonObject& scheme, Scenario& scenario)> check_options;
  /// Hosts of their own it needs beyond the workers', from the raw `scheme` object before it is
  /// validated (a generated platform is sized for them); null: none.
  std::function<int(const nlohmann::json& scheme)> raw_extra_hosts;
  /// More option declarations, made on first use after static initialization (declarations
  /// that list another registry's names, such as pseudo_sync's predictors); null: none.
  std::function<std::vector<SchemeParam>()> late_params = nullptr;
  /// Whether `scheme.compression` applies: its gradients are averaged by bucketed collectives
  /// that a compressor's messages may replace (the sync family).
  bool compressible = false;
};

/// The registered scheme types that accept `scheme.compression`, sorted.
std::vector<std::string> compressible_scheme_names();

/// Registers a scheme type; a second registration of a name throws std::logic_error.
void register_scheme_type(SchemeType type);
/// The scheme type `name`; throws std::out_of_range if none is registered.
const SchemeType& scheme_type(const std::string& name);
/// Registered scheme types, sorted.
std::vector<std::string> scheme_type_names();
/// The names of every scheme type that declares the option `key`, in name order.
std::vector<std::string> scheme_types_with_option(const std::string& key);

}  // namespace sgdsim
