// Kineto/Chrome trace -> per-step statistics and collectives; DDP bucket profile.
#include "sim/trace/kineto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/trace/osu.hpp"

namespace sgdsim {

namespace {

bool contains_nccl(const std::string& s) {
  for (size_t i = 0; i + 4 <= s.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) == 'n' &&
        std::tolower(static_cast<unsigned char>(s[i + 1])) == 'c' &&
        std::tolower(static_cast<unsigned char>(s[i + 2])) == 'c' &&
        std::tolower(static_cast<unsigned char>(s[i + 3])) == 'l')
      return true;
  return false;
}

/// "ncclKernel_AllReduce_RING_LL_Sum_float(...)", "ncclDevKernel_AllGather_RING_LL(...)" ->
/// "allreduce", "allgather".
std::string collective_from_kernel(const std::string& kernel) {
  auto us = kernel.find('_');
  if (us == std::string::npos) return "nccl";
  auto end = kernel.find_first_of("_(", us + 1);
  return normalize_collective_name(
      kernel.substr(us + 1, end == std::string::npos ? std::string::npos : end - us - 1));
}

std::string kernel_detail(const std::string& kernel) {
  return kernel.substr(0, kernel.find('('));
}

struct Launch {
  double ts_us;
  std::string name;
  double bytes;
  int group_size;
};

double union_length(std::vector<std::pair<double, double>>& iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, lo = 0, hi = 0;
  bool open = false;
  for (auto [a, b] : iv) {
    if (!open || a > hi) {
      if (open) total += hi - lo;
      lo = a, hi = b, open = true;
    } else {
      hi = std::max(hi, b);
    }
  }
  if (open) total += hi - lo;
  return total;
}

}  // namespace

namespace {

/// Reads one Kineto/Chrome trace: its steps, their GPU busy time and backward window, and
/// the NCCL kernels matched to their CPU launches.
class KinetoReader {
 public:
  explicit KinetoReader(const TraceEventFile& ev) : ev_(ev) {
    read_steps();
    const size_t n = windows_.size();
    busy_.resize(n);
    bwd_start_.assign(n, kUnknown);
    bwd_end_.assign(n, kUnknown);
    launches_.resize(n);
    for (const auto& e : ev_.events) {
      if (e.ph != 'X') continue;
      if (!read_gpu_event(e)) read_cpu_event(e);
    }
  }

  MeasuredTrace trace() {
    MeasuredTrace t;
    t.file = ev_.file;
    t.rank = ev_.rank;
    t.world_size = ev_.world_size;
    t.device = ev_.device;
    const bool kineto = ev_.has_schema_version || ev_.world_size > 0 || !windows_.empty();
    t.format = kineto ? "kineto" : "chrome";
    assemble(t);
    if (t.world_size == 0)
      for (const auto& c : t.collectives) t.world_size = std::max(t.world_size, c.group_size);
    t.notes.push_back(
        "steps: ProfilerStep#N CPU annotations; compute_s: union of the busy intervals of the "
        "step's non-NCCL GPU kernels, memcpys and memsets; comm_s: summed durations of its NCCL "
        "kernels (a kernel's duration includes waiting for the slowest rank to join)");
    if (windows_.empty()) t.notes.push_back("no ProfilerStep annotations: no per-step statistics");
    return t;
  }

 private:
  struct StepWindow {
    double ts, end, dur;
    int64_t number;
  };

  /// Steps: ProfilerStep#N on the CPU side, in time order.
  void read_steps() {
    for (const auto& e : ev_.events) {
      if (e.ph != 'X') continue;
      const std::string& name = ev_.str(e.name);
      if (!name.starts_with("ProfilerStep#") || ev_.str(e.cat) == "gpu_user_annotation") continue;
      int64_t n = 0;
      try {
        n = std::stoll(name.substr(13));
      } catch (const std::exception&) {
        n = static_cast<int64_t>(windows_.size());
      }
      windows_.push_back({e.ts_us, e.ts_us + e.dur_us, e.dur_us, n});
    }
    std::sort(windows_.begin(), windows_.end(),
              [](const StepWindow& a, const StepWindow& b) { return a.ts < b.ts; });
  }

