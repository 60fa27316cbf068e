// workload.chakra / workload.optimizer: where the ET files are and who owns the optimizer step.
#include "sim/scenario/workload_field.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "sim/core/errors.hpp"

namespace sgdsim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// PREFIX.0.et, PREFIX.1.et, ... as far as they exist (relative: to base_dir, else as given,
/// else to the data folder, like every data path).
std::vector<std::string> rank_files(const std::string& prefix, const std::string& base_dir,
                                    const std::string& file) {
  const std::string first = resolve_data_path(prefix + ".0.et", base_dir, file, "/workload/chakra");
  const std::string stem = first.substr(0, first.size() - std::string(".0.et").size());
  std::vector<std::string> out;
  std::error_code ec;
  for (int r = 0;; ++r) {
    std::string f = fmt::format("{}.{}.et", stem, r);
    if (!fs::is_regular_file(f, ec)) break;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

void read_workload_field(JsonObject& root, Scenario& s, const std::string& base_dir) {
  JsonObject w = root.get_object("workload");
  const std::string& file = root.file();
  // The default [] (also what the defaults table hands an absent section): a profile workload.
  const json& v = w.has("chakra") ? w.raw("chakra") : json::array();
  if (!(v.is_array() && v.empty())) {
    if (v.is_string() && !v.get<std::string>().empty()) {
      s.chakra_files = rank_files(v.get<std::string>(), base_dir, file);
    } else if (v.is_array() && !v.empty()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string() || v[i].get<std::string>().empty())
          throw InputError(file, fmt::format("/workload/chakra/{}", i),
                           "expected a Chakra ET file path, got " + show_value(v[i]));
        s.chakra_files.push_back(resolve_data_path(v[i].get<std::string>(), base_dir, file,
                                                   fmt::format("/workload/chakra/{}", i)));
      }
    } else {
      w.fail("chakra",
             "a file prefix (\"dir/name\" for dir/name.0.et, dir/name.1.et, ...) or a non-empty "
             "list of ET files, rank 0 first");
    }
    if (static_cast<int>(s.chakra_files.size()) != s.workers)
      throw InputError(file, "/workload/chakra",
                       fmt::format("{} ET files ({}): expected one per worker (workers.count {})",
                                   s.chakra_files.size(), show_value(v), s.workers));
    w.record("chakra", s.chakra_files);
  } else {
    w.record("chakra", json::array());
  }
  s.chakra_optimizer = w.get_choice("optimizer", {"sgdsim", "trace"});
  w.finish();
}

}  // namespace sgdsim
