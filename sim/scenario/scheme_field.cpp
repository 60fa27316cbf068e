#include "sim/scenario/scheme_field.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/learn/compressor.hpp"
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

/// `scheme.compression`: a registered compressor (or "none") and its declared options, each read
/// as declared or its default recorded; an option of another compressor is refused naming it.
void read_compression(JsonObject& sc, const SchemeType& type, Scenario& s) {
  if (!sc.has("compression")) return;
  if (!type.compressible) {
    std::string names;
    for (const std::string& n : compressible_scheme_names())
      names += (names.empty() ? "\"" : ", \"") + n + "\"";
    throw InputError(sc.file(), sc.pointer_of("compression"),
                     "only for a scheme.type that averages gradients by allreduce (" + names +
                         "), not \"" + s.scheme.type + "\"");
  }
  JsonObject c = sc.get_object("compression");
  std::vector<std::string> types = {"none"};
  for (const std::string& n : learn::compressor_names()) types.push_back(n);
  s.scheme.compression.type = c.get_choice("type", types);
  const learn::CompressorKind* kind = s.scheme.compressor();
  for (const learn::DeclaredCompressorParam& d : learn::compressor_params()) {
    const bool own =
        kind != nullptr && std::find(d.owners.begin(), d.owners.end(), kind->id) != d.owners.end();
    if (own || !c.has(d.param.key)) continue;
    std::string owners;
    for (const std::string& o : d.owners) owners += (owners.empty() ? "\"" : ", \"") + o + "\"";
    throw InputError(c.file(), c.pointer_of(d.param.key),
                     "only for scheme.compression.type " + owners + ", not \"" +
                         s.scheme.compression.type + "\"");
  }
  for (const Param& p : kind != nullptr ? kind->params : std::vector<Param>{}) {
    std::optional<ParamValue> v;
    if (c.has(p.key)) {
      v = read_param(c, p);
    } else {
      v = default_param_value(p);
      if (!v) throw std::logic_error("compressor option without a default: " + p.key);
      c.record(p.key, p.default_value);
    }
    s.scheme.compression.values.set(p.key, *v);
  }
  c.finish();
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
      const std::vector<std::string> owner_names = scheme_types_with_option(key);
      if (owner_names.empty() || type.has_option(key)) continue;
      std::string owners;
      for (const std::string& o : owner_names)
        owners += (owners.empty() ? "\"" : ", \"") + o + "\"";
      throw InputError(sc.file(), sc.pointer_of(key),
                       "only for scheme.type " + owners + ", not \"" + s.scheme.type + "\"");
    }
  read_scheme_params(sc, type, s);
  read_compression(sc, type, s);
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