  int step_of(double ts) const {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), ts,
                               [](double x, const StepWindow& w) { return x < w.ts; });
    if (it == windows_.begin()) return -1;
    --it;
    return ts < it->end ? static_cast<int>(it - windows_.begin()) : -1;
  }

  /// A GPU kernel, memcpy or memset: an NCCL collective, or busy time of its step.
  template <class Event>
  bool read_gpu_event(const Event& e) {
    const std::string& cat = ev_.str(e.cat);
    const bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
                     cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    if (!gpu) return false;
    const std::string& name = ev_.str(e.name);
    const int s = step_of(e.ts_us);
    if (!((cat == "kernel" || cat == "Kernel") && contains_nccl(name))) {
      if (s >= 0) busy_[s].push_back({e.ts_us, e.ts_us + e.dur_us});
      return true;
    }
    MeasuredCollective c;
    c.name = e.collective >= 0 ? normalize_collective_name(ev_.str(e.collective))
                               : collective_from_kernel(name);
    const int elem = e.dtype >= 0 ? dtype_bytes(ev_.str(e.dtype)) : 0;
    if (e.nelems >= 0 && elem > 0) c.bytes = e.nelems * elem;
    c.time_s = e.dur_us * 1e-6;
    c.group_size = e.group_size;
    c.detail = kernel_detail(name);
    c.start_s = s >= 0 ? (e.ts_us - windows_[s].ts) * 1e-6 : e.ts_us * 1e-6;
    if (s >= 0 || windows_.empty()) {
      colls_.push_back(std::move(c));
      coll_step_.push_back(s);
    }
    return true;
  }

  /// A CPU op: the backward pass's window, or a collective's launch.
  template <class Event>
  void read_cpu_event(const Event& e) {
    if (ev_.str(e.cat) != "cpu_op") return;
    const std::string& name = ev_.str(e.name);
    const int s = step_of(e.ts_us);
    if (s < 0) return;
    if (name.starts_with("autograd::engine::evaluate_function")) {
      const double off = (e.ts_us - windows_[s].ts) * 1e-6;
      const double end = (e.ts_us + e.dur_us - windows_[s].ts) * 1e-6;
      if (!(bwd_start_[s] <= off)) bwd_start_[s] = off;
      if (!(bwd_end_[s] >= end)) bwd_end_[s] = end;
    } else if (name == "record_param_comms" && e.collective >= 0) {
      const int elem = e.dtype >= 0 ? dtype_bytes(ev_.str(e.dtype)) : 0;
      launches_[s].push_back({e.ts_us, normalize_collective_name(ev_.str(e.collective)),
                              e.nelems >= 0 && elem > 0 ? e.nelems * elem : kUnknown,
                              e.group_size});
    }
  }

  /// Matches a step's kernels to CPU launches of the same collective, in order, when the
  /// counts agree.
  void match_launches(size_t s, const std::vector<size_t>& kernels) {
    std::map<std::string, std::vector<size_t>> kernels_by_name;
    std::map<std::string, std::vector<const Launch*>> launches_by_name;
    for (size_t i : kernels) kernels_by_name[colls_[i].name].push_back(i);
    std::sort(launches_[s].begin(), launches_[s].end(),
              [](const Launch& a, const Launch& b) { return a.ts_us < b.ts_us; });
    for (const auto& l : launches_[s]) launches_by_name[l.name].push_back(&l);
    for (auto& [name, ks] : kernels_by_name) {
      auto it = launches_by_name.find(name);
      if (it == launches_by_name.end() || it->second.size() != ks.size()) continue;
      for (size_t k = 0; k < ks.size(); ++k) {
        MeasuredCollective& c = colls_[ks[k]];
        const Launch& l = *it->second[k];
        c.launch_s = (l.ts_us - windows_[s].ts) * 1e-6;
        if (!std::isfinite(c.bytes)) c.bytes = l.bytes;
        if (c.group_size == 0) c.group_size = l.group_size;
      }
    }
  }

  /// Steps and their collectives in time order; collectives outside any step last.
  void assemble(MeasuredTrace& t) {
    std::vector<size_t> order(colls_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (coll_step_[a] != coll_step_[b]) return coll_step_[a] < coll_step_[b];
      return colls_[a].start_s < colls_[b].start_s;
    });
    std::vector<std::vector<size_t>> per_step(windows_.size());
    std::vector<size_t> unassigned;
    for (size_t i : order) (coll_step_[i] >= 0 ? per_step[coll_step_[i]] : unassigned).push_back(i);
    for (size_t s = 0; s < windows_.size(); ++s) {
      match_launches(s, per_step[s]);
      MeasuredStep st;
      st.step = windows_[s].number;
      st.start_s = windows_[s].ts * 1e-6;
      st.time_s = windows_[s].dur * 1e-6;  // not end - ts: large timestamps lose digits
      st.compute_s = union_length(busy_[s]) * 1e-6;
      st.backward_start_s = bwd_start_[s];
      st.backward_end_s = bwd_end_[s];
      int index = 0;
      for (size_t i : per_step[s]) {
        colls_[i].step = st.step;
        colls_[i].index = index++;
        st.comm_s += colls_[i].time_s;
        t.collectives.push_back(colls_[i]);
      }
      t.steps.push_back(st);
    }
    int index = 0;
    for (size_t i : unassigned) {
      colls_[i].index = index++;
      t.collectives.push_back(colls_[i]);
    }
  }

  const TraceEventFile& ev_;
  std::vector<StepWindow> windows_;
  std::vector<std::vector<std::pair<double, double>>> busy_;
  std::vector<double> bwd_start_, bwd_end_;
  std::vector<std::vector<Launch>> launches_;
  std::vector<MeasuredCollective> colls_;
  std::vector<int> coll_step_;  // index into windows_, -1 if none
};

}  // namespace

