#pragma once
/// Scenario fields declared once: `sgdsim schema` (a JSON Schema for editors) and the field
/// tables of docs/fields.md are made from these declarations (and from the parameters the
/// registered components declare, sim/core/param.hpp), the defaults from scenario_defaults(), and
/// tests check that the parser reads exactly what is declared (FieldDecls.*, Repo.Schema*).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/param.hpp"

namespace sgdsim {

/// One scenario field.
struct FieldDecl {
  std::string pointer;       ///< JSON pointer, e.g. "/collective/algorithm"
  nlohmann::json schema;     ///< its JSON Schema (type, enum, pattern, bounds)
  std::string default_text;  ///< the default as docs/fields.md shows it ("`\"ring\"`", "required")
  std::string doc;           ///< what it means (docs/fields.md's "meaning" column)
  std::string table;  ///< docs/fields.md table that lists it ("scenario", "training"; "" = none)
};

/// JSON Schema fragments for field declarations; quantities with units are strings.
namespace field_schema {
/// A string (non-empty unless `allow_empty`).
nlohmann::json text(bool allow_empty = false);
/// An integer in [min, max].
nlohmann::json integer(int64_t min, int64_t max = INT64_MAX);
/// A number in [min, max].
nlohmann::json number(double min, double max = 1e300);
/// A number > 0.
nlohmann::json positive();
/// The number 0 ("not modelled").
nlohmann::json zero();
/// true or false.
nlohmann::json boolean();
/// One of `choices`.
nlohmann::json choice(const std::vector<std::string>& choices);
/// A size: "25MB", "64KiB" or a byte count.
nlohmann::json size();
/// A time: "1.5us", "2ms".
nlohmann::json time();
/// A bandwidth: "25Gbps" (bits/s) or "12GBps" (bytes/s).
nlohmann::json bandwidth();
/// A speed: "15Tf" (FLOP/s).
nlohmann::json speed();
/// An array of integers.
nlohmann::json integer_list();
/// An array of strings.
nlohmann::json string_list();
/// An object whose keys are declared fields below it.
nlohmann::json object();
/// Any object (an inline profile).
nlohmann::json open_object();
/// Any one of `schemas`.
nlohmann::json one_of(const std::vector<nlohmann::json>& schemas);
}  // namespace field_schema

/// The field declaration of a component's parameter in `section` ("/collective/"), listed in
/// the table `table` of docs/fields.md.
FieldDecl param_field(const Param& param, const std::string& section,
                      const std::string& table = "scenario");

/// Every scenario field, the registered schemes' and collectives' options included, in the
/// order of docs/fields.md.
std::vector<FieldDecl> scenario_fields();
/// The JSON Schema (draft 2020-12) of a scenario file, from scenario_fields() and the defaults.
nlohmann::json scenario_schema();
/// The docs/fields.md table `table` ("scenario" or "training"): | field | default | meaning |.
std::string field_table_markdown(const std::string& table);

}  // namespace sgdsim
