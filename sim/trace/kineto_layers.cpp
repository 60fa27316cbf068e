// Per-layer profile of a PyTorch DDP trace, from the autograd structure Kineto records.
//
// Models: every top-level forward op (on the thread that ran the forward pass) whose autograd
// node is followed by AccumulateGrad ops owns parameters and is a layer (aten::conv2d,
// aten::batch_norm, aten::linear, ...); the parameter-free top-level ops after it (ReLU, pooling,
// the residual add, the loss) are folded into it, and everything before the first such op (DDP's
// buffer broadcast, zero_grad) is a first, parameter-free layer. Forward op and backward op are
// paired by their "Sequence number" argument (the same link as Kineto's fwdbwd flows); CPU
// launches and GPU kernels by their "correlation" id (the ac2g flows). Time: the step is cut
// into consecutive spans (forward: layer by layer on the forward thread; backward: runs of
// backward ops of one layer on the autograd thread), and each span ends when both its CPU ops
// and the GPU work they launched have finished; a layer's time is how far that completion
// frontier advanced during its spans. The spans add up to the traced forward and backward pass
// whether the step was CPU-bound (then the CPU spans dominate) or GPU-bound (then the kernels
// do). Gradient bytes: each DDP bucket's measured allreduce size is split over the
// AccumulateGrad ops that ran since the previous bucket's launch, in proportion to the threads
// (grid x block) of the elementwise kernel each launched to copy its gradient into the bucket
// (one thread per few elements, the same for every tensor), or equally when no kernel is linked.
//
// Leaves out: module scopes and record_function names (layers are named after their op),
// "Input Dims" shapes, more than one forward or backward thread, unused parameters (an
// AccumulateGrad with no allreduce launch after it fails the per-layer path), traces without
// DDP allreduce launches of known size.
#include "sim/trace/kineto_layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "sim/core/errors.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

