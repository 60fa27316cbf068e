// `sgdsim profiles`: the model profiles that ship in <data dir>/models/profiles.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/cli.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kProfilesHelpHead =
    R"(usage: sgdsim profiles [--json]

Lists the model profiles that ship in <data dir>/models/profiles (the names a scenario's
"model" or --set model=NAME accepts): name, kind (measured at a batch size, or flops per
sample), layers, parameters and source. The data dir is $SGDSIM_DATA_DIR, else
<prefix>/share/sgdsim next to the binary, else the source tree.

)";

const std::vector<OptionSpec> kProfilesOptions = {
    {"--json", "",
     "print [{\"name\",\"kind\",\"batch_size\",\"layers\",\"parameters\",\"source\",\n"
     "\"file\"}...] instead of a table"},
};

/// One shipped profile's row of `sgdsim profiles`.
json profile_row(const fs::path& file) {
  const json p = parse_json_file(file.string());
  int64_t parameters = 0;
  size_t layers = 0;
  if (p.contains("layers") && p["layers"].is_array()) {
    layers = p["layers"].size();
    for (const auto& l : p["layers"])
      if (l.is_object() && l.contains("parameters") && l["parameters"].is_number())
        parameters += l["parameters"].get<int64_t>();
  }
  json row = {
      {"name", file.stem().string()}, {"kind", p.value("kind", "")},     {"layers", layers},
      {"parameters", parameters},     {"source", p.value("source", "")}, {"file", file.string()}};
  row["batch_size"] = p.contains("batch_size") ? p["batch_size"] : json(nullptr);
  return row;
}

int cmd_profiles(const std::vector<std::string>& argv) {
  if (wants_help(argv))
    return std::cout << kProfilesHelpHead << options_help(kProfilesOptions, 23), 0;
  Args a = parse_args(argv, kProfilesOptions);
  if (!a.positional.empty())
    throw InputError("usage: sgdsim profiles takes no positional argument (see --help)");
  const fs::path dir = fs::path(data_dir()) / "models" / "profiles";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir.string(), "", "no profile folder (set SGDSIM_DATA_DIR?)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end(),
            [](const fs::path& x, const fs::path& y) { return x.stem() < y.stem(); });
  json rows = json::array();
  for (const auto& f : files) rows.push_back(profile_row(f));
  if (a.has("--json")) return std::cout << rows.dump(2) << "\n", 0;
  std::cout << fmt::format("{:<16} {:<14} {:>6} {:>13}  {}\n", "name", "kind", "layers",
                           "parameters", "source");
  for (const auto& r : rows) {
    std::string kind = r["kind"];
    if (!r["batch_size"].is_null()) kind += fmt::format(" @{}", r["batch_size"].dump());
    std::string source = r["source"];
    if (source.size() > 90) source = source.substr(0, 87) + "...";
    std::cout << fmt::format("{:<16} {:<14} {:>6} {:>13}  {}\n", r["name"].get<std::string>(), kind,
                             r["layers"].get<size_t>(), r["parameters"].get<int64_t>(), source);
  }
  std::cout << "(" << dir.string() << "; use a name as \"model\" or --set model=NAME)\n";
  return 0;
}

const RegisterSubcommand kProfiles(
    {"profiles", "profiles", "list the model profiles that ship (name, layers, parameters, source)",
     90, cmd_profiles});

}  // namespace
}  // namespace sgdsim
