#include "sim/workload/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/workload/chakra_workload.hpp"

namespace sgdsim {

std::vector<Bucket> make_buckets(const std::vector<LayerCost>& layers, double fusion_bytes,
                                 double first_bucket_bytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  bool has_open = false;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    if (!has_open) {
      open = Bucket{l, l, 0.0, 0.0};
      has_open = true;
    }
    open.first_layer = l;
    open.bytes += layers[l].gradient_bytes;
    open.backward_s += layers[l].backward_s;
    const double cap =
        buckets.empty() && first_bucket_bytes > 0 ? first_bucket_bytes : fusion_bytes;
    bool closes = layers[l].gradient_bytes > 0 && (cap <= 0 || open.bytes >= cap);
    if (closes) {
      buckets.push_back(open);
      has_open = false;
    }
  }
  if (has_open) {
    // Leading parameter-free layers (run last in backward) extend the final bucket.
    if (buckets.empty() || open.bytes > 0) {
      buckets.push_back(open);
    } else {
      buckets.back().first_layer = open.first_layer;
      buckets.back().backward_s += open.backward_s;
    }
  }
  return buckets;
}

std::vector<Bucket> merge_buckets_mgwfbp(const std::vector<Bucket>& buckets, double alpha_s,
                                         const std::function<double(double)>& comm_s) {
  std::vector<Bucket> out;
  if (buckets.empty()) return out;
  Bucket current = buckets[0];
  double ready = current.backward_s;  // when the current bucket's gradients are all ready
  double stream_free = 0;             // when the collective stream is free
  for (size_t k = 1; k < buckets.size(); ++k) {
    const Bucket& next = buckets[k];
    const double next_ready = ready + next.backward_s;
    const double start = std::max(ready, stream_free);
    const double finish = start + comm_s(current.bytes);
    const bool merge = finish > next_ready && (start >= next_ready || next_ready - start < alpha_s);
    if (merge) {
      current.first_layer = next.first_layer;
      current.bytes += next.bytes;
      current.backward_s += next.backward_s;
    } else {
      out.push_back(current);
      stream_free = finish;
      current = next;
    }
    ready = next_ready;
  }
  out.push_back(current);
  return out;
}

std::vector<Bucket> fuse_buckets_horovod(const std::vector<LayerCost>& layers, double fusion_bytes,
                                         double cycle_s,
                                         const std::function<double(double)>& comm_s) {
  // One bucket per tensor (with the parameter-free layers run beside it), ready once the
  // backward pass has run through it.
  const std::vector<Bucket> tensors = make_buckets(layers, 0);
  std::vector<double> ready_s(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k)
    ready_s[k] = (k > 0 ? ready_s[k - 1] : 0) + tensors[k].backward_s;
  std::vector<Bucket> out;
  size_t next = 0;
  for (double tick_s = cycle_s; next < tensors.size();) {
    if (ready_s[next] > tick_s) {  // idle cycles until the next gradient is ready
      tick_s += cycle_s * std::ceil((ready_s[next] - tick_s) / cycle_s);
      continue;
    }
    double end_s = tick_s;
    Bucket open = tensors[next];
    for (++next; next < tensors.size() && ready_s[next] <= tick_s; ++next) {
      const Bucket& u = tensors[next];
      if (fusion_bytes <= 0 || open.bytes + u.bytes > fusion_bytes) {
        end_s += comm_s(open.bytes);
        out.push_back(open);
        open = u;
        continue;
      }
      open.first_layer = u.first_layer;
      open.bytes += u.bytes;
      open.backward_s += u.backward_s;
    }
    end_s += comm_s(open.bytes);
    out.push_back(open);
    tick_s = std::max(tick_s + cycle_s, end_s);
  }
  return out;
}

double optimizer_bytes_per_parameter(const std::string& optimizer) {
  if (optimizer == "sgd") return 20;
  if (optimizer == "adam") return 28;
  // PyTorch's _single_tensor_adamw, one kernel per operation: param.mul_ 8, exp_avg.mul_ 8 and
  // add_ 12, exp_avg_sq.mul_ 8 and addcmul_ 12, sqrt 8, division 8 and add_ 8 (the
  // denominator's temporaries), param.addcdiv_ 16.
  if (optimizer == "adamw_loop") return 88;
  if (optimizer == "adam_amp") return 40;
  throw InputError(
      "", "/device/optimizer",
      fmt::format("expected sgd, adam, adamw_loop or adam_amp, got \"{}\"", optimizer));
}