MeasuredTrace kineto_trace(const TraceEventFile& ev) {
  return KinetoReader(ev).trace();
}

MeasuredTrace read_kineto_trace(const std::string& path) {
  return kineto_trace(read_trace_events(path));
}

namespace {

using StepAllreduces = std::map<int64_t, std::vector<const MeasuredCollective*>>;

/// The bucket sizes most steps' allreduces have, in start order.
std::vector<double> common_layout(const MeasuredTrace& t, const StepAllreduces& by_step) {
  std::map<std::vector<double>, int> layouts;
  for (const auto& [step, cs] : by_step) {
    std::vector<double> sizes;
    bool known = true;
    for (const auto* c : cs) {
      known = known && std::isfinite(c->bytes) && c->bytes > 0 && c->bytes < 1e18;
      sizes.push_back(c->bytes);
    }
    if (known) ++layouts[sizes];
  }
  if (layouts.empty())
    throw InputError(t.file, "",
                     "cannot derive a DDP profile: expected allreduce NCCL kernels of known size "
                     "(\"In msg nelems\" and \"dtype\" args) inside ProfilerStep windows");
  auto best = std::max_element(layouts.begin(), layouts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

/// Per-step phase times of the steps with that layout.
struct DdpPhases {
  std::vector<double> fwd, tail, update;
  std::vector<std::vector<double>> bwd;
  int used = 0;
};

DdpPhases ddp_phases(const MeasuredTrace& t, const StepAllreduces& by_step,
                     const std::vector<double>& layout) {
  const size_t nb = layout.size();
  DdpPhases ph;
  ph.bwd.resize(nb);
  for (const auto& st : t.steps) {
    auto it = by_step.find(st.step);
    if (it == by_step.end() || it->second.size() != nb) continue;
    bool same = true;
    for (size_t k = 0; k < nb; ++k) same = same && it->second[k]->bytes == layout[k];
    if (!same || !std::isfinite(st.backward_start_s)) continue;
    double prev = st.backward_start_s, comm_end = 0;
    for (size_t k = 0; k < nb; ++k) {
      const MeasuredCollective& c = *it->second[k];
      const double ready = std::isfinite(c.launch_s) ? c.launch_s : c.start_s;
      ph.bwd[k].push_back(std::max(0.0, ready - prev));
      prev = std::max(prev, ready);
      comm_end = std::max(comm_end, c.start_s + c.time_s);
    }
    ph.fwd.push_back(st.backward_start_s);
    const double bend = std::isfinite(st.backward_end_s) ? st.backward_end_s : prev;
    ph.tail.push_back(std::max(0.0, bend - prev));
    ph.update.push_back(std::max(0.0, st.time_s - std::max(comm_end, bend)));
    ++ph.used;
  }
  if (ph.used == 0)
    throw InputError(t.file, "",
                     "cannot derive a DDP profile: expected autograd backward ops "
                     "(\"autograd::engine::evaluate_function\") in the steps with allreduces");
  return ph;
}

}  // namespace

DdpProfile ddp_profile_from_trace(const MeasuredTrace& t) {
  if (t.steps.empty())
    throw InputError(t.file, "",
                     "cannot derive a DDP profile: expected ProfilerStep#N annotations (steps)");
  StepAllreduces by_step;
  for (const auto& c : t.collectives)
    if (c.name == "allreduce" && c.step >= 0) by_step[c.step].push_back(&c);
  const std::vector<double> layout = common_layout(t, by_step);
  const size_t nb = layout.size();
  const DdpPhases ph = ddp_phases(t, by_step, layout);
  const auto& [fwd, tail, update, bwd, used] = ph;
  DdpProfile d;
  d.steps_used = used;
  d.bucket_bytes = layout;
  d.forward_s = median(fwd);
  d.update_s = median(update);
  Profile& p = d.profile;
  p.name = std::filesystem::path(t.file).filename().string() + " DDP buckets";
  p.source = fmt::format("Kineto trace {} (rank {} of {})", t.file, t.rank, t.world_size);
  p.measured = true;
  p.batch_size = 1;
  bool by4 = true;
  for (double b : layout) by4 = by4 && std::fmod(b, 4.0) == 0;
  p.bytes_per_parameter = by4 ? 4 : 1;
  ProfileLayer first;
  first.name =
      "forward pass (step start to the first backward op) + backward after the last "
      "bucket launch";
  first.forward_s = d.forward_s;
  first.backward_s = median(tail);
  p.layers.push_back(first);
  for (size_t k = nb; k-- > 0;) {  // forward order: the last-launched bucket comes first
    ProfileLayer l;
    l.name = fmt::format("bucket {} ({} bytes)", k, layout[k]);
    l.parameters = static_cast<int64_t>(layout[k] / p.bytes_per_parameter);
    l.backward_s = median(bwd[k]);
    p.layers.push_back(l);
  }
  d.notes = fmt::format(
      "Derived by sgdsim from {} steps of the trace (medians): one layer per DDP gradient "
      "bucket (allreduce), backward time = time between consecutive bucket launches (CPU "
      "record_param_comms, else kernel start) from the first autograd backward op; the first "
      "layer carries the forward pass (step start to the first backward op, {:.3f} ms). Times "
      "are per step at the traced batch (batch_size: sgdsim trace --batch-size). The time "
      "after the last allreduce and backward op ({:.3f} ms: DDP's copy-back and the optimizer) "
      "is the update step.",
      used, d.forward_s * 1e3, d.update_s * 1e3);
  return d;
}

}  // namespace sgdsim
