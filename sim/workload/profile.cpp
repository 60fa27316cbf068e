#include "sim/workload/profile.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/scenario/json_reader.hpp"

namespace sgdsim {

int64_t Profile::total_parameters() const {
  int64_t n = 0;
  for (const auto& l : layers)
    if (__builtin_add_overflow(n, l.parameters, &n)) return INT64_MAX;  // absurd input: saturate
  return n;
}

Profile parse_profile(const nlohmann::json& j, const std::string& file,
                      const std::string& pointer) {
  JsonObject o(j, file, pointer, nullptr, nullptr);
  Profile p;
  p.name = o.get_string("name");
  auto optional_string = [&](const std::string& key) {
    return o.has(key) ? o.get_string(key, true) : std::string();
  };
  p.source = optional_string("source");
  (void)optional_string("notes");
  p.measured = o.get_choice("kind", {"measured", "flops"}) == "measured";
  if (p.measured) p.batch_size = static_cast<int>(o.get_int("batch_size", 1, 1 << 24));
  if (o.has("bytes_per_parameter"))
    p.bytes_per_parameter = static_cast<int>(o.get_int("bytes_per_parameter", 1, 64));
  if (!o.has("layers") || !o.raw("layers").is_array() || o.raw("layers").empty())
    o.fail("layers", "a non-empty array of layer objects");
  const auto& layers = o.raw("layers");
  constexpr int64_t kMaxParameters = limits::kMaxParameters;
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    JsonObject l(layers[i], file, o.pointer_of("layers") + "/" + std::to_string(i));
    ProfileLayer pl;
    pl.name = l.get_string("name");
    pl.parameters = l.get_int("parameters", 0, kMaxParameters);
    total += pl.parameters;
    if (total > kMaxParameters)
      throw InputError(file, l.pointer_of("parameters"),
                       "the layers' parameters add up to more than 1e15");
    if (p.measured) {
      pl.forward_s = l.get_number("forward_ms", 0.0, 1e9) * 1e-3;
      pl.backward_s = l.get_number("backward_ms", 0.0, 1e9) * 1e-3;
    } else {
      pl.forward_flops = l.get_number("forward_flops", 0.0, 1e21);
      pl.backward_flops = l.get_number("backward_flops", 0.0, 1e21);
    }
    l.finish();
    p.layers.push_back(std::move(pl));
  }
  o.finish();
  return p;
}

Profile load_profile(const std::string& path) {
  return parse_profile(parse_json_file(path), path, "");
}

}  // namespace sgdsim