double optimizer_step_s(const DeviceSpec& device, double parameters, double effective_flops) {
  if (device.optimizer.empty()) return parameters * kUpdateFlopsPerParameter / effective_flops;
  return parameters * optimizer_bytes_per_parameter(device.optimizer) / device.memory_bandwidth_Bps;
}

namespace {

/// The forward + backward time `device.calibrate` asks for: its time, less one optimizer step
/// where the measurement holds one.
double calibrated_compute_s(const Scenario& s, double parameters, double effective_flops) {
  const double measured_s = *s.device.calibrate_iteration_time_s;
  if (!s.device.calibrate_includes_optimizer) return measured_s;
  const double optimizer_s = optimizer_step_s(s.device, parameters, effective_flops);
  if (optimizer_s >= measured_s)
    throw InputError(
        s.source_file, "/device/calibrate/iteration_time",
        fmt::format("expected more than the optimizer step it includes ({}), got {}",
                    units::format_time_s(optimizer_s), units::format_time_s(measured_s)));
  return measured_s - optimizer_s;
}

}  // namespace

double scenario_device_speed(const Scenario& s) {
  if (s.device.speed_flops) return *s.device.speed_flops;
  if (s.platform.generate) return s.platform.generate->device_speed_flops;
  throw InputError(s.source_file, "/device/speed",
                   "required with a platform file: expected a speed string such as \"15Tf\"");
}

Workload build_workload(const Scenario& s, const Profile& p, double device_speed_flops) {
  Workload w;
  w.model_name = p.name;
  w.measured = p.measured;
  w.parameters = p.total_parameters();
  const double effective_flops = device_speed_flops * s.device.efficiency;
  // Per-layer time at batch b: measured times scale linearly from the profile's batch size.
  auto layer_time = [&](double measured_s, double flops_per_sample, int batch) {
    return p.measured ? measured_s * batch / p.batch_size
                      : flops_per_sample * batch / effective_flops;
  };
  double scale = 1.0;
  if (s.device.calibrate_iteration_time_s) {
    double t = 0;
    for (const auto& l : p.layers)
      t += layer_time(l.forward_s, l.forward_flops, s.device.calibrate_batch_size) +
           layer_time(l.backward_s, l.backward_flops, s.device.calibrate_batch_size);
    if (t <= 0)
      throw InputError(s.source_file, "/device/calibrate",
                       "cannot calibrate a profile whose layers take no time");
    scale = calibrated_compute_s(s, static_cast<double>(w.parameters), effective_flops) / t;
  }
  // Profiles state fp32 gradients; gradient_precision rescales what travels (fp16: half).
  const double precision = s.gradient_bytes_per_parameter / 4.0;
  for (const auto& l : p.layers) {
    LayerCost c;
    c.name = l.name;
    c.forward_s = scale * layer_time(l.forward_s, l.forward_flops, s.batch_size);
    c.backward_s = scale * layer_time(l.backward_s, l.backward_flops, s.batch_size);
    c.gradient_bytes = static_cast<double>(l.parameters) * p.bytes_per_parameter * precision;
    w.forward_s += c.forward_s;
    w.backward_s += c.backward_s;
    w.gradient_bytes += c.gradient_bytes;
    w.layers.push_back(std::move(c));
  }
  w.buckets = make_buckets(w.layers, s.scheme.fusion_bytes, s.scheme.first_bucket_bytes);
  w.flop_pass_s = static_cast<double>(w.parameters) * kUpdateFlopsPerParameter / effective_flops;
  w.update_s = optimizer_step_s(s.device, static_cast<double>(w.parameters), effective_flops);
  w.io_s = s.device.io_time_per_sample_s * s.batch_size;
  return w;
}

Workload load_workload(const Scenario& s) {
  if (!s.chakra_files.empty()) return load_chakra_workload(s);
  Profile p = s.model_path.empty() ? parse_profile(s.model_inline, s.source_file, "/model")
                                   : load_profile(s.model_path);
  return build_workload(s, p, scenario_device_speed(s));
}

}  // namespace sgdsim
