#include "sim/scenario/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "models/learn/predictor.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/collective_field.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/platform_field.hpp"
#include "sim/scenario/scheme_field.hpp"
#include "sim/scenario/training_field.hpp"
#include "sim/scenario/workload_field.hpp"

namespace sgdsim {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
/// The defaults table of fields the scenario layer reads itself; the registered algorithms'
/// options add theirs from their declarations (scenario_defaults). A scheme's options are not in
/// it (an absent `scheme` object is the table's, holding only the keys every type reads): their
/// declarations give their defaults (read_scheme_params).
json own_defaults() {
  return json::parse(R"({
    "name": "",
    "description": "",
    "seed": 1,
    "platform": {
      "technology": "tcp",
      "generate": {
        "topology": "star",
        "node_link": {"bandwidth": "100Gbps", "latency": "1us", "technology": "tcp"},
        "intra_node_link": {"bandwidth": "16GBps", "latency": "1us", "technology": "pcie"},
        "device_speed": "15Tf",
        "nodes_per_leaf": 16,
        "oversubscription": 1
      }
    },
    "network_model": "links",
    "simgrid_cfg": [],
    "gradient_precision": "fp32",
    "device": {"efficiency": 1.0, "io_time_per_sample": "0s"},
    "workers": {"count": 1, "placement": "block"},
    "batch_size": 32,
    "iterations": 20,
    "warmup_iterations": 2,
    "steady_state": 0,
    "workload": {"chakra": [], "optimizer": "sgdsim"},
    "scheme": {"type": "sync", "overlap": "wfbp", "fusion_bytes": "25MB", "first_bucket_bytes": 0},
    "collective": {"algorithm": "ring", "chunk_bytes": 0, "channels": 1, "servers": 0},
    "fidelity": "flow",
    "flow_symmetry": "none",
    "flow_private_routes": "simgrid",
    "variability": {"compute_jitter": 0.0, "jitter_distribution": "lognormal", "link_noise": 0.0,
                    "stragglers": {"fraction": 0.0, "slowdown": 1.0, "redraw": false}},
    "output": {"timeline": true},
    "background": {"jobs": 1, "gap": "0s", "offset": "0s"},
    "training": {"model": {"type": "mlp", "hidden": [256, 128]}, "dataset": "fashion-mnist",
                 "learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.0, "eval_every": 20,
                 "shards": "iid", "lr_schedule": {"type": "constant"},
                 "synthetic": {"dimension": 32, "overlap": 1.5, "label_noise": 0.0}}
  })");
}
}  // namespace

const json& scenario_defaults() {
  // The single place where defaults live: docs/fields.md is made from the same declarations.
  static const json defaults = [] {
    json d = own_defaults();
    for (const DeclaredCollectiveParam& p : collective_params())
      d["collective"][p.param.param.key] = p.param.param.default_value;
    for (const learn::DeclaredPredictorParam& p : learn::predictor_params())
      d["training"][p.param.key] = p.param.default_value;
    return d;
  }();
  return defaults;
}

void apply_override(json& raw, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", "",
                     "expected PATH=VALUE (e.g. workers.count=8), got \"" + assignment + "\"");
  std::string path = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  // Not JSON, or a number out of range ("1e999"): the text as a string.
  json value = parse_json_value(text, "--set " + path).value_or(json(text));
  std::string pointer;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError("--set", "", "empty component in path \"" + path + "\"");
    if (part.find_first_of("/~") != std::string::npos)
      throw InputError(
          "--set", "",
          "path \"" + path + "\": components are separated by '.' and may not contain '/' or '~'");
    pointer += "/" + part;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // Refuse to replace a non-object parent silently: "model.x" when model is a string.
  json::json_pointer ptr(pointer);
  json::json_pointer parent = ptr.parent_pointer();
  while (!parent.empty() && !raw.contains(parent)) parent = parent.parent_pointer();
  if (!raw.at(parent).is_object())
    throw InputError("--set", parent.to_string(),
                     "cannot set \"" + path + "\": " + parent.to_string() + " is " +
                         show_value(raw.at(parent)) + ", not an object");
  raw[ptr] = value;
}

