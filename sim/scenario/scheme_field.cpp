#include "sim/scenario/scheme_field.hpp"

#include <stdexcept>

#include "sim/core/errors.hpp"
#include "sim/scenario/scheme_types.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

/// The type's declared options: each read as declared, or its declared default (recorded).
void read_scheme_params(JsonObject& sc, const SchemeType& type, Scenario& s) {
  for (const SchemeParam& p : type.params) {
    std::optional<ParamValue> v;
    if (sc.has(p.param.key)) {
      v = read_param(sc, p.param);
    } else {
      v = default_param_value(p.param);
      if (!v) throw std::logic_error("scheme option without a default: " + p.param.key);
      sc.record(p.param.key, p.param.default_value);
    }
    s.scheme.params.set(p.param.key, *v);
    if (p.apply) p.apply(s, *v);
  }
}

}  // namespace

void read_scheme_field(JsonObject& root, const json& raw, Scenario& s) {
  JsonObject sc = root.get_object("scheme");
  s.scheme.type = sc.get_choice("type", scheme_type_names());
  s.scheme.overlap = sc.get_choice("overlap", {"wfbp", "none"});
  s.scheme.fusion_bytes = sc.get_size_bytes("fusion_bytes");
  s.scheme.first_bucket_bytes = sc.get_size_bytes("first_bucket_bytes");
  const SchemeType& type = scheme_type(s.scheme.type);
  if (raw.contains("scheme") && raw["scheme"].is_object())
    for (const auto& [key, _] : raw["scheme"].items()) {
      const SchemeType* owner = scheme_type_with_option(key);
      if (owner == nullptr || type.has_option(key)) continue;
      throw InputError(
          sc.file(), sc.pointer_of(key),
          "only for scheme.type \"" + owner->name + "\", not \"" + s.scheme.type + "\"");
    }
  read_scheme_params(sc, type, s);
  if (type.check_options) type.check_options(sc, s);
  sc.finish();
}

int raw_scheme_extra_hosts(const json& raw) {
  if (!raw.contains("scheme") || !raw["scheme"].is_object()) return 0;
  const json& sch = raw["scheme"];
  if (!sch.contains("type") || !sch["type"].is_string()) return 0;
  try {
    const SchemeType& t = scheme_type(sch["type"].get<std::string>());
    return t.raw_extra_hosts ? t.raw_extra_hosts(sch) : 0;
  } catch (const std::out_of_range&) {
    return 0;  // the scheme section reports the unknown type
  }
}

}  // namespace sgdsim
