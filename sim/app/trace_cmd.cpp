// sgdsim trace: import a measured file (Kineto/Chrome trace, sgdsim timeline, nccl-tests, OSU,
// B-Caffe or PipeDream), print its statistics, write a model profile where one follows.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/trace/import.hpp"
#include "sim/trace/validation.hpp"

namespace sgdsim {

namespace {

using nlohmann::json;

constexpr const char* kTraceHelpHead =
    R"(usage: sgdsim trace FILE [--format F] [--json] [--out PROFILE.json] [--time-limit T]
                    [FORMAT OPTIONS]

Imports a measured trace or log (plain or gzip-compressed) and prints what it measured: step
(iteration) times, compute and communication per step, and every collective with its size and
duration. The format is detected from the first bytes unless given:

@FORMATS@

)";

constexpr const char* kTraceHelpTail = R"(
FORMAT OPTIONS (declared by the formats; a format refuses another's):
@OPTIONS@)";

const std::vector<OptionSpec> kTraceOptions = {
    {"--format", "F", "one of the formats above"},
    {"--json", "",
     "print {\"file\",\"format\",\"rank\",\"world_size\",\"device\",\"warmup_steps\",\"stats\",\n"
     "\"steps\":[{\"step\",\"time_s\",\"compute_s\",\"comm_s\"}],\n"
     "\"collectives\":[{\"step\",\"index\",\"name\",\"bytes\",\"time_s\"}],\"notes\"}"},
    {"--out", "FILE",
     "write a model profile (models/profiles format) derived from the file:\n"
     "kineto/chrome: one layer per parameterised forward op (conv, batch-norm,\n"
     "linear, ...) paired with its backward ops, when the trace has the autograd\n"
     "structure; else one layer per DDP gradient bucket (see README);\n"
     "bcaffe: the profile of experiments/mgwfbp/bcaffe_profile.py;\n"
     "pipedream: the PipeDream layers as in models/profiles"},
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed or\n"
     "written"},
};

/// The format options given on the command line, each checked as its declaration says.
ParamValues import_option_values(const Args& a) {
  ParamValues values;
  for (const DeclaredImportParam& d : import_params()) {
    const Param& p = d.param;
    const std::optional<std::string> text = a.get(p.flag());
    if (!text) continue;
    const std::optional<ParamValue> v = parse_param_text(p, *text);
    if (!v)
      throw InputError(
          fmt::format("usage: {}: expected {}, got \"{}\"", p.flag(), p.expected(), *text));
    values.set(p.key, *v);
  }
  return values;
}

std::string ms(double s) {
  return std::isfinite(s) ? fmt::format("{:.3f}", s * 1e3) : "-";
}

/// The profile a file implies (what --out writes).
DerivedProfile derive_profile(const MeasuredTrace& t, const ParamValues& options) {
  return importer_named(t.format).to_profile(t, options);
}

