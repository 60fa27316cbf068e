#include "sim/scenario/training_field.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/learn/predictor.hpp"
#include "sim/core/det_math.hpp"
#include "sim/core/errors.hpp"

namespace sgdsim {

using nlohmann::json;

std::vector<int> TrainingSpec::cnn_sides() const {
  std::vector<int> sides{28};
  for (size_t l = 0; l < channels.size(); ++l) sides.push_back((sides.back() - kernel + 1) / 2);
  return sides;
}

std::string TrainingSpec::layers_name() const {
  std::string name = fmt::format("{}", input_dim());
  if (model == "cnn")
    for (int c : channels) name += fmt::format("-c{}k{}", c, kernel);
  if (model != "softmax")
    for (int h : hidden) name += fmt::format("-{}", h);
  return name + fmt::format("-{}", classes());
}

nlohmann::json training_model_profile(const TrainingSpec& t) {
  json layers = json::array();
  std::vector<int> widths{t.input_dim()};
  if (t.model == "cnn") {
    const std::vector<int> sides = t.cnn_sides();
    int in_c = 1;
    for (size_t l = 0; l < t.channels.size(); ++l) {
      const int out_c = t.channels[l], conv_side = sides[l] - t.kernel + 1;
      const double flops = 2.0 * out_c * in_c * t.kernel * t.kernel * conv_side * conv_side;
      layers.push_back({{"name", fmt::format("conv{}", l + 1)},
                        {"parameters", int64_t{out_c} * (int64_t{in_c} * t.kernel * t.kernel + 1)},
                        {"forward_flops", flops},
                        {"backward_flops", 2 * flops}});
      in_c = out_c;
    }
    widths = {in_c * sides.back() * sides.back()};
  }
  if (t.model != "softmax") widths.insert(widths.end(), t.hidden.begin(), t.hidden.end());
  widths.push_back(t.classes());
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const double flops = 2.0 * widths[l] * widths[l + 1];
    layers.push_back({{"name", fmt::format("dense{}", l + 1)},
                      {"parameters", int64_t{widths[l]} * widths[l + 1] + widths[l + 1]},
                      {"forward_flops", flops},
                      {"backward_flops", 2 * flops}});
  }
  const std::string name = t.model + "-" + t.layers_name();
  return {{"name", name},
          {"source", t.model == "cnn"
                         ? "model: \"same\": derived from training.model (conv and dense layers)"
                         : "model: \"same\": derived from training.model (dense layers)"},
          {"kind", "flops"},
          {"bytes_per_parameter", 4},
          {"layers", layers}};
}

namespace {

/// training.model: the proxy network's type and layers.
void read_training_model(JsonObject& t, Scenario& s) {
  const json& defaults = scenario_defaults();
  TrainingSpec& tr = s.training;
  JsonObject m = t.get_object("model");
  tr.model = m.get_choice("type", {"mlp", "softmax", "cnn"});
  // An array of integers in [1, max] (its default when absent), recorded as resolved.
  auto int_array = [&](const std::string& key, const json& fallback, int64_t max, size_t most,
                       const std::string& expected) {
    const json& v = m.has(key) ? m.raw(key) : fallback;
    bool ok = v.is_array() && v.size() <= most;
    for (const auto& x : v)
      ok = ok && x.is_number_integer() && x.get<int64_t>() >= 1 && x.get<int64_t>() <= max;
    if (!ok) m.fail(key, expected);
    std::vector<int> out;
    for (const auto& x : v) out.push_back(x.get<int>());
    s.resolved["training"]["model"][key] = v;
    return out;
  };
  if (tr.model == "mlp")
    tr.hidden = int_array("hidden", defaults.at(json::json_pointer("/training/model/hidden")),
                          65536, 64, "an array of layer widths >= 1 such as [256, 128]");
  if (tr.model == "cnn") {
    const std::string expected =
        "an array of 1 to 3 conv channel counts in [1, 256] such as [8, 16]";
    tr.channels = int_array("channels", json::array({8, 16}), 256, 3, expected);
    if (tr.channels.empty()) m.fail("channels", expected);
    tr.kernel = static_cast<int>(m.has("kernel") ? m.get_int("kernel", 1, 9) : 5);
    s.resolved["training"]["model"]["kernel"] = tr.kernel;
    tr.hidden = int_array("hidden", json::array({64}), 65536, 64,
                          "an array of layer widths >= 1 such as [64]");
    // 28x28 images: each conv (valid, stride 1) and 2x2 pool must leave at least one pixel.
    const std::vector<int> sides = tr.cnn_sides();
    for (size_t l = 0; l < tr.channels.size(); ++l)
      if (sides[l] < tr.kernel + 1)
        m.fail("channels", fmt::format("at most {} conv layers with kernel {} (conv layer {} "
                                       "would get {}x{} inputs from 28x28 images)",
                                       l, tr.kernel, l + 1, sides[l], sides[l]));
  }
  m.finish();
}

}  // namespace

