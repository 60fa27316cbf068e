// Chrome trace-event JSON, in its three dialects: PyTorch's Kineto profiler traces, any other
// Chrome trace, and sgdsim's own timeline.json. One file because they share one reader and a
// detected JSON file is told apart only after it is read. Left out: traces of several ranks in
// one file (each rank's file is imported alone).
#include <fmt/format.h>

#include <algorithm>

#include "sim/core/errors.hpp"
#include "sim/trace/importer.hpp"
#include "sim/trace/kineto_layers.hpp"
#include "sim/trace/sgdsim_timeline.hpp"
#include "sim/trace/trace_events.hpp"

namespace sgdsim {

namespace {

/// `skip`: the leading steps left out of the statistics (also checked by import_measured).
Param skip_param(nlohmann::json default_value, const std::string& default_text) {
  return {.key = "skip",
          .type = ParamType::integer,
          .default_value = std::move(default_value),
          .brief = "leave the first N steps out of the statistics",
          .default_text = default_text,
          .min = 0};
}

MeasuredTrace timeline(const TraceEventFile& ev, const std::string& path, const ParamValues& o) {
  return sgdsim_timeline_trace(ev, int_option(o, "skip", std::max(0, warmup_beside(path))));
}

MeasuredTrace kineto(const TraceEventFile& ev, const ParamValues& o) {
  MeasuredTrace t = kineto_trace(ev);
  t.warmup_steps = int_option(o, "skip", 0);
  return t;
}

/// Kineto and Chrome traces: per-layer profiles from the raw ops (read again: the imported
/// trace does not keep them).
class KinetoFamily : public Importer {
 public:
  std::vector<Param> params() const override {
    // No declared default: a detected JSON file may turn out to be an sgdsim timeline, whose
    // default is its own (the run's warm-up), so kineto's 0 applies in its import.
    return {skip_param(nullptr, "0"),
            {.key = "batch_size",
             .type = ParamType::integer,
             .brief = "--out: the per-rank mini-batch the traced steps processed (required: "
                      "Kineto traces do not record it; the profile's batch_size)",
             .min = 1}};
  }
  std::optional<CaseKind> case_kind() const override { return CaseKind::trace; }
  DdpProfile ddp_profile(const MeasuredTrace& t) const override {
    return profile_from_trace(read_trace_events(t.file), t);
  }
  bool derives_profile() const override { return true; }
  DerivedProfile to_profile(const MeasuredTrace& t, const ParamValues& o) const override;
};

DerivedProfile KinetoFamily::to_profile(const MeasuredTrace& t, const ParamValues& o) const {
  DdpProfile d = ddp_profile(t);
  const int batch = int_option(o, "batch_size", 0);
  // Kineto traces do not record the mini-batch a step processed (no argument of
  // ProfilerStep#N carries it), so it must be given: the profile's times are per step at that
  // batch, and a scenario at another batch scales them linearly.
  if (batch == 0)
    throw InputError(t.file, "",
                     "--out needs --batch-size N: the trace does not record the per-rank "
                     "mini-batch of its steps, and the profile's times are per step at that "
                     "batch (a scenario at another batch_size scales them linearly)");
  d.profile.batch_size = batch;
  const double params = static_cast<double>(d.profile.total_parameters());
  std::string what = fmt::format(
      "{}, {} parameters, batch size {}, forward {} per step, update {} (set device_speed to "
      "{:.6g}Gf with efficiency 1 to make the optimizer step take that long)",
      d.per_layer
          ? fmt::format("per-layer profile, {} layers ({} with parameters; {} DDP "
                        "buckets)",
                        d.profile.layers.size(), d.profile.layers.size() - 1, d.bucket_bytes.size())
          : fmt::format("DDP bucket profile, {} buckets", d.bucket_bytes.size()),
      d.profile.total_parameters(), batch, human_time(d.forward_s), human_time(d.update_s),
      d.update_s > 0 ? params * 4 / d.update_s / 1e9 : 0.0);
  return {profile_json_text(d.profile, d.notes), what};
}

class KinetoImporter : public KinetoFamily {
 public:
  std::string name() const override { return "kineto"; }
  std::string summary() const override {
    return "PyTorch profiler (Kineto) Chrome trace: ProfilerStep#N annotations are the steps,\n"
           "GPU kernels named nccl* the collectives (size from their args or from the CPU-side\n"
           "record_param_comms launch), other GPU kernels/memcpys/memsets the compute";
  }
  int detect_order() const override { return 10; }
  bool detects(const FileHead& h) const override {
    return !h.body.empty() && (h.body.front() == '{' || h.body.front() == '[');
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    return kineto(read_trace_events(path), o);
  }
  MeasuredTrace import_detected(const std::string& path, const ParamValues& o) const override {
    TraceEventFile ev = read_trace_events(path);
    // A detected JSON file may be sgdsim's own timeline: only its otherData tells.
    if (is_sgdsim_timeline(ev)) return timeline(ev, path, o);
    return kineto(ev, o);
  }
};

class ChromeImporter : public KinetoFamily {
 public:
  std::string name() const override { return "chrome"; }
  std::string summary() const override { return "any Chrome trace event JSON, read the same way"; }
  int detect_order() const override { return 1000; }
  bool detects(const FileHead&) const override { return false; }  // JSON is detected as kineto
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    MeasuredTrace t = kineto(read_trace_events(path), o);
    t.format = "chrome";
    return t;
  }
};

class SgdsimImporter : public Importer {
 public:
  std::string name() const override { return "sgdsim"; }
  std::string summary() const override {
    return "sgdsim's own timeline.json (warm-up from scenario.resolved.json beside it)";
  }
  int detect_order() const override { return 1000; }
  bool detects(const FileHead&) const override { return false; }  // told apart on import
  std::optional<CaseKind> case_kind() const override { return CaseKind::trace; }
  std::vector<Param> params() const override {
    return {
        skip_param(nullptr, "the run's warm-up iterations, from scenario.resolved.json beside it")};
  }
  MeasuredTrace import(const std::string& path, const ParamValues& o) const override {
    TraceEventFile ev = read_trace_events(path);
    if (!is_sgdsim_timeline(ev))
      throw InputError(path, "/otherData/time_unit",
                       "expected an sgdsim timeline (otherData.time_unit \"us of simulated "
                       "time\"); this looks like another trace: use --format kineto");
    return timeline(ev, path, o);
  }
};

const ImporterRegistration kineto_registration{std::make_unique<KinetoImporter>()};
const ImporterRegistration chrome_registration{std::make_unique<ChromeImporter>()};
const ImporterRegistration sgdsim_registration{std::make_unique<SgdsimImporter>()};

}  // namespace

}  // namespace sgdsim
