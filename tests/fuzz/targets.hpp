#pragma once
/// The fuzz targets' bodies, one function per target, shared by the libFuzzer executables
/// (fuzz_<target>.cpp) and the regression test (tests/unit/fuzz_regressions_test.cpp). Each
/// feeds one input to a parser or importer and what follows it in the CLI; bad input must end
/// as an InputError, anything else (another exception, a sanitizer report, a broken invariant)
/// is a crash.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "sim/app/sweep.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/platform_check.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/trace/bcaffe.hpp"
#include "sim/trace/import.hpp"
#include "sim/trace/kineto.hpp"
#include "sim/trace/kineto_layers.hpp"
#include "sim/trace/measured.hpp"
#include "sim/trace/nccl_tests.hpp"
#include "sim/trace/osu.hpp"
#include "sim/trace/pipedream.hpp"
#include "sim/trace/sgdsim_timeline.hpp"
#include "sim/trace/trace_events.hpp"
#include "sim/workload/chakra_et.hpp"
#include "sim/workload/chakra_workload.hpp"
#include "sim/workload/profile.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim::fuzz {

/// Scenario JSON text -> parse_scenario (strict reader, defaults, cross-field checks) -> the
/// model's workload. A valid scenario's resolved form validates again to itself ("it runs as
/// is").
inline void scenario(const uint8_t* data, size_t size) {
  const std::string file = "fuzz/scenario.json";
  Scenario s;
  try {
    s = parse_scenario(parse_json_text(as_text(data, size), file), file);
  } catch (const InputError&) {
    return;
  }
  const std::string resolved = s.resolved.dump();
  try {
    Scenario again = parse_scenario(s.resolved, file);
    if (again.resolved != s.resolved)
      fail("resolved scenario changes when validated again:\n" + resolved + "\n" +
           again.resolved.dump());
  } catch (const InputError& e) {
    fail(std::string("resolved scenario does not validate: ") + e.what() + "\n" + resolved);
  }
  try {
    (void)load_workload(s);
  } catch (const InputError&) {
  }
}

/// Platform XML -> check_platform_xml, the SimGrid-free first stage of the platform pre-check
/// (no SimGrid runs), following routes between the first 16 hosts. An accepted file names at
/// least one host, every host once, and has no more route pairs than 16 hosts make.
inline void platform(const uint8_t* data, size_t size) {
  const std::string file = "fuzz/platform.xml";
  PlatformSummary s;
  try {
    s = check_platform_xml(as_text(data, size), file, 16);
  } catch (const InputError&) {
    return;
  }
  if (s.hosts.empty()) fail("an accepted platform has no host");
  std::set<std::string> names(s.hosts.begin(), s.hosts.end());
  if (names.size() != s.hosts.size()) fail("an accepted platform names a host twice");
  if (s.pairs_checked > 16 * 15) fail("more route pairs followed than 16 hosts make");
}

/// The unit parser (sizes, times, bandwidths, FLOP/s): a parsed quantity is finite; formatting
/// a value (the input's first 8 bytes as a double) and parsing it gives the value back.
inline void units(const uint8_t* data, size_t size) {
  using Parser = std::optional<double> (*)(std::string_view);
  const std::string text = as_text(data, size);
  const std::vector<std::pair<const char*, Parser>> parsers = {
      {"size", units::parse_size_bytes},
      {"time", units::parse_time_s},
      {"bandwidth", units::parse_bandwidth_Bps},
      {"speed", units::parse_speed_flops}};
  for (const auto& [what, parse] : parsers) {
    std::optional<double> x = parse(text);
    if (x && !std::isfinite(*x))
      fail(std::string(what) + " \"" + text + "\" parsed to a non-finite value");
  }
  if (size < sizeof(double)) return;
  double v = 0;
  std::memcpy(&v, data, sizeof v);
  if (!std::isfinite(v)) return;
  const std::vector<std::tuple<const char*, Parser, std::string (*)(double)>> formats = {
      {"bandwidth", units::parse_bandwidth_Bps, units::format_bandwidth_Bps},
      {"time", units::parse_time_s, units::format_time_s},
      {"speed", units::parse_speed_flops, units::format_speed_flops}};
  for (const auto& [what, parse, format] : formats) {
    const std::string t = format(v);
    std::optional<double> back = parse(t);
    if (!back || *back != v) fail(std::string(what) + ": " + t + " does not parse back to itself");
  }
}

/// Scenarios the profile target builds workloads for: defaults (25 MB buckets), and per-layer
/// buckets with a calibrated device.
inline const std::vector<Scenario>& profile_scenarios() {
  static const std::vector<Scenario> s = [] {
    const nlohmann::json layer = {
        {"name", "l"}, {"parameters", 1}, {"forward_flops", 1}, {"backward_flops", 1}};
    const nlohmann::json model = {{"name", "m"}, {"kind", "flops"}, {"layers", {layer}}};
    const nlohmann::json a = {{"model", model}};
    const nlohmann::json b = {
        {"model", model},
        {"batch_size", 7},
        {"scheme", {{"fusion_bytes", 0}}},
        {"device", {{"calibrate", {{"iteration_time", "100ms"}, {"batch_size", 3}}}}}};
    return std::vector<Scenario>{parse_scenario(a, "fuzz/a.json"),
                                 parse_scenario(b, "fuzz/b.json")};
  }();
  return s;
}