void print_text(const MeasuredTrace& t, const TraceStats& s) {
  std::cout << fmt::format("sgdsim trace: {} ({}", t.file, t.format);
  if (t.rank >= 0) std::cout << fmt::format(", rank {}", t.rank);
  if (t.world_size > 0) std::cout << fmt::format(", world size {}", t.world_size);
  if (!t.device.empty()) std::cout << ", " << t.device;
  std::cout << ")\n";
  if (!t.steps.empty()) {
    std::cout << fmt::format(
        "  {:<28}{:>14}   ({} counted{})\n", "steps", t.steps.size(), s.steps,
        t.warmup_steps > 0 ? fmt::format(", first {} skipped", t.warmup_steps) : std::string());
    std::cout << fmt::format("  {:<28}{:>14}   (median {}, min {}, max {})\n", "step time (mean)",
                             human_time(s.step_mean_s), human_time(s.step_median_s),
                             human_time(s.step_min_s), human_time(s.step_max_s));
    std::cout << fmt::format("  {:<28}{:>14}\n", "compute per step", human_time(s.compute_mean_s));
    std::cout << fmt::format("  {:<28}{:>14}\n", "collectives per step", human_time(s.comm_mean_s));
  }
  std::map<std::string, std::pair<int, double>> by_name;
  for (const auto& c : t.collectives) {
    auto& [n, time] = by_name[c.name];
    ++n;
    time += c.time_s;
  }
  for (const auto& [name, v] : by_name)
    std::cout << fmt::format("  {:<28}{:>14}   ({} in all, {} summed)\n", "collective " + name,
                             v.first, v.first, human_time(v.second));
  if (!t.steps.empty()) {
    std::cout << fmt::format("\n  {:>8}  {:>12}  {:>12}  {:>12}\n", "step", "time_ms", "compute_ms",
                             "comm_ms");
    for (const auto& st : t.steps)
      std::cout << fmt::format("  {:>8}  {:>12}  {:>12}  {:>12}\n", st.step, ms(st.time_s),
                               ms(st.compute_s), ms(st.comm_s));
  }
  if (!t.collectives.empty()) {
    const size_t shown = std::min<size_t>(t.collectives.size(), 48);
    std::cout << fmt::format("\n  {:>6}  {:>5}  {:<12}  {:>14}  {:>12}\n", "step", "index", "name",
                             "bytes", "time_ms");
    for (size_t i = 0; i < shown; ++i) {
      const auto& c = t.collectives[i];
      std::cout << fmt::format("  {:>6}  {:>5}  {:<12}  {:>14}  {:>12}\n",
                               c.step >= 0 ? std::to_string(c.step) : "-", c.index, c.name,
                               std::isfinite(c.bytes) ? fmt::format("{:.0f}", c.bytes) : "?",
                               fmt::format("{:.4f}", c.time_s * 1e3));
    }
    if (shown < t.collectives.size())
      std::cout << fmt::format("  ... {} more (--json lists every collective)\n",
                               t.collectives.size() - shown);
  }
  for (const auto& n : t.notes) std::cout << "  note: " << n << "\n";
}

int cmd_trace(const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    std::string help = kTraceHelpHead + options_help(kTraceOptions, 19) + kTraceHelpTail;
    help.replace(help.find("@FORMATS@\n"), 10, importer_help());
    help.replace(help.find("@OPTIONS@"), 9, import_options_help(false));
    return std::cout << help, 0;
  }
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<OptionSpec> options = kTraceOptions;
  // Each format's declared options are flags of the same names.
  for (const DeclaredImportParam& d : import_params()) options.push_back({d.param.flag(), "X", ""});
  Args a = parse_args(argv, options);
  if (a.positional.size() != 1) throw InputError("usage: sgdsim trace FILE [options] (see --help)");
  arm_time_limit_option(a, wall_start);
  ImportOptions o;
  o.format = a.get("--format").value_or("");
  if (!o.format.empty()) (void)importer_named(o.format);  // a bad name fails before the file
  o.values = import_option_values(a);
  MeasuredTrace t = import_measured(a.positional[0], o);
  std::optional<DerivedProfile> profile;
  if (a.has("--out")) profile = derive_profile(t, o.values);
  TraceStats s = trace_stats(t);
  std::optional<json> j;
  if (a.has("--json")) j = trace_to_json(t);
  disarm_time_limit();  // the result is complete: written and printed whole
  if (auto out = a.get("--out")) write_file_atomic(*out, profile->text);
  if (j) {
    if (auto out = a.get("--out")) (*j)["profile"] = *out;
    std::cout << j->dump(2) << "\n";
    return 0;
  }
  print_text(t, s);
  if (auto out = a.get("--out"))
    std::cout << "  profile written to " << *out << ": " << profile->what << "\n";
  return 0;
}

const RegisterSubcommand kTrace({"trace", "trace FILE",
                                 "summarize a measured trace or log (Kineto, nccl-tests, OSU, ...)",
                                 80, cmd_trace});

}  // namespace

}  // namespace sgdsim