std::string data_dir() {
  if (const char* env = std::getenv("SGDSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path share = exe.parent_path().parent_path() / "share" / "sgdsim";
    if (fs::is_directory(share / "models" / "profiles", ec)) return share.string();
  }
  return SGDSIM_SOURCE_DATA_DIR;
}

std::string resolve_data_path(const std::string& path, const std::string& base_dir,
                              const std::string& file, const std::string& pointer) {
  fs::path p(path);
  std::vector<fs::path> tried;
  if (p.is_absolute()) {
    tried.push_back(p);
  } else {
    tried.push_back(fs::path(base_dir) / p);
    tried.push_back(p);
    tried.push_back(fs::path(data_dir()) / p);
  }
  std::error_code ec;
  for (const auto& t : tried)
    if (fs::is_regular_file(t, ec)) return t.lexically_normal().string();
  for (const auto& t : tried)  // a directory or a device is there, but no file to read
    if (fs::exists(t, ec))
      throw InputError(file, pointer,
                       "\"" + path + "\" is not a regular file (" + t.lexically_normal().string() +
                           " is a " + (fs::is_directory(t, ec) ? "directory" : "special file") +
                           "): expected a file");
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t.lexically_normal().string();
  throw InputError(file, pointer, "file \"" + path + "\" not found (looked at " + where + ")");
}

namespace {

/// Bytes per gradient element: "fp32" (4), "fp16" or "bf16" (2), or a number of bytes.
double read_precision(JsonObject& root) {
  const std::vector<std::string> names = {"fp32", "fp16", "bf16"};
  if (!root.has("gradient_precision")) return root.get_choice("gradient_precision", names), 4.0;
  const json& v = root.raw("gradient_precision");
  if (v.is_number()) return root.get_number("gradient_precision", 0.0, 64.0, true);
  if (v.is_string()) {
    const std::string p = v.get<std::string>();
    if (std::find(names.begin(), names.end(), p) != names.end()) {
      root.get_choice("gradient_precision", names);
      return p == "fp32" ? 4.0 : 2.0;
    }
  }
  root.fail("gradient_precision", "\"fp32\", \"fp16\", \"bf16\" or bytes per parameter (> 0)");
}

/// Checks the workers against the generated platform and records workers.per_node.
void read_worker_layout(Scenario& s, std::optional<int> per_node, const std::string& file) {
  if (s.platform.generate) {
    const auto& gp = *s.platform.generate;
    s.workers_per_node = per_node.value_or(gp.devices_per_node);
    if (s.workers_per_node > gp.devices_per_node)
      throw InputError(file, "/workers/per_node",
                       fmt::format("expected at most {} (devices per node of the platform), got {}",
                                   gp.devices_per_node, s.workers_per_node));
    int64_t capacity = static_cast<int64_t>(gp.nodes) * s.workers_per_node;
    if (s.workers > capacity)
      throw InputError(file, "/workers/count",
                       fmt::format("expected at most {} ({} nodes x {} workers per node), got {}",
                                   capacity, gp.nodes, s.workers_per_node, s.workers));
  } else {
    s.workers_per_node = per_node.value_or(1);
  }
  s.resolved["workers"]["per_node"] = s.workers_per_node;
}

/// ECMP collisions are contention (flow fidelity only); a random placement draws nodes of a
/// generated platform.
void check_scale_mechanisms(const Scenario& s, const std::string& file) {
  const auto& gp = s.platform.generate;
  if (gp && gp->spines > 1 && s.fidelity == Fidelity::analytic)
    throw InputError(file, "/platform/generate/spines",
                     fmt::format("spines {} (ECMP hash collisions on the spine links) needs "
                                 "fidelity \"flow\": analytic fidelity times each collective "
                                 "contention-free, got fidelity \"analytic\"",
                                 gp->spines));
  if (!gp && s.placement == "random")
    throw InputError(file, "/workers/placement",
                     "expected \"block\" or \"cyclic\" with a platform file (\"random\" "
                     "draws nodes of a generated platform), got \"random\"");
}

/// Network model, gradient precision and SimGrid options.
void read_network(JsonObject& root, Scenario& s, const std::string& file) {
  s.network_model = *network_model_named(root.get_choice("network_model", network_model_names()));
  s.gradient_bytes_per_parameter = read_precision(root);
  s.simgrid_cfg = root.get_string_list("simgrid_cfg");
  for (size_t i = 0; i < s.simgrid_cfg.size(); ++i) {
    const std::string& o = s.simgrid_cfg[i];
    const size_t colon = o.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.size())
      throw InputError(file, root.pointer_of("simgrid_cfg") + "/" + std::to_string(i),
                       "expected a SimGrid option NAME:VALUE (e.g. \"network/TCP-gamma:0\"), "
                       "got \"" +
                           o + "\"");
  }
}

/// The model: a profile name or path, an inline profile, "same" (returns true: derived from
/// training.model later), or none with workload.chakra.
bool read_model(JsonObject& root, Scenario& s, const std::string& base_dir,
                const std::string& file) {
  bool model_same = false;
  if (!s.chakra_files.empty()) {
    if (root.has("model"))
      root.fail("model", "no model with workload.chakra (the ET files are the workload)");
  } else {
    if (!root.has("model"))
      root.fail("model",
                "a profile path such as \"models/profiles/resnet50.json\", a profile name such as "
                "\"resnet50\", or an inline profile object");
    const json& model = root.raw("model");
    if (model.is_string() && model.get<std::string>() == "same") {
      model_same = true;  // the profile is derived from training.model once that is parsed
      s.resolved["model"] = "same";
    } else if (model.is_string()) {
      std::string m = root.get_string("model");
      if (m.find('/') == std::string::npos && m.find(".json") == std::string::npos)
        m = "models/profiles/" + m + ".json";
      s.model_path = resolve_data_path(m, base_dir, file, "/model");
    } else if (model.is_object()) {
      s.model_inline = model;
      s.resolved["model"] = model;
    } else {
      root.fail("model", "a profile path, a profile name or an inline profile object");
    }
  }
  return model_same;
}

void read_device(JsonObject& root, Scenario& s) {
  JsonObject d = root.get_object("device");
  s.device.efficiency = d.get_number("efficiency", 0.0, 1.0, true);
  if (d.has("speed")) s.device.speed_flops = d.get_speed_flops("speed");
  s.device.io_time_per_sample_s = d.get_time_s("io_time_per_sample");
  if (d.has("memory_bandwidth"))
    s.device.memory_bandwidth_Bps = d.get_bandwidth_Bps("memory_bandwidth");
  if (d.has("optimizer")) {
    s.device.optimizer = d.get_choice("optimizer", {"sgd", "adam", "adamw_loop", "adam_amp"});
    if (s.device.memory_bandwidth_Bps <= 0)
      d.fail("memory_bandwidth",
             "a bandwidth such as \"900GBps\" (the device's memory bandwidth) with "
             "device.optimizer");
  }
  if (d.has("memory")) {
    s.device.memory_bytes = d.get_size_bytes("memory");
    if (s.device.memory_bytes <= 0) d.fail("memory", "a size > 0 such as \"80GB\"");
  }
  if (d.has("memory_overflow")) {
    s.device.memory_overflow = d.get_choice("memory_overflow", {"error", "flag"});
    if (s.device.memory_bytes <= 0)
      d.fail("memory", "a size such as \"80GB\" with memory_overflow");
  }
  if (d.has("overlap_slowdown"))
    s.device.overlap_slowdown = d.get_number("overlap_slowdown", 0, 10);
  if (d.has("calibrate")) {
    JsonObject c = d.get_object("calibrate");
    s.device.calibrate_iteration_time_s = c.get_time_s("iteration_time", true);
    s.device.calibrate_batch_size = static_cast<int>(c.get_int("batch_size", 1, 1 << 24));
    if (c.has("includes_optimizer"))
      s.device.calibrate_includes_optimizer = c.get_bool("includes_optimizer");
    else
      c.record("includes_optimizer", false);
    c.finish();
  }
  d.finish();
}

/// Batch size, iterations, warm-up and the steady-state stop.
void read_iterations(JsonObject& root, Scenario& s, const std::string& file) {
  const json& defaults = scenario_defaults();
  s.batch_size = static_cast<int>(root.get_int("batch_size", 1, 1 << 24));
  s.iterations = static_cast<int>(root.get_int("iterations", 1, 100'000'000));
  if (root.has("warmup_iterations")) {
    s.warmup_iterations = static_cast<int>(root.get_int("warmup_iterations", 0, 100'000'000));
  } else {
    // The default warm-up never exceeds what a short run can spare.
    s.warmup_iterations = std::min(defaults["warmup_iterations"].get<int>(), s.iterations - 1);
    s.resolved["warmup_iterations"] = s.warmup_iterations;
  }
  if (s.warmup_iterations >= s.iterations)
    throw InputError(file, "/warmup_iterations",
                     fmt::format("expected an integer < iterations ({}), got {}", s.iterations,
                                 s.warmup_iterations));

  s.steady_state = static_cast<int>(root.get_int("steady_state", 0, 100'000'000));
  if (s.steady_state == 1)
    throw InputError(file, "/steady_state",
                     "expected 0 (off) or an integer >= 2 (iterations of equal time that end the "
                     "run), got 1");
}

void read_variability(JsonObject& root, Scenario& s, const std::string& file) {
  JsonObject v = root.get_object("variability");
  s.variability.compute_jitter_cv = v.get_number("compute_jitter", 0.0, 10.0);
  s.variability.jitter_distribution =
      v.get_choice("jitter_distribution", {"lognormal", "normal", "uniform"});
  if (s.variability.jitter_distribution == "uniform" &&
      s.variability.compute_jitter_cv > 1 / std::sqrt(3.0))
    throw InputError(
        file, "/variability/compute_jitter",
        fmt::format("expected at most {:.4f} for a uniform jitter (factors stay > 0), got {}",
                    1 / std::sqrt(3.0), s.variability.compute_jitter_cv));
  s.variability.link_noise_cv = v.get_number("link_noise", 0.0, 10.0);
  JsonObject st = v.get_object("stragglers");
  s.variability.straggler_fraction = st.get_number("fraction", 0.0, 1.0);
  s.variability.straggler_slowdown = st.get_number("slowdown", 1.0, 1e6);
  s.variability.straggler_redraw = st.get_bool("redraw");
  st.finish();
  v.finish();
}

/// Other jobs' traffic: flow fidelity only (it matters through the links it shares), every rank.
void read_background(JsonObject& root, Scenario& s, const std::string& file) {
  JsonObject b = root.get_object("background");
  s.background.jobs = static_cast<int>(b.get_int("jobs", 1, 1024));
  s.background.bytes = b.get_size_bytes("bytes");
  if (s.background.bytes <= 0) b.fail("bytes", "a size > 0 (each operation of the other jobs)");
  s.background.gap_s = b.get_time_s("gap");
  s.background.offset_s = b.get_time_s("offset");
  b.finish();
  if (s.fidelity != Fidelity::flow)
    throw InputError(file, "/background",
                     "other jobs' traffic slows the training only where it shares links: it needs "
                     "fidelity \"flow\", got \"analytic\"");
  if (s.flow_symmetry != FlowSymmetry::none)
    throw InputError(file, "/background",
                     "other jobs' traffic needs flow_symmetry \"none\" (their messages do not "
                     "rotate with the training's), got \"rotation\"");
  if (s.workers < 2)
    throw InputError(file, "/background",
                     "other jobs' collectives run over the workers' ranks: they need 2 workers or "
                     "more, got 1");
}

constexpr const char* kSafeName =
    "a file name: no \"/\", no control character, not \".\" or \"..\", at most 255 bytes";

/// Whether `name` can be a folder inside results/ without leaving it or breaking a listing.
bool safe_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (unsigned char c : name)
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

Scenario parse_scenario(const json& raw, const std::string& file) {
  Scenario s;
  s.source_file = file;
  const json& defaults = scenario_defaults();
  s.resolved = json::object();
  JsonObject root(raw, file, "", &defaults, &s.resolved);
  std::string base_dir = fs::path(file).parent_path().string();
  if (base_dir.empty()) base_dir = ".";

  s.name = root.get_string("name", true);
  if (!s.name.empty() && !safe_file_name(s.name))
    root.fail("name", kSafeName);  // it names the default output folder results/<name>
  if (s.name.empty()) {
    s.name = fs::path(file).stem().string();
    if (!safe_file_name(s.name))
      throw InputError(file, "/name",
                       std::string("no \"name\", and the file's name \"") + s.name +
                           "\" is no safe folder name: give a \"name\" (" + kSafeName + ")");
    s.resolved["name"] = s.name;
  }
  s.description = root.get_string("description", true);
  s.seed = static_cast<uint64_t>(root.get_int("seed", 0));

  // Workers first: the generated platform's defaults derive from them.
  JsonObject w = root.get_object("workers");
  s.workers = static_cast<int>(w.get_int("count", 1, 1 << 24));
  std::optional<int> per_node;
  if (w.has("per_node")) per_node = static_cast<int>(w.get_int("per_node", 1, 1 << 20));
  s.placement = w.get_choice("placement", {"block", "cyclic", "random"});
  w.finish();

  // Dedicated servers need hosts of their own: size a generated platform for them.
  const int extra_hosts = raw_scheme_extra_hosts(raw);
  const int dedicated_nodes = raw_collective_server_nodes(raw);
  read_platform_field(root, s, base_dir, s.workers + extra_hosts, per_node, dedicated_nodes);
  read_worker_layout(s, per_node, file);
  read_network(root, s, file);
  read_workload_field(root, s, base_dir);
  const bool model_same = read_model(root, s, base_dir, file);
  read_device(root, s);
  read_iterations(root, s, file);
  read_scheme_field(root, raw, s);
  read_collective_field(root, s);
  s.fidelity = *fidelity_named(root.get_choice("fidelity", fidelity_names()));
  // At flow fidelity a collective's channels are concurrent messages that share a pair's
  // stream limit (analytic's closed form shares it already).
  if (s.platform.generate && s.fidelity == Fidelity::flow)
    s.platform.generate->stream_sharing_messages = s.collective_channels;
  s.flow_symmetry = *flow_symmetry_named(root.get_choice("flow_symmetry", flow_symmetry_names()));
  const std::string timing =
      root.get_choice("flow_private_routes", {"auto", "closed_form", "simgrid"});
  s.flow_closed_form_private_routes = timing != "simgrid";
  s.flow_closed_form_required = timing == "closed_form";
  check_scale_mechanisms(s, file);
  read_variability(root, s, file);
  if (root.has("training")) read_training_field(root, s, file);
  if (root.has("background")) read_background(root, s, file);
  if (model_same) {
    if (!s.training.enabled)
      root.fail("model",
                "a profile (\"same\" needs a training section: it times the trained model)");
    s.model_inline = training_model_profile(s.training);
  }
  JsonObject out = root.get_object("output");
  s.output_timeline = out.get_bool("timeline");
  out.finish();
  root.finish();
  return s;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  json raw = parse_json_file(file);
  if (!raw.is_object())
    throw InputError(file, "/", "expected a JSON object, got " + show_value(raw));
  for (const auto& o : overrides) apply_override(raw, o);
  return parse_scenario(raw, file);
}

}  // namespace sgdsim
