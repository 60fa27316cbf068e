// Validation cases: loading, calibration, derived scenarios, comparison.
#include "sim/trace/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/trace/bcaffe.hpp"
#include "sim/trace/import.hpp"
#include "sim/trace/kineto.hpp"
#include "sim/trace/kineto_layers.hpp"
#include "sim/workload/workload.hpp"

namespace sgdsim {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The registered formats a case can compare, of one kind (all kinds: nullopt), "a, b or c".
std::string formats_of(std::optional<CaseKind> kind) {
  std::vector<std::string> names;
  for (const Importer* i : importers())
    if (i->case_kind() && (!kind || *i->case_kind() == *kind)) names.push_back(i->name());
  std::string out;
  for (size_t k = 0; k < names.size(); ++k)
    out += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
  return out;
}

CaseKind kind_of(const std::string& format, const std::string& file, const std::string& ptr) {
  if (auto kind = importer_named(format).case_kind()) return *kind;
  throw InputError(file, ptr + "/format",
                   "expected a measured run (" + formats_of(std::nullopt) + "), got \"" + format +
                       "\" (a profile has no measured times to compare with)");
}

std::string kind_name(CaseKind k) {
  switch (k) {
    case CaseKind::trace:
      return "a training trace (" + formats_of(k) + ")";
    case CaseKind::per_layer:
      return "a per-layer log (" + formats_of(k) + ")";
    case CaseKind::latency:
      return "a latency benchmark (" + formats_of(k) + ")";
  }
  return "";
}

std::string us(double s) {
  return fmt::format("{:.9g}us", s * 1e6);
}
std::string gbps(double bytes_per_s) {
  return fmt::format("{:.9g}Gbps", bytes_per_s * 8 / 1e9);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

int ranks_of(const MeasuredTrace& t, const MeasuredSource& s, const std::string& case_file) {
  int r = t.world_size > 0 ? t.world_size : int_option(s.options, "ranks", 0);
  if (r <= 0)
    throw InputError(case_file, s.pointer + "/ranks",
                     "the measured file does not say how many ranks ran: expected \"ranks\"");
  return r;
}

MeasuredTrace import_source(const MeasuredSource& s) {
  ImportOptions o;
  o.format = s.detected ? "" : s.format;
  o.values = s.options;
  // Every measured step is compared unless the case says otherwise (a timeline's own warm-up
  // is the simulated run's business, not the measurement's).
  for (const Param& p : import_params_of(importer_named(s.format)))
    if (p.key == "skip" && !o.values.has("skip")) o.values.set("skip", {0, ""});
  return import_measured(s.file, o);
}

/// The options of a source's format, read as declared; another format's option is refused by
/// name, any other unknown key by finish().
void read_source_options(JsonObject& s, MeasuredSource& m) {
  const Importer& importer = importer_named(m.format);
  const std::vector<Param> mine = import_params_of(importer);
  for (const Param& p : mine)
    if (s.has(p.key)) m.options.set(p.key, read_param(s, p));
  for (const DeclaredImportParam& d : import_params()) {
    const bool own =
        std::any_of(mine.begin(), mine.end(), [&](const Param& p) { return p.key == d.param.key; });
    if (!own && s.has(d.param.key))
      throw InputError(s.file(), s.pointer_of(d.param.key),
                       "only for formats " + fmt::format("{}", fmt::join(d.formats, ", ")) +
                           ", not \"" + m.format + "\"");
  }
}

}  // namespace

std::string case_formats_help() {
  auto list = [](CaseKind k) {
    std::string out;
    for (const Importer* i : importers())
      if (i->case_kind() == k) out += (out.empty() ? "" : ", ") + i->name();
    return out;
  };
  return list(CaseKind::trace) + " (training traces), " + list(CaseKind::per_layer) +
         " (per-layer logs), " + list(CaseKind::latency) + " (latency benchmarks)";
}

ValidationCase load_validation_case(const std::string& path) {
  json j = parse_json_file(path);
  JsonObject o(j, path, "");
  ValidationCase c;
  c.file = path;
  const fs::path dir = fs::path(path).parent_path();
  c.name = o.has("name") ? o.get_string("name") : fs::path(path).stem().string();
  if (o.has("description")) c.description = o.get_string("description", true);
  if (o.has("source")) c.source = o.get_string("source", true);

  auto read_source = [&](const json& v, const std::string& ptr) {
    JsonObject s(v, path, ptr);
    MeasuredSource m;
    m.pointer = ptr;
    std::string f = s.get_string("file");
    fs::path p = fs::path(f).is_absolute() ? fs::path(f) : dir / f;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      if (fs::is_regular_file(f, ec))
        p = f;
      else
        throw InputError(path, s.pointer_of("file"),
                         "measured file not found: \"" + f + "\" (looked in " +
                             (dir.empty() ? std::string(".") : dir.string()) +
                             " and the current folder)");
    }
    m.file = p.lexically_normal().string();
    std::vector<std::string> formats = measured_formats();
    m.detected = !s.has("format");
    m.format = m.detected ? detect_format(m.file) : s.get_choice("format", formats);
    read_source_options(s, m);
    m.name = s.has("name") ? s.get_string("name") : fs::path(m.file).filename().string();
    s.finish();
    return m;
  };