namespace {

constexpr const char* kEvaluate = "autograd::engine::evaluate_function: ";

bool has_nccl(const std::string& s) {
  std::string lower(s.size(), ' ');
  std::transform(s.begin(), s.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("nccl") != std::string::npos;
}

/// What a CUDA runtime call launched: the GPU event's end, duration and thread count.
struct GpuWork {
  double end_us = 0;
  double busy_us = 0;
  double threads = -1;
  double bytes = -1;  // memcpys and memsets
};

/// One step's CPU ops and runtime calls (each thread's in start order, outermost first).
struct StepOps {
  double start_us = 0;
  double end_us = 0;
  int64_t step = 0;
  double backlog_us = 0;  // when the GPU work launched before the step had finished
  std::map<int64_t, std::vector<const TraceEvent*>> cpu;      // cpu_op events by thread
  std::map<int64_t, std::vector<const TraceEvent*>> runtime;  // cuda_runtime calls by thread
};

/// Non-NCCL GPU events by the correlation id of their launch.
using GpuIndex = std::unordered_map<int64_t, GpuWork>;

GpuIndex index_gpu(const TraceEventFile& ev) {
  GpuIndex gpu;
  for (const auto& e : ev.events) {
    if (e.ph != 'X' || e.correlation < 0) continue;
    const std::string& cat = ev.str(e.cat);
    if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
    if (cat == "kernel" && has_nccl(ev.str(e.name))) continue;  // comm: simulated separately
    gpu[e.correlation] = {e.ts_us + e.dur_us, e.dur_us, e.threads, e.bytes};
  }
  return gpu;
}

bool earlier(const TraceEvent* a, const TraceEvent* b) {
  return a->ts_us != b->ts_us ? a->ts_us < b->ts_us : a->dur_us > b->dur_us;
}

/// Per step, when the GPU finished the work launched before the step began (a GPU-bound
/// step's kernels queue behind the previous step's).
void set_backlogs(const TraceEventFile& ev, const GpuIndex& gpu, std::vector<StepOps>& steps) {
  std::vector<std::pair<double, double>> launches;  // launch time, GPU end
  for (const auto& e : ev.events) {
    if (e.ph != 'X' || e.correlation < 0 || ev.str(e.cat) != "cuda_runtime") continue;
    auto g = gpu.find(e.correlation);
    if (g != gpu.end()) launches.push_back({e.ts_us, g->second.end_us});
  }
  std::sort(launches.begin(), launches.end());
  for (size_t i = 1; i < launches.size(); ++i)
    launches[i].second = std::max(launches[i].second, launches[i - 1].second);
  for (auto& s : steps) {
    auto it =
        std::lower_bound(launches.begin(), launches.end(), std::make_pair(s.start_us, -1e300));
    s.backlog_us =
        it == launches.begin() ? s.start_us : std::max(s.start_us, std::prev(it)->second);
  }
}

/// The trace's steps with their CPU ops and runtime calls.
std::vector<StepOps> bin_steps(const TraceEventFile& ev, const MeasuredTrace& t,
                               const GpuIndex& gpu) {
  std::vector<StepOps> steps;
  for (const auto& st : t.steps)
    steps.push_back({st.start_s * 1e6, (st.start_s + st.time_s) * 1e6, st.step, 0, {}, {}});
  for (const auto& e : ev.events) {
    if (e.ph != 'X') continue;
    const std::string& cat = ev.str(e.cat);
    const bool cpu = cat == "cpu_op", rt = cat == "cuda_runtime" && e.correlation >= 0;
    if (!cpu && !rt) continue;
    auto it = std::upper_bound(steps.begin(), steps.end(), e.ts_us,
                               [](double x, const StepOps& s) { return x < s.start_us; });
    if (it == steps.begin() || e.ts_us >= std::prev(it)->end_us) continue;
    (cpu ? std::prev(it)->cpu : std::prev(it)->runtime)[e.tid].push_back(&e);
  }
  for (auto& s : steps) {
    for (auto& [tid, ops] : s.cpu) std::sort(ops.begin(), ops.end(), earlier);
    for (auto& [tid, ops] : s.runtime) std::sort(ops.begin(), ops.end(), earlier);
  }
  set_backlogs(ev, gpu, steps);
  return steps;
}

/// The ops starting in [from, to) not nested in an earlier one (ops sorted by `earlier`).
std::vector<const TraceEvent*> top_level(const std::vector<const TraceEvent*>& ops, double from,
                                         double to) {
  std::vector<const TraceEvent*> out;
  double open_end = -1e300;
  for (const auto* e : ops) {
    if (e->ts_us < from || e->ts_us >= to || e->ts_us < open_end) continue;
    out.push_back(e);
    open_end = e->ts_us + e->dur_us;
  }
  return out;
}

/// The completion of a span of thread `tid`'s work: when its CPU part ends (`to`) and the GPU
/// work its runtime calls launched has finished; and that GPU work's busy time.
struct SpanWork {
  double done_us = 0;
  double gpu_us = 0;
  double threads = 0;  // kernels' grid x block, summed (gradient copies)
  bool threads_known = false;
  double bytes = 0;  // memcpy bytes, summed
};

SpanWork span_work(const StepOps& s, const GpuIndex& gpu, int64_t tid, double from, double to) {
  SpanWork w;
  w.done_us = to;
  auto it = s.runtime.find(tid);
  if (it == s.runtime.end()) return w;
  const auto& calls = it->second;
  auto first = std::lower_bound(calls.begin(), calls.end(), from,
                                [](const TraceEvent* e, double x) { return e->ts_us < x; });
  for (auto c = first; c != calls.end() && (*c)->ts_us < to; ++c) {
    auto g = gpu.find((*c)->correlation);
    if (g == gpu.end()) continue;
    w.done_us = std::max(w.done_us, g->second.end_us);
    w.gpu_us += g->second.busy_us;
    if (g->second.threads > 0) w.threads += g->second.threads, w.threads_known = true;
    if (g->second.bytes > 0) w.bytes += g->second.bytes;
  }
  return w;
}

/// The thread most of `pred`'s ops ran on (-1: none).
template <class Pred>
int64_t busiest_thread(const StepOps& s, Pred pred) {
  int64_t best = -1;
  size_t most = 0;
  for (const auto& [tid, ops] : s.cpu) {
    const size_t n = static_cast<size_t>(std::count_if(ops.begin(), ops.end(), pred));
    if (n > most) most = n, best = tid;
  }
  return best;
}

/// One AccumulateGrad op: when it ran, its gradient kernel's threads, the unit it belongs to.
struct GradOp {
  double ts_us = 0;
  double threads = 0;
  bool threads_known = false;
  long unit = -1;
};

/// The autograd structure of one step.
struct StepGraph {
  int64_t fwd_tid = -1, bwd_tid = -1;
  double bwd_start_us = 0, bwd_end_us = 0;
  std::vector<const TraceEvent*> units;           // top-level forward ops
  std::vector<std::pair<double, long>> segments;  // backward runs: start, unit (-1 unknown)
  std::vector<GradOp> grads;                      // AccumulateGrad ops in order
  std::vector<double> copy_bytes;  // DDP's copy-back of each gradient (bucket order), bytes
};

/// The bytes of DDP's gradient copy-backs (copy_bucket_to_grad: one memcpy per parameter, in
/// bucket order, after the allreduces), in time order.
std::vector<double> copy_back_bytes(const TraceEventFile& ev, const StepOps& s, const GpuIndex& gpu,
                                    double from_us) {
  std::vector<std::pair<double, double>> copies;
  for (const auto& [tid, ops] : s.cpu)
    for (const auto* e : ops)
      if (e->ts_us >= from_us &&
          ev.str(e->name) == "torch.distributed.ddp.reducer::copy_bucket_to_grad")
        copies.push_back({e->ts_us, span_work(s, gpu, tid, e->ts_us, e->ts_us + e->dur_us).bytes});
  std::sort(copies.begin(), copies.end());
  std::vector<double> out;
  for (const auto& c : copies) out.push_back(c.second);
  return out;
}

/// The backward (autograd) thread and its window; the forward thread.
bool find_threads(const TraceEventFile& ev, const StepOps& s, StepGraph& g, std::string* why) {
  auto is_backward = [&](const TraceEvent* e) { return ev.str(e->name).starts_with(kEvaluate); };
  g.bwd_tid = busiest_thread(s, is_backward);
  if (g.bwd_tid < 0) return *why = "no autograd backward ops (evaluate_function)", false;
  g.bwd_start_us = 1e300, g.bwd_end_us = -1e300;
  for (const auto* e : s.cpu.at(g.bwd_tid))
    if (is_backward(e))
      g.bwd_start_us = std::min(g.bwd_start_us, e->ts_us),
      g.bwd_end_us = std::max(g.bwd_end_us, e->ts_us + e->dur_us);
  g.fwd_tid = busiest_thread(s, [&](const TraceEvent* e) {
    return e->sequence >= 0 && e->ts_us < g.bwd_start_us && !is_backward(e);
  });
  if (g.fwd_tid < 0) return *why = "no forward ops with a \"Sequence number\"", false;
  return true;
}

/// Forward units, backward runs and AccumulateGrad ops of one step.
bool read_graph(const TraceEventFile& ev, const StepOps& s, const GpuIndex& gpu, StepGraph& g,
                std::string* why) {
  if (!find_threads(ev, s, g, why)) return false;
  const auto& fwd_ops = s.cpu.at(g.fwd_tid);
  g.units = top_level(fwd_ops, s.start_us, g.bwd_start_us);
  // The op that created autograd node N is the last forward op to start with sequence number N
  // (ops without a node only peek at the counter); its top-level ancestor is the unit.
  std::unordered_map<int64_t, long> unit_of_seq;
  long unit = -1;
  for (const auto* e : fwd_ops) {
    if (e->ts_us >= g.bwd_start_us) break;
    while (unit + 1 < static_cast<long>(g.units.size()) && g.units[unit + 1]->ts_us <= e->ts_us)
      ++unit;
    if (e->sequence >= 0 && unit >= 0) unit_of_seq[e->sequence] = unit;
  }
  long current = -1;
  for (const auto* e : top_level(s.cpu.at(g.bwd_tid), g.bwd_start_us, g.bwd_end_us)) {
    const std::string& name = ev.str(e->name);
    if (name.starts_with(kEvaluate) && name.find("AccumulateGrad") != std::string::npos) {
      SpanWork w = span_work(s, gpu, g.bwd_tid, e->ts_us, e->ts_us + e->dur_us);
      g.grads.push_back({e->ts_us, w.threads, w.threads_known, current});
      continue;
    }
    auto it = e->sequence >= 0 ? unit_of_seq.find(e->sequence) : unit_of_seq.end();
    if (g.segments.empty() || (it != unit_of_seq.end() && it->second != current)) {
      current = it != unit_of_seq.end() ? it->second : -1;
      g.segments.push_back({e->ts_us, current});
    }
  }
  // Only the first run can be unmatched (ops before any paired one): it joins the next run.
  if (g.segments.size() > 1 && g.segments[0].second < 0)
    g.segments[0].second = g.segments[1].second;
  if (g.grads.empty()) return *why = "no AccumulateGrad ops in the backward pass", false;
  g.copy_bytes = copy_back_bytes(ev, s, gpu, g.bwd_start_us);
  for (const auto& gr : g.grads)
    if (gr.unit < 0)
      return *why = "an AccumulateGrad op before any backward op paired with a forward op", false;
  return true;
}

/// One step's per-layer result (layer 0: the prelude).
struct StepLayers {
  int64_t step = 0;
  std::vector<std::string> names;
  std::vector<double> fwd_us, bwd_us, gpu_fwd_us, gpu_bwd_us, params;
  std::vector<double> bucket_bytes;
  double done_us = 0;        // completion of the backward pass, from the frontier's start
  double shift_us = 0;       // the frontier's start (GPU backlog) after the step start
  bool exact_bytes = false;  // gradient bytes from DDP's copy-backs (else apportioned)
};

/// The allreduce launches (record_param_comms) of the backward pass: time and bytes.
std::vector<std::pair<double, double>> bucket_launches(const TraceEventFile& ev, const StepOps& s,
                                                       const StepGraph& g) {
  std::vector<std::pair<double, double>> out;
  for (const auto& [tid, ops] : s.cpu)
    for (const auto* e : ops) {
      if (ev.str(e->name) != "record_param_comms" || e->collective < 0) continue;
      if (normalize_collective_name(ev.str(e->collective)) != "allreduce") continue;
      const int elem = e->dtype >= 0 ? dtype_bytes(ev.str(e->dtype)) : 0;
      if (e->nelems < 0 || elem == 0 || e->ts_us < g.bwd_start_us || e->ts_us > g.bwd_end_us)
        continue;
      out.push_back({e->ts_us, e->nelems * elem});
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// Each AccumulateGrad op's gradient bytes: DDP's copy-backs when they are one per gradient
/// and add up to every bucket's size (exact), else each bucket's size split in proportion to
/// the threads of the gradient-copy kernels (equally when a kernel is missing).
std::vector<double> gradient_bytes(const std::vector<std::pair<double, double>>& launches,
                                   const StepGraph& g, const std::vector<size_t>& bucket_of) {
  const size_t nb = launches.size();
  std::vector<double> exact_sum(nb, 0), threads(nb, 0);
  std::vector<size_t> count(nb, 0);
  std::vector<bool> known(nb, true);
  const bool copies = g.copy_bytes.size() == g.grads.size();
  for (size_t j = 0; j < g.grads.size(); ++j) {
    const size_t k = bucket_of[j];
    if (copies) exact_sum[k] += g.copy_bytes[j];
    threads[k] += g.grads[j].threads;
    known[k] = known[k] && g.grads[j].threads_known;
    ++count[k];
  }
  bool exact = copies;
  for (size_t k = 0; k < nb; ++k)
    exact = exact && std::abs(exact_sum[k] - launches[k].second) < 0.5;
  if (exact) return g.copy_bytes;
  std::vector<double> out;
  for (size_t j = 0; j < g.grads.size(); ++j) {
    const size_t k = bucket_of[j];
    out.push_back(launches[k].second * (known[k] ? g.grads[j].threads / threads[k]
                                                 : 1.0 / static_cast<double>(count[k])));
  }
  return out;
}

/// Assigns the AccumulateGrad ops to the buckets whose launch follows them; adds their
/// gradient bytes, as parameters, to their layers.
bool apportion_bytes(const std::vector<std::pair<double, double>>& launches, const StepGraph& g,
                     const std::vector<long>& layer_of_unit, int bytes_per_parameter,
                     StepLayers& out, std::string* why) {
  std::vector<size_t> bucket_of;
  std::vector<size_t> count(launches.size(), 0);
  for (const auto& gr : g.grads) {
    auto it = std::lower_bound(launches.begin(), launches.end(), gr.ts_us,
                               [](const auto& l, double x) { return l.first < x; });
    if (it == launches.end())
      return *why = "an AccumulateGrad op after the last allreduce launch", false;
    bucket_of.push_back(static_cast<size_t>(it - launches.begin()));
    ++count[bucket_of.back()];
  }
  for (size_t k = 0; k < launches.size(); ++k) {
    if (count[k] == 0) return *why = fmt::format("no AccumulateGrad op for bucket {}", k), false;
    out.bucket_bytes.push_back(launches[k].second);
  }
  const std::vector<double> bytes = gradient_bytes(launches, g, bucket_of);
  // Cumulative rounding to whole parameters keeps each bucket's sum exact.
  std::vector<double> cum(launches.size(), 0), assigned(launches.size(), 0);
  for (size_t j = 0; j < g.grads.size(); ++j) {
    const size_t k = bucket_of[j];
    cum[k] += bytes[j] / bytes_per_parameter;
    const double upto = std::round(cum[k]);
    out.params[static_cast<size_t>(layer_of_unit[static_cast<size_t>(g.grads[j].unit)])] +=
        upto - assigned[k];
    assigned[k] = upto;
  }
  out.exact_bytes = g.copy_bytes.size() == g.grads.size() && bytes == g.copy_bytes;
  return true;
}

/// Forward and backward time of each layer by the completion frontier (see the file comment).
void time_layers(const StepOps& s, const GpuIndex& gpu, const StepGraph& g,
                 const std::vector<long>& param_units, const std::vector<long>& layer_of_unit,
                 StepLayers& out) {
  double done = s.backlog_us;
  auto advance = [&](double& time, double& gpu_time, int64_t tid, double from, double to) {
    SpanWork w = span_work(s, gpu, tid, from, to);
    const double next = std::max(done, w.done_us);
    time += next - done;
    gpu_time += w.gpu_us;
    done = next;
  };
  const size_t nl = param_units.size() + 1;
  for (size_t k = 0; k < nl; ++k) {
    const double from =
        k == 0 ? s.start_us : g.units[static_cast<size_t>(param_units[k - 1])]->ts_us;
    const double to =
        k + 1 < nl ? g.units[static_cast<size_t>(param_units[k])]->ts_us : g.bwd_start_us;
    advance(out.fwd_us[k], out.gpu_fwd_us[k], g.fwd_tid, from, to);
  }
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const double to = i + 1 < g.segments.size() ? g.segments[i + 1].first : g.bwd_end_us;
    const long u = g.segments[i].second;
    const size_t k = u < 0 ? 0 : static_cast<size_t>(layer_of_unit[static_cast<size_t>(u)]);
    advance(out.bwd_us[k], out.gpu_bwd_us[k], g.bwd_tid, g.segments[i].first, to);
  }
  out.done_us = done - s.backlog_us;
  out.shift_us = s.backlog_us - s.start_us;
}

/// The per-layer result of one step, or nullopt with the reason.
std::optional<StepLayers> analyse_step(const TraceEventFile& ev, const StepOps& s,
                                       const GpuIndex& gpu, int bytes_per_parameter,
                                       std::string* why) {
  StepGraph g;
  if (!read_graph(ev, s, gpu, g, why)) return std::nullopt;
  std::vector<long> param_units;
  for (const auto& gr : g.grads) param_units.push_back(gr.unit);
  std::sort(param_units.begin(), param_units.end());
  param_units.erase(std::unique(param_units.begin(), param_units.end()), param_units.end());
  std::vector<long> layer_of_unit(g.units.size());
  for (size_t u = 0; u < g.units.size(); ++u)
    layer_of_unit[u] =
        std::upper_bound(param_units.begin(), param_units.end(), static_cast<long>(u)) -
        param_units.begin();
  const size_t nl = param_units.size() + 1;
  StepLayers out;
  out.step = s.step;
  out.fwd_us.assign(nl, 0), out.bwd_us.assign(nl, 0), out.params.assign(nl, 0);
  out.gpu_fwd_us.assign(nl, 0), out.gpu_bwd_us.assign(nl, 0);
  const auto launches = bucket_launches(ev, s, g);
  if (launches.empty()) {
    *why = "no allreduce launch of known size (record_param_comms) in the backward pass";
    return std::nullopt;
  }
  if (!apportion_bytes(launches, g, layer_of_unit, bytes_per_parameter, out, why))
    return std::nullopt;
  time_layers(s, gpu, g, param_units, layer_of_unit, out);
  out.names.push_back("step start to the first layer (DDP buffer broadcast, zero_grad)");
  for (size_t k = 1; k < nl; ++k)
    out.names.push_back(ev.str(g.units[static_cast<size_t>(param_units[k - 1])]->name));
  return out;
}

/// The steps' results with the most common layer count (first such step first).
std::vector<StepLayers> consistent_steps(std::vector<StepLayers> all) {
  std::map<size_t, int> counts;
  for (const auto& s : all) ++counts[s.names.size()];
  size_t best = 0;
  int most = 0;
  for (const auto& s : all)
    if (counts[s.names.size()] > most) most = counts[s.names.size()], best = s.names.size();
  std::vector<StepLayers> out;
  for (auto& s : all)
    if (s.names.size() == best) out.push_back(std::move(s));
  return out;
}

/// Median over the steps of layer k's value `field`.
double layer_median(const std::vector<StepLayers>& steps, std::vector<double> StepLayers::*field,
                    size_t k) {
  std::vector<double> v;
  for (const auto& s : steps) v.push_back((s.*field)[k]);
  return median(v);
}

/// Per step, the time after the backward pass and the allreduces (DDP copy-back, optimizer).
double median_update(const MeasuredTrace& t, const std::vector<StepLayers>& steps) {
  std::vector<double> v;
  for (const auto& s : steps) {
    double comm_end = 0, dur = 0;
    for (const auto& c : t.collectives)
      if (c.step == s.step && c.name == "allreduce" && std::isfinite(c.start_s))
        comm_end = std::max(comm_end, c.start_s + c.time_s);
    for (const auto& st : t.steps)
      if (st.step == s.step) dur = st.time_s;
    // Offsets from the frontier's start, so that a GPU backlog carried in from the previous
    // step (and out into the next) is not counted twice.
    v.push_back(std::max(0.0, dur - std::max(comm_end - s.shift_us * 1e-6, s.done_us * 1e-6)));
  }
  return median(v);
}

std::string layer_notes(const DdpProfile& d, double layers_s, bool exact_bytes) {
  return fmt::format(
      "Derived by sgdsim trace from {} steps of the trace (medians): one layer per top-level "
      "forward op that owns parameters (its autograd node is followed by AccumulateGrad ops), "
      "paired with its backward ops by \"Sequence number\"; parameter-free ops are folded into "
      "the layer before them; the first layer is the step start to the first such op. A "
      "layer's time is how far the completion frontier (its CPU ops ended and the GPU kernels "
      "they launched, found by correlation id, finished) advanced during its forward span and "
      "its backward runs, so the layers add up to the traced forward and backward passes "
      "({:.3f} ms, of which the layers' GPU kernels ran {:.3f} ms: what is left is CPU-bound). "
      "Parameters: {}. Times are per step at the traced batch (batch_size: sgdsim trace "
      "--batch-size). The time after the backward pass and the last allreduce ({:.3f} ms: DDP's "
      "copy-back and the optimizer) is the update step.",
      d.steps_used, layers_s * 1e3, d.gpu_s * 1e3,
      exact_bytes
          ? "each AccumulateGrad op's gradient bytes, from DDP's copy-back memcpy of that "
            "gradient (copy_bucket_to_grad, bucket order), which add up to every bucket's "
            "allreduce size"
          : "each DDP bucket's allreduce size split over the AccumulateGrad ops that ran since "
            "the previous bucket's launch, in proportion to the threads (grid x block) of the "
            "gradient-copy kernel each launched (equally when one is missing)",
      d.update_s * 1e3);
}

/// Assembles the profile from the consistent steps.
DdpProfile assemble(const MeasuredTrace& t, const std::vector<StepLayers>& steps, double update_s,
                    int bytes_per_parameter) {
  DdpProfile d;
  d.per_layer = true;
  d.steps_used = static_cast<int>(steps.size());
  d.bucket_bytes = steps[0].bucket_bytes;
  d.update_s = update_s;
  Profile& p = d.profile;
  p.name = std::filesystem::path(t.file).filename().string() + " layers";
  p.source = fmt::format("Kineto trace {} (rank {} of {})", t.file, t.rank, t.world_size);
  p.measured = true;
  p.batch_size = 1;
  p.bytes_per_parameter = bytes_per_parameter;
  double total = 0;
  for (size_t k = 0; k < steps[0].names.size(); ++k) {
    ProfileLayer l;
    const double gf = layer_median(steps, &StepLayers::gpu_fwd_us, k) * 1e-3;
    const double gb = layer_median(steps, &StepLayers::gpu_bwd_us, k) * 1e-3;
    l.name = k == 0 ? steps[0].names[0]
                    : fmt::format("{} {} (GPU: forward {:.3f} ms, backward {:.3f} ms)", k,
                                  steps[0].names[k], gf, gb);
    l.parameters = static_cast<int64_t>(steps[0].params[k]);
    l.forward_s = layer_median(steps, &StepLayers::fwd_us, k) * 1e-6;
    l.backward_s = layer_median(steps, &StepLayers::bwd_us, k) * 1e-6;
    d.forward_s += l.forward_s;
    d.gpu_s += (gf + gb) * 1e-3;
    total += l.forward_s + l.backward_s;
    p.layers.push_back(l);
  }
  d.notes = layer_notes(d, total, steps[0].exact_bytes);
  return d;
}

}  // namespace

std::optional<DdpProfile> layer_profile_from_trace(const TraceEventFile& ev, const MeasuredTrace& t,
                                                   std::string* why_not) {
  std::string why = "no ProfilerStep#N annotations (steps)";
  const GpuIndex gpu = index_gpu(ev);
  const std::vector<StepOps> ops = bin_steps(ev, t, gpu);
  // Gradients in fp32 (4 bytes) unless a bucket's size says otherwise, as for bucket profiles.
  int bpp = 4;
  std::vector<StepLayers> good;
  for (const auto& s : ops) {
    std::string reason;
    auto r = analyse_step(ev, s, gpu, bpp, &reason);
    if (r && std::any_of(r->bucket_bytes.begin(), r->bucket_bytes.end(),
                         [](double b) { return std::fmod(b, 4.0) != 0; }))
      bpp = 1, r = analyse_step(ev, s, gpu, bpp, &reason);
    if (r)
      good.push_back(std::move(*r));
    else if (good.empty())
      why = fmt::format("step {}: {}", s.step, reason);
  }
  if (good.empty()) {
    if (why_not) *why_not = why;
    return std::nullopt;
  }
  const std::vector<StepLayers> steps = consistent_steps(std::move(good));
  return assemble(t, steps, median_update(t, steps), bpp);
}

DdpProfile profile_from_trace(const TraceEventFile& ev, const MeasuredTrace& t) {
  std::string why;
  if (auto d = layer_profile_from_trace(ev, t, &why)) return *d;
  try {
    DdpProfile d = ddp_profile_from_trace(t);
    d.notes += " No per-layer profile: " + why + ".";
    return d;
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + "; no per-layer profile either: " + why);
  }
}

}  // namespace sgdsim
