// `sgdsim schema`: the scenario format as a JSON Schema, or the field tables of docs/fields.md.
#include <iostream>

#include "sim/app/cli.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/fields.hpp"
#include "sim/trace/importer.hpp"

namespace sgdsim {

namespace {
constexpr const char* kSchemaHelpHead =
    R"(usage: sgdsim schema [--markdown TABLE]

Prints the JSON Schema (draft 2020-12) of a scenario file, made from the declarations of
every field (sim/scenario/fields.cpp and the options each scheme and collective declares in
its own file): editors use it for completion and checking, e.g. with "$schema" or a settings
entry mapping *.json scenarios to it. sgdsim
itself checks more than the schema can (units, ranges that depend on other fields).

)";

const std::vector<OptionSpec> kSchemaOptions = {
    {"--markdown", "TABLE",
     "print a field table of docs/fields.md instead: \"scenario\" or \"training\",\n"
     "or \"importers\" (the options each measured format declares: the flags\n"
     "of `sgdsim trace`, the source keys of `sgdsim validate` cases)"},
};

int cmd_schema(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kSchemaHelpHead << options_help(kSchemaOptions, 21), 0;
  Args a = parse_args(argv, kSchemaOptions);
  if (!a.positional.empty())
    throw InputError("usage: sgdsim schema takes no positional argument (see --help)");
  if (auto table = a.get("--markdown")) {
    if (*table == "importers") return std::cout << import_options_markdown(), 0;
    if (*table != "scenario" && *table != "training")
      throw InputError(
          "usage: --markdown: expected scenario or training (scenario fields) or "
          "importers, got \"" +
          *table + "\"");
    std::cout << field_table_markdown(*table);
    return 0;
  }
  std::cout << scenario_schema().dump(2) << "\n";
  return 0;
}

const RegisterSubcommand kSchema(
    {"schema", "schema", "print the scenario format as a JSON Schema (or a README field table)",
     100, cmd_schema});

}  // namespace

}  // namespace sgdsim