  if (!o.has("calibration")) o.fail("calibration", "an object {\"file\", \"format\", \"ranks\"}");
  c.calibration = read_source(o.raw("calibration"), "/calibration");
  if (o.has("network")) c.network = read_source(o.raw("network"), "/network");
  if (o.has("algorithm")) {
    c.algorithm =
        canonical_collective_name(o.get_choice("algorithm", collective_names_and_aliases()));
  }
  if (!o.has("targets") || !o.raw("targets").is_array() || o.raw("targets").empty())
    o.fail("targets",
           "a non-empty array of measured files {\"name\", \"file\", \"format\", "
           "\"ranks\"}");
  const json& targets = o.raw("targets");
  for (size_t i = 0; i < targets.size(); ++i)
    c.targets.push_back(read_source(targets[i], "/targets/" + std::to_string(i)));
  c.kind = kind_of(c.targets[0].format, path, c.targets[0].pointer);
  for (const auto& t : c.targets)
    if (kind_of(t.format, path, t.pointer) != c.kind)
      throw InputError(path, t.pointer + "/format",
                       std::string("expected ") + kind_name(c.kind) + " like the first target");
  const CaseKind cal_kind = kind_of(c.calibration.format, path, "/calibration");
  if (cal_kind != c.kind)
    throw InputError(path, "/calibration/format",
                     std::string("expected ") + kind_name(c.kind) + " like the targets");
  if (c.network && kind_of(c.network->format, path, "/network") != CaseKind::latency &&
      kind_of(c.network->format, path, "/network") != c.kind)
    throw InputError(path, "/network/format",
                     std::string("expected a latency benchmark or ") + kind_name(c.kind));
  c.min_bytes = c.kind == CaseKind::latency ? 65536.0 : 0.0;
  if (o.has("min_bytes")) c.min_bytes = o.get_size_bytes("min_bytes");
  if (o.has("scenario")) {
    if (!o.raw("scenario").is_object()) o.fail("scenario", "an object of scenario fields");
    c.scenario = o.raw("scenario");
  }
  o.finish();
  return c;
}

namespace {

/// PyTorch DDP's default bucket caps (torch.nn.parallel.DistributedDataParallel
/// bucket_cap_mb=25; torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB).
constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;
constexpr double kDdpFirstBucketBytes = 1024.0 * 1024;

/// Whether sgdsim's fusion with DDP's default caps groups the profile's layers into the
/// buckets the trace measured (same sizes, same order).
bool rebuilds_ddp_buckets(const DdpProfile& d) {
  std::vector<LayerCost> layers;
  for (const auto& l : d.profile.layers)
    layers.push_back(
        {l.name, 0, 0, static_cast<double>(l.parameters) * d.profile.bytes_per_parameter});
  std::vector<double> sizes;
  for (const auto& b : make_buckets(layers, kDdpBucketBytes, kDdpFirstBucketBytes))
    sizes.push_back(b.bytes);
  return sizes == d.bucket_bytes;
}

/// A trace case's compute: the per-layer profile when the trace has the autograd structure and
/// DDP's default caps rebuild its buckets from the layers, else the DDP bucket profile.
void calibrate_trace_compute(CaseCalibration& cal) {
  const MeasuredTrace& t = cal.compute;
  DdpProfile d = importer_named(t.format).ddp_profile(t);
  if (d.per_layer && rebuilds_ddp_buckets(d)) {
    cal.fusion_bytes = kDdpBucketBytes;
    cal.first_bucket_bytes = kDdpFirstBucketBytes;
    d.notes +=
        " sgdsim validate: PyTorch DDP's default bucket caps (fusion_bytes 25 MiB, "
        "first_bucket_bytes 1 MiB) group these layers into the trace's buckets.";
  } else if (d.per_layer) {
    d = ddp_profile_from_trace(t);
    d.notes +=
        " (sgdsim validate: DDP's default bucket caps do not rebuild the trace's "
        "buckets from its per-layer profile, so one layer per bucket.)";
  }
  cal.buckets = d.bucket_bytes.size();
  cal.update_s = d.update_s;
  cal.profile_notes = d.notes;
  cal.profile_text = profile_json_text(d.profile, d.notes);
}

}  // namespace