void read_training_field(JsonObject& root, Scenario& s, const std::string& file) {
  JsonObject t = root.get_object("training");
  TrainingSpec& tr = s.training;
  tr.enabled = true;
  if (s.scheme.accumulation_steps > 1)
    throw InputError(file, "/scheme/accumulation_steps",
                     fmt::format("expected 1 with a training section (the math trains one "
                                 "mini-batch per step), got {}",
                                 s.scheme.accumulation_steps));
  read_training_model(t, s);
  tr.dataset = t.get_choice("dataset", {"fashion-mnist", "synthetic"});
  if (tr.model == "cnn" && tr.dataset != "fashion-mnist")
    throw InputError(file, "/training/model/type",
                     "expected mlp or softmax with dataset \"synthetic\" (cnn needs the 28x28 "
                     "images of fashion-mnist), got \"cnn\"");
  tr.learning_rate = t.get_number("learning_rate", 0.0, 100.0, true);
  tr.momentum = t.get_number("momentum", 0.0, 0.9999);
  tr.weight_decay = t.get_number("weight_decay", 0.0, 1.0);
  tr.eval_every = static_cast<int>(t.get_int("eval_every", 1, 1 << 24));
  if (t.has("target_accuracy"))
    tr.target_accuracy = t.get_number("target_accuracy", 0.0, 1.0, true);
  // Every registered predictor's options, whichever predictor runs (a resolved scenario lists
  // them all, as it lists every algorithm's collective options).
  for (const learn::DeclaredPredictorParam& d : learn::predictor_params())
    tr.predictor_values.set(d.param.key, read_param(t, d.param));
  tr.shards = t.get_choice("shards", {"iid", "by_label"});
  JsonObject lr = t.get_object("lr_schedule");
  tr.lr_schedule = lr.get_choice("type", {"constant", "step", "warmup"});
  if (tr.lr_schedule == "step") {
    tr.lr_step_every = static_cast<int>(lr.get_int("every", 1, 1 << 24));
    tr.lr_step_factor = lr.get_number("factor", 0.0, 1.0, true);
  }
  if (tr.lr_schedule == "warmup")
    tr.warmup_iterations = static_cast<int>(lr.get_int("iterations", 1, 1 << 24));
  lr.finish();
  JsonObject syn = t.get_object("synthetic");
  tr.synthetic_dimension = static_cast<int>(syn.get_int("dimension", 1, 4096));
  tr.synthetic_overlap = syn.get_number("overlap", 0.0, 100.0);
  tr.synthetic_label_noise = syn.get_number("label_noise", 0.0, 1.0);
  syn.finish();
  t.finish();
}

double TrainingSpec::learning_rate_at(int iteration, int workers) const {
  if (lr_schedule == "step")
    return learning_rate * detmath::pow_int(lr_step_factor, iteration / lr_step_every);
  if (lr_schedule == "warmup") {
    // Goyal et al.: the target rate scales with the workers; reach it linearly.
    const double target = learning_rate * workers;
    const double f = std::min(1.0, static_cast<double>(iteration) / warmup_iterations);
    return learning_rate + (target - learning_rate) * f;
  }
  return learning_rate;
}

}  // namespace sgdsim