/// Model profile JSON -> parse_profile -> per-layer costs and fusion buckets of one worker;
/// a valid profile written back in the models/profiles format validates again.
inline void profile(const uint8_t* data, size_t size) {
  const std::string file = "fuzz/profile.json";
  Profile p;
  try {
    p = parse_profile(parse_json_text(as_text(data, size), file), file, "");
  } catch (const InputError&) {
    return;
  }
  (void)p.total_parameters();
  for (const Scenario& s : profile_scenarios()) {
    try {
      (void)build_workload(s, p, 15e12);
    } catch (const InputError&) {
    }
  }
  const std::string text = profile_json_text(p, "round trip");
  try {
    Profile again = parse_profile(parse_json_text(text, "again.json"), "again.json", "");
    if (again.layers.size() != p.layers.size()) fail("layers lost in the round trip");
  } catch (const InputError& e) {
    fail(std::string("a valid profile written back does not validate: ") + e.what() + "\n" + text);
  }
}

/// True if a sweep file would expand into more than a few thousand runs: slow to expand, not
/// wrong (load_sweep caps sweeps at 1,000,000 runs), and it would stall the fuzzer.
inline bool huge_sweep(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    double runs = 1;
    if (!j.is_object()) return false;
    for (const char* section : {"grid", "zip"})
      if (j.contains(section) && j[section].is_object())
        for (const auto& [path, values] : j[section].items())
          if (values.is_array()) runs *= std::max<double>(1, static_cast<double>(values.size()));
    if (j.contains("list") && j["list"].is_array())
      runs *= std::max<double>(1, static_cast<double>(j["list"].size()));
    if (j.contains("repeat") && j["repeat"].is_number()) runs *= j["repeat"].get<double>();
    return runs > 4000;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

/// Sweep file -> load_sweep (validation, grid x zip x list x repeat, per-run scenario
/// validation) -> the results.jsonl lines and results.csv `sgdsim sweep` writes for its runs.
inline void sweep(const uint8_t* data, size_t size) {
  if (huge_sweep(as_text(data, size))) return;
  static const ScratchDir dir("sweep");
  const std::string file = dir.write("sweep.json", data, size);
  Sweep sw;
  try {
    sw = load_sweep(file);
  } catch (const InputError&) {
    return;
  }
  std::vector<nlohmann::json> lines;
  std::set<std::string> names;
  for (const SweepRun& r : sw.runs) {
    if (r.name.empty() || r.key.size() != 16) fail("run without a name or key");
    if (r.name == "." || r.name == ".." || r.name.find('/') != std::string::npos ||
        r.name.find('\0') != std::string::npos)
      fail("run name is not a folder name: " + r.name);
    if (!names.insert(r.name).second) fail("two runs named " + r.name);
    lines.push_back(
        result_line(r.name, r.params, r.key, nullptr, r.error.empty() ? "not run" : r.error));
    (void)lines.back().dump();
  }
  (void)results_csv(sw.param_paths, lines);
}

/// Kineto / Chrome trace JSON, plain or gzip, through the streaming reader -> steps and
/// collectives -> `sgdsim trace --json` -> the per-layer or DDP bucket profile of `sgdsim trace
/// --out`, read back by parse_profile (a per-layer profile's layers add up to its parameters).
inline void kineto(const uint8_t* data, size_t size) {
  static const ScratchDir dir("kineto");
  const std::string file = dir.write("trace.json", data, size);
  try {
    (void)detect_format(file);
  } catch (const InputError&) {
  }
  MeasuredTrace t;
  TraceEventFile ev;
  try {
    ev = read_trace_events(file);
    t = kineto_trace(ev);
  } catch (const InputError&) {
    return;
  }
  (void)trace_to_json(t).dump();
  try {
    DdpProfile d = profile_from_trace(ev, t);
    const std::string text = profile_json_text(d.profile, d.notes);
    (void)parse_profile(parse_json_text(text, "profile.json"), "profile.json", "");
  } catch (const InputError&) {
  }
}

/// sgdsim's own timeline.json read back -> iterations, compute, collectives -> `sgdsim trace
/// --json`; the first byte picks the warm-up.
inline void sgdsim_timeline(const uint8_t* data, size_t size) {
  static const ScratchDir dir("timeline");
  const std::string file = dir.write("timeline.json", data, size);
  try {
    TraceEventFile ev = read_trace_events(file);
    (void)is_sgdsim_timeline(ev);
    (void)trace_to_json(sgdsim_timeline_trace(ev, size > 0 ? data[0] % 4 : 0)).dump();
  } catch (const InputError&) {
  }
}

/// nccl-tests log -> per-size times -> `sgdsim trace --json` -> the alpha-beta fit and check
/// `sgdsim validate` makes from a latency benchmark.
inline void nccl_tests(const uint8_t* data, size_t size) {
  std::istringstream in(as_text(data, size));
  try {
    NcclTestsLog log = parse_nccl_tests_log(in, "fuzz.log", 0);
    MeasuredTrace t = nccl_tests_trace(log);
    (void)trace_to_json(t).dump();
    OsuLog points = latency_log(t, std::max(2, log.ranks), log.collective);
    AlphaBetaFit fit = fit_alpha_beta(points, "ring", 0);
    (void)check_alpha_beta(points, "ring", fit.alpha_beta(), 0);
  } catch (const InputError&) {
  }
}

/// OSU allreduce latency log -> points -> `sgdsim trace --json` -> the fit and check of
/// `sgdsim calibrate osu` (ring and the `auto` rule).
inline void osu(const uint8_t* data, size_t size) {
  std::istringstream in(as_text(data, size));
  OsuLog log;
  try {
    log = parse_osu_log(in, "fuzz.log", 0);
  } catch (const InputError&) {
    return;
  }
  (void)trace_to_json(osu_trace(log)).dump();
  if (log.ranks < 2) log.ranks = 2;
  for (const char* algorithm : {"ring", "auto"}) {
    try {
      AlphaBetaFit fit = fit_alpha_beta(log, algorithm, 0);
      (void)check_alpha_beta(log, algorithm, fit.alpha_beta(), 0);
    } catch (const InputError&) {
    }
  }
}

/// B-Caffe per-blob log -> allreduce groups -> the profiles of `sgdsim trace --out` and
/// `sgdsim validate`, read back by parse_profile -> `sgdsim trace --json`.
inline void bcaffe(const uint8_t* data, size_t size) {
  std::istringstream in(as_text(data, size));
  BcaffeLog log;
  try {
    log = parse_bcaffe_log(in, "fuzz.log", 0);
  } catch (const InputError&) {
    return;
  }
  (void)bcaffe_groups(log);
  (void)trace_to_json(bcaffe_trace(log)).dump();
  try {
    for (const Profile& p : {bcaffe_profile(log), bcaffe_group_profile(log, log)}) {
      const std::string text = profile_json_text(p, "");
      (void)parse_profile(parse_json_text(text, "profile.json"), "profile.json", "");
    }
  } catch (const InputError&) {
  }
}

/// PipeDream graph.txt -> topologically ordered measured profile, read back by parse_profile
/// -> `sgdsim trace --json`.
inline void pipedream(const uint8_t* data, size_t size) {
  std::istringstream in(as_text(data, size));
  PipeDreamGraph g;
  try {
    g = parse_pipedream_graph(in, "fuzz/graph.txt");
  } catch (const InputError&) {
    return;
  }
  try {
    const std::string text = profile_json_text(pipedream_profile(g, 32), "");
    (void)parse_profile(parse_json_text(text, "profile.json"), "profile.json", "");
    (void)trace_to_json(pipedream_trace(g, 32)).dump();
  } catch (const InputError&) {
  }
}

/// Chakra ET bytes -> parse_chakra (wire codec, node checks) -> the program of one rank and of
/// two ranks running the same file (matching, cycles). An accepted trace, encoded, parses to a
/// trace with the same encoding.
inline void chakra(const uint8_t* data, size_t size) {
  ChakraTrace t;
  try {
    t = parse_chakra(std::string(reinterpret_cast<const char*>(data), size), "fuzz/x.0.et");
  } catch (const InputError&) {
    return;
  }
  const std::string bytes = encode_chakra(t);
  ChakraTrace again;
  try {
    again = parse_chakra(bytes, "fuzz/again.et");
  } catch (const InputError& e) {
    fail(std::string("an accepted trace, encoded, does not parse: ") + e.what());
  }
  if (encode_chakra(again) != bytes) fail("encode(parse(encode(t))) differs from encode(t)");
  for (int ranks : {1, 2}) {
    try {
      std::vector<ChakraTrace> traces(static_cast<size_t>(ranks), t);
      const ChakraProgram p = build_chakra_program(traces);
      for (const auto& ops : p.ranks)
        for (size_t i = 0; i < ops.size(); ++i)
          for (int d : ops[i].preds)
            if (d < 0 || static_cast<size_t>(d) >= i) fail("an op waits for a later op");
    } catch (const InputError&) {
    }
  }
}

/// Every target by name (the executables are fuzz_<name>).
inline const std::map<std::string, std::function<void(const uint8_t*, size_t)>>& targets() {
  static const std::map<std::string, std::function<void(const uint8_t*, size_t)>> t = {
      {"scenario", scenario},     {"units", units},       {"profile", profile},
      {"sweep", sweep},           {"kineto", kineto},     {"sgdsim_timeline", sgdsim_timeline},
      {"nccl_tests", nccl_tests}, {"osu", osu},           {"bcaffe", bcaffe},
      {"pipedream", pipedream},   {"platform", platform}, {"chakra", chakra}};
  return t;
}

}  // namespace sgdsim::fuzz