CaseCalibration calibrate_case(const ValidationCase& c) {
  CaseCalibration cal;
  cal.compute = import_source(c.calibration);
  const MeasuredSource& net_src = c.network ? *c.network : c.calibration;
  MeasuredTrace net = c.network ? import_source(*c.network) : cal.compute;
  cal.network_file = net_src.file;
  const int ranks = ranks_of(net, net_src, c.file);
  if (ranks < 2)
    throw InputError(c.file, net_src.pointer,
                     fmt::format("fitting alpha and beta needs collectives on >= 2 ranks, the "
                                 "network source has {}",
                                 ranks));
  cal.network = fit_alpha_beta(latency_log(net, ranks), c.algorithm, c.min_bytes);
  if (c.kind == CaseKind::trace) calibrate_trace_compute(cal);
  return cal;
}

namespace {

/// How a target's scenario runs: the device speed that times the optimizer step, the overlap
/// and the iterations.
struct TargetRun {
  std::string speed = "1000000Pf";  // optimizer step ~0 unless measured
  std::string overlap = "none";
  int iterations = 3;
  double fusion_bytes = 0;  // one collective per profile layer
  double first_bucket_bytes = 0;
};

/// A trace case: the calibration's DDP bucket profile, its buckets' measured allreduces.
TargetRun prepare_trace_target(const CaseCalibration& cal, PreparedTarget& t) {
  TargetRun run;
  std::string& speed = run.speed;
  std::string& overlap = run.overlap;
  int& iterations = run.iterations;
  if (cal.update_s > 0) {
    // The update task costs 4 FLOPs per parameter at device_speed x efficiency (1).
    double params = 0;
    auto pj = json::parse(cal.profile_text);
    for (const auto& l : pj["layers"]) params += l["parameters"].get<double>();
    speed = fmt::format("{:.12g}Gf", params * 4 / cal.update_s / 1e9);
  }
  overlap = "wfbp";
  iterations = 6;
  run.fusion_bytes = cal.fusion_bytes;
  run.first_bucket_bytes = cal.first_bucket_bytes;
  t.profile_text = cal.profile_text;
  const size_t nb = cal.buckets;
  t.bucket_measured.resize(nb);
  std::map<int64_t, std::vector<const MeasuredCollective*>> by_step;
  for (const auto& col : t.measured.collectives)
    if (col.name == "allreduce" && col.step >= 0) by_step[col.step].push_back(&col);
  for (const auto& [step, cs] : by_step)
    if (cs.size() == nb)
      for (size_t b = 0; b < nb; ++b) t.bucket_measured[b].push_back(cs[b]);
  for (const auto& st : t.measured.steps) t.steps.push_back(&st);
  return run;
}

/// A per-layer case (B-Caffe): one layer per allreduce of the target.
void prepare_per_layer_target(const ValidationCase& c, const MeasuredSource& target,
                              PreparedTarget& t) {
  Profile profile;
  std::string notes;
  BcaffeLog compute =
      read_bcaffe_log(c.calibration.file, int_option(c.calibration.options, "ranks", 0));
  BcaffeLog layout = read_bcaffe_log(target.file, int_option(target.options, "ranks", 0));
  profile = bcaffe_group_profile(compute, layout);
  notes = "Derived by sgdsim validate: one layer per allreduce of " + target.file +
          " (blobs sent together), backward times from " + c.calibration.file +
          " (each layer's time on the group holding its bias blob), forward times 0 (not in "
          "the logs).";
  t.profile_text = profile_json_text(profile, notes);
  t.bucket_measured.resize(t.measured.collectives.size());
  for (size_t b = 0; b < t.measured.collectives.size(); ++b)
    t.bucket_measured[b].push_back(&t.measured.collectives[b]);
  for (const auto& st : t.measured.steps) t.steps.push_back(&st);
}

/// A latency sweep (OSU, nccl-tests): one collective per measured size, no compute.
void prepare_latency_target(const ValidationCase& c, const MeasuredSource& target,
                            PreparedTarget& t) {
  Profile profile;
  std::string notes;
  std::vector<const MeasuredCollective*> sizes;
  for (const auto& col : t.measured.collectives)
    if (std::isfinite(col.bytes) && col.bytes > 0 && col.bytes >= c.min_bytes)
      sizes.push_back(&col);
  if (sizes.empty())
    throw InputError(c.file, target.pointer,
                     fmt::format("no message size >= {} bytes in {}", c.min_bytes, target.file));
  profile.name = "latency-sweep";
  profile.source = target.file;
  profile.measured = true;
  profile.batch_size = 1;
  profile.bytes_per_parameter = 1;
  for (const auto* s : sizes) {
    ProfileLayer l;
    l.name = fmt::format("{:.0f} bytes", s->bytes);
    l.parameters = static_cast<int64_t>(s->bytes);
    profile.layers.push_back(l);
  }
  notes = "Derived by sgdsim validate: one collective per measured message size >= " +
          format_bytes(c.min_bytes) + ", no compute, back to back (overlap none).";
  t.profile_text = profile_json_text(profile, notes);
  // Bucket b holds the b-th layer from the end (buckets run in backward order).
  for (size_t b = 0; b < sizes.size(); ++b)
    t.bucket_measured.push_back({sizes[sizes.size() - 1 - b]});
}

/// The scenario a target runs: an ideal star with the calibrated alpha and beta.
nlohmann::json target_scenario(const ValidationCase& c, const CaseCalibration& cal,
                               const MeasuredSource& target, const PreparedTarget& t,
                               const TargetRun& run) {
  const double bw = 1.0 / cal.network.beta_s_per_byte;
  const std::string& speed = run.speed;
  const std::string& overlap = run.overlap;
  const int iterations = run.iterations;
  json sc = {{"name", c.name + "-" + fs::path(target.file).stem().string()},
             {"description", "derived by sgdsim validate from " + c.file + " for " + target.file},
             {"seed", 1},
             {"platform",
              {{"generate",
                {{"topology", "star"},
                 {"nodes", t.ranks},
                 {"devices_per_node", 1},
                 {"node_link", {{"bandwidth", gbps(bw)}, {"latency", us(cal.network.alpha_s / 2)}}},
                 {"device_speed", speed}}}}},
             {"network_model", "ideal"},
             {"model", "profile.json"},
             {"device", {{"efficiency", 1.0}}},
             {"workers", {{"count", t.ranks}, {"per_node", 1}}},
             {"batch_size", 1},
             {"iterations", iterations},
             {"warmup_iterations", 1},
             {"scheme",
              {{"type", "sync"},
               {"overlap", overlap},
               {"fusion_bytes", static_cast<int64_t>(run.fusion_bytes)},
               {"first_bucket_bytes", static_cast<int64_t>(run.first_bucket_bytes)}}},
             {"collective", {{"algorithm", c.algorithm}}},
             {"fidelity", "flow"},
             {"output", {{"timeline", true}}}};
  sc.merge_patch(c.scenario);
  return sc;
}

}  // namespace

PreparedTarget prepare_target(const ValidationCase& c, const CaseCalibration& cal,
                              const MeasuredSource& target) {
  PreparedTarget t;
  t.source = target;
  t.measured = import_source(target);
  t.ranks = ranks_of(t.measured, target, c.file);
  t.in_sample = same_file(target.file, c.calibration.file);
  TargetRun run;
  if (c.kind == CaseKind::trace) {
    run = prepare_trace_target(cal, t);
  } else if (c.kind == CaseKind::per_layer) {
    prepare_per_layer_target(c, target, t);
  } else {
    prepare_latency_target(c, target, t);
    run.iterations = 2;
  }
  t.scenario = target_scenario(c, cal, target, t, run);
  return t;
}

TargetComparison compare_target(const ValidationCase& c, const PreparedTarget& t,
                                const json& summary, const MeasuredTrace& simulated) {
  TargetComparison out;
  auto row = [&](const std::string& metric, const std::string& what, double measured, double sim) {
    ValidationRow r;
    r.case_name = c.name;
    r.target = t.source.name;
    r.metric = metric;
    r.what = what;
    r.in_sample = t.in_sample;
    r.measured_s = measured;
    r.simulated_s = sim;
    r.error = relative_error(sim, measured);
    return r;
  };
  const double sim_iter = summary.at("iteration_time_s").at("mean").get<double>();
  const double sim_comm = summary.at("comm_s_per_iter").get<double>();

  // Simulated duration of each bucket: mean over the steady-state iterations.
  std::map<int, std::pair<double, int>> sim_bucket;
  for (const auto& col : simulated.collectives) {
    if (col.step < simulated.warmup_steps) continue;
    auto& [sum, n] = sim_bucket[col.index];
    sum += col.time_s;
    ++n;
  }
  double measured_comm = 0;
  std::vector<double> errs;
  for (size_t b = 0; b < t.bucket_measured.size(); ++b) {
    const auto& ms = t.bucket_measured[b];
    if (ms.empty()) continue;
    auto it = sim_bucket.find(static_cast<int>(b));
    if (it == sim_bucket.end() || it->second.second == 0) continue;
    const double sim = it->second.first / it->second.second;
    double mean = 0;
    for (const auto* m : ms) {
      std::string what =
          c.kind == CaseKind::trace
              ? fmt::format("step {} bucket {} ({})", m->step, b, format_bytes(m->bytes))
          : c.kind == CaseKind::per_layer
              ? fmt::format("allreduce {} {} ({})", b, m->detail, format_bytes(m->bytes))
              : format_bytes(m->bytes);
      out.collectives.push_back(row("collective", what, m->time_s, sim));
      errs.push_back(std::abs(out.collectives.back().error));
      mean += m->time_s;
    }
    measured_comm += mean / static_cast<double>(ms.size());
  }
  out.collective_median_abs_error = errs.empty() ? kUnknown : median(errs);

  if (!t.steps.empty()) {
    double mean = 0;
    for (const auto* st : t.steps) {
      out.steps.push_back(row("iteration", fmt::format("step {}", st->step), st->time_s, sim_iter));
      mean += st->time_s;
    }
    mean /= static_cast<double>(t.steps.size());
    out.summary.push_back(row("iteration",
                              c.kind == CaseKind::per_layer
                                  ? std::string("backward + allreduces, no overlap")
                                  : fmt::format("mean of {} steps", t.steps.size()),
                              mean, sim_iter));
  }
  if (measured_comm > 0) {
    const size_t n = t.bucket_measured.size();
    out.summary.push_back(
        row("comm",
            c.kind == CaseKind::latency
                ? fmt::format("{} sizes >= {}, summed", n, format_bytes(c.min_bytes))
            : c.kind == CaseKind::per_layer ? fmt::format("{} allreduces, summed", n)
                                            : fmt::format("{} allreduces per step", n),
            measured_comm, sim_comm));
  }
  return out;
}

double median_abs_error(const std::vector<ValidationRow>& rows, const std::string& metric,
                        bool out_of_sample_only) {
  std::vector<double> v;
  for (const auto& r : rows)
    if ((metric.empty() || r.metric == metric) && !(out_of_sample_only && r.in_sample))
      v.push_back(std::abs(r.error));
  return v.empty() ? kUnknown : median(v);
}

json row_to_json(const ValidationRow& r) {
  return {{"name", r.case_name + " / " + r.target + " / " + r.metric +
                       (r.what.empty() ? "" : " / " + r.what)},
          {"case", r.case_name},
          {"target", r.target},
          {"metric", r.metric},
          {"what", r.what},
          {"in_sample", r.in_sample},
          {"measured_s", r.measured_s},
          {"simulated_s", r.simulated_s},
          {"error", r.error}};
}

std::string format_bytes(double b) {
  if (!std::isfinite(b)) return "? B";
  const double kib = 1024, mib = 1048576;
  if (b >= mib && std::fmod(b, mib) == 0) return fmt::format("{:.0f} MiB", b / mib);
  if (b >= kib && std::fmod(b, kib) == 0 && b < mib) return fmt::format("{:.0f} KiB", b / kib);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

}  // namespace sgdsim
