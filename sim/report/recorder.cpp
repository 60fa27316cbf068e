#include "sim/report/recorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "sim/schemes/scheme.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {
/// Keys whose versions staleness counts: async's parameter-server keys (one otherwise).
size_t async_key_count(const Scenario& s, const Workload& w) {
  return std::max<size_t>(1, scheme_ps_keys(s, w).size());
}
}  // namespace

SeriesStats series_stats(std::vector<double> v) {
  SeriesStats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  auto rank = [&v](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  s.p50 = rank(0.50);
  s.p99 = rank(0.99);
  return s;
}

RunRecorder::RunRecorder(const Scenario& scenario, const Workload& workload,
                         std::filesystem::path out_dir, int update_lag)
    : scenario_(scenario),
      workload_(workload),
      out_dir_(std::move(out_dir)),
      iterations_csv_(out_dir_ / "iterations.csv"),
      last_end_(static_cast<size_t>(scenario.workers), 0.0),
      worker_time_(static_cast<size_t>(scenario.workers), 0.0),
      worker_iters_(static_cast<size_t>(scenario.workers), 0),
      updates_done_(static_cast<size_t>(scenario.iterations), 0),
      iteration_end_(static_cast<size_t>(scenario.iterations), 0.0),
      comm_per_iter_(static_cast<size_t>(scenario.iterations), 0.0),
      compute_sum_(static_cast<size_t>(scenario.iterations), 0.0),
      update_sum_(static_cast<size_t>(scenario.iterations), 0.0),
      exposed_sum_(static_cast<size_t>(scenario.iterations), 0.0),
      update_lag_(update_lag),
      version_(async_key_count(scenario, workload), 0),
      pulled_(static_cast<size_t>(scenario.workers) * version_.size(), 0) {
  // Only a run whose iterations can repeat exactly may stop at a steady state: jitter and
  // redrawn stragglers change every iteration, and training results depend on the count.
  const VariabilitySpec& v = scenario.variability;
  const bool redrawn = v.straggler_redraw && v.straggler_fraction > 0 && v.straggler_slowdown != 1;
  const UpdateRule rule = scheme_update_rule(scenario);
  if (const auto* gossip = std::get_if<GossipUpdate>(&rule); gossip && gossip->pairwise) {
    averaged_.assign(static_cast<size_t>(scenario.workers), 0);
    read_ = averaged_;
  }
  steady_active_ = scenario.steady_state > 0 && v.compute_jitter_cv == 0 && !redrawn &&
                   !scenario.training.enabled;
  iterations_csv_.stream() << "worker,iteration,start_s,end_s,iteration_time_s,compute_s,comm_s,"
                              "update_s,exposed_comm_s\n";
  if (scenario.output_timeline) {
    timeline_ = std::make_unique<AtomicFile>(out_dir_ / "timeline.json");
    auto& o = timeline_->stream();
    const bool server_applies = std::holds_alternative<ServerUpdate>(scheme_update_rule(scenario));
    o << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":" << json(scenario.name).dump()
      << ",\"time_unit\":\"us of simulated time\"},\"traceEvents\":[\n";
    for (int w = 0; w < scenario.workers; ++w) {
      o << (w == 0 ? "" : ",\n")
        << fmt::format(
               "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"worker "
               "{}\"}}}},\n",
               w, w)
        << fmt::format(
               "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"args\":{{\"sort_"
               "index\":{}}}}},\n",
               w, w)
        << fmt::format(
               "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":"
               "\"compute\"}}}},\n",
               w)
        << fmt::format(
               "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":1,\"args\":{{\"name\":"
               "\"communication\"}}}}",
               w);
      if (server_applies)
        o << fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":2,\"args\":{{"
            "\"name\":\"server applies\"}}}}",
            w);
    }
    first_event_ = false;
  }
}

namespace {

const char* track_name(int base_tid) {
  return base_tid == 0 ? "compute" : base_tid == 1 ? "communication" : "server applies";
}

/// Nanoseconds as microseconds with three decimals, exactly ("12.345").
std::string format_us(int64_t ns) {
  return fmt::format("{}.{:03d}", ns / 1000, ns % 1000);
}

}  // namespace

int RunRecorder::free_track(int pid, int base_tid, int64_t start_ns, int64_t end_ns) {
  // A track is free when everything on it ended by `start_ns`. Slices arrive as they end, in
  // simulated-time order, so keeping each track's latest end is exact and memory stays flat.
  auto& tracks = tracks_[{pid, base_tid}];
  auto overlaps = [&](int64_t track_end_ns) { return track_end_ns > start_ns; };
  size_t k = 0;
  while (k < tracks.size() && overlaps(tracks[k])) ++k;
  if (k == tracks.size()) {
    tracks.push_back(0);
    if (k > 0) {  // a new track: name it after its group, sorted right below it
      const int tid = 1000 * (base_tid + 1) + static_cast<int>(k);
      timeline_->stream() << (first_event_ ? "" : ",\n")
                          << fmt::format(
                                 "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
                                 "\"args\":{{\"name\":\"{} {}\"}}}},\n"
                                 "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},"
                                 "\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
                                 pid, tid, track_name(base_tid), k + 1, pid, tid,
                                 1000 * base_tid + static_cast<int>(k));
      first_event_ = false;
    }
  }
  tracks[k] = std::max(tracks[k], end_ns);
  return k == 0 ? base_tid : 1000 * (base_tid + 1) + static_cast<int>(k);
}

void RunRecorder::timeline_event(const char* name, const char* cat, int pid, int tid,
                                 double start_s, double end_s, const json& args) {
  if (!timeline_) return;
  // Both ends rounded to the nanosecond, dur from them: slices that touch never overlap.
  // Past int64 nanoseconds (292 years) times are written as doubles in microseconds (exact to
  // the double), and tracks compare them saturated.
  constexpr double kNsLimit = 9e18;
  const bool wide = !(std::fabs(start_s) * 1e9 < kNsLimit && std::fabs(end_s) * 1e9 < kNsLimit);
  auto ns_of = [&](double s) {
    return wide ? static_cast<int64_t>(std::clamp(s * 1e9, -kNsLimit, kNsLimit))
                : static_cast<int64_t>(std::llround(s * 1e9));
  };
  const int64_t start_ns = ns_of(start_s);
  const int64_t end_ns = std::max(start_ns, ns_of(end_s));
  const int track = free_track(pid, tid, start_ns, end_ns);
  const std::string ts = wide ? fmt::format("{:.3f}", start_s * 1e6) : format_us(start_ns);
  const std::string dur = wide ? fmt::format("{:.3f}", std::max(0.0, end_s - start_s) * 1e6)
                               : format_us(end_ns - start_ns);
  auto& o = timeline_->stream();
  o << (first_event_ ? "" : ",\n")
    << fmt::format(
           "{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},"
           "\"dur\":{},\"args\":{}}}",
           name, cat, pid, track, ts, dur, args.dump());
  first_event_ = false;
}

void RunRecorder::task_done(const Task& task, double start_s, double end_s) {
  const int it = task.iteration;
  const double dur = end_s - start_s;
  if (task.kind == TaskKind::comm && task.worker < 0) {
    // Collectives may end after their iteration's update (pseudo_sync, ssp): count them here.
    comm_per_iter_[it] += dur;
    if (!timeline_) return;  // names and arguments only for the timeline
    std::string name = fmt::format("{}[{}]", task_kind_name(task.kind), task.index);
    json args = {{"iteration", it}, {"bucket", task.index}, {"bytes", task.bytes}};
    for (int w = 0; w < scenario_.workers; ++w)
      timeline_event(name.c_str(), "communication", w, 1, start_s, end_s, args);
    return;
  }
  if (task.kind == TaskKind::comm) {  // a worker's push or pull of one shard
    if (timeline_)
      timeline_event(task.pull ? "pull" : "push", "communication", task.worker, 1, start_s, end_s,
                     {{"iteration", it}, {"shard", task.index}, {"bytes", task.bytes}});
    return;
  }
  Pending& p = pending_of(it);
  if (task.kind == TaskKind::apply) {
    // Staleness: server versions applied since the worker pulled the parameters it used.
    const int shard = task.index;
    count_staleness(version_[shard] -
                    pulled_[static_cast<size_t>(task.worker) * version_.size() + shard]);
    ++version_[shard];
    p.of[task.worker].update += dur;  // the optimizer step of this worker's gradient
    if (timeline_)
      timeline_event("apply", "compute", task.worker, 2, start_s, end_s,
                     {{"iteration", it}, {"shard", shard}, {"server_host", task.dst}});
    return;
  }
  const int w = task.worker;
  if (timeline_) {
    const std::string name = task.kind == TaskKind::bwd
                                 ? fmt::format("{}[{}]", task_kind_name(task.kind), task.index)
                                 : task_kind_name(task.kind);
    timeline_event(name.c_str(), "compute", w, 0, start_s, end_s, {{"iteration", it}});
  }
  if (p.of[w].start < 0) p.of[w].start = start_s;
  if (task.kind == TaskKind::predict) {
    p.of[w].update += dur;
    return;
  }
  if (task.kind == TaskKind::update) {
    if (!averaged_.empty()) {
      // adpsgd: averagings that changed the replica since the gradient's read; then this one
      // changes the worker's and its partner's (Task::dst).
      count_staleness(averaged_[w] - read_[w]);
      if (task.dst >= 0) {
        ++averaged_[w];
        ++averaged_[task.dst];
      }
    }
    p.of[w].update += dur;
    const double iter_time = end_s - last_end_[w];
    const double exposed = std::max(0.0, iter_time - p.of[w].compute - p.of[w].update);
    // The collective this update waited for: its own iteration's, or an earlier one's.
    const int source = it - update_lag_;
    const double comm_s = source >= 0 ? comm_per_iter_[source] : 0.0;
    write_row(w, it,
              {p.of[w].start, end_s, iter_time, p.of[w].compute, comm_s, p.of[w].update, exposed});
    last_end_[w] = end_s;
    if (it >= scenario_.warmup_iterations) {
      worker_time_[w] += iter_time;
      ++worker_iters_[w];
    }
    iteration_end_[it] = std::max(iteration_end_[it], end_s);
    ++updates_done_[it];
    compute_sum_[it] += p.of[w].compute;
    update_sum_[it] += p.of[w].update;
    exposed_sum_[it] += exposed;
    if (updates_done_[it] == scenario_.workers && steady_active_) check_steady_state();
    // Done once every worker has reported its update: its array goes back for reuse.
    if (++p.updates_done == scenario_.workers) spare_of_.push_back(std::exchange(p.of, {}));
    return;
  }
  p.of[w].compute += dur;
}

RunRecorder::Pending& RunRecorder::pending_of(int iteration) {
  const auto i = static_cast<size_t>(iteration);
  if (i >= pending_.size()) pending_.resize(i + 1);
  Pending& p = pending_[i];
  if (p.of.empty()) {
    if (!spare_of_.empty()) {
      p.of = std::move(spare_of_.back());
      spare_of_.pop_back();
    }
    p.of.assign(static_cast<size_t>(scenario_.workers), Pending::Worker{});
  }
  return p;
}

void RunRecorder::count_staleness(int64_t staleness) {
  if (staleness < 0 || staleness >= kDenseStaleness) {
    staleness_[staleness]++;
    return;
  }
  const auto k = static_cast<size_t>(staleness);
  if (k >= staleness_dense_.size()) staleness_dense_.resize(k + 1, 0);
  ++staleness_dense_[k];
}

void RunRecorder::write_row(int worker, int iteration, const std::array<double, 7>& values) {
  // 10^5 workers write 10^5 rows per iteration, most repeating the previous row's values
  // (every worker of a sync iteration starts and ends together): a value equal to the one in
  // the same column of the previous row reuses its text, bit for bit the same as formatting it.
  // The row is written in place in room reserved at the buffer's end (one size check, not one
  // per piece).
  // Two ints of up to 11 chars, a comma and the newline, seven columns of seconds.
  constexpr size_t kMaxRow = 2 * 11 + 2 + 7 * kFixed9MaxChars;
  const size_t old_size = row_.size();
  row_.resize(old_size + kMaxRow);
  char* out = row_.data() + old_size;
  const fmt::format_int w(worker), i(iteration);
  out = std::copy(w.data(), w.data() + w.size(), out);
  *out++ = ',';
  out = std::copy(i.data(), i.data() + i.size(), out);
  for (size_t k = 0; k < values.size(); ++k) {
    CachedField& c = row_fields_[k];
    const auto bits = std::bit_cast<uint64_t>(values[k]);
    if (c.size == 0 || c.bits != bits) {
      c.bits = bits;
      c.size = static_cast<uint32_t>(format_comma_fixed9(c.text.data(), values[k]) - c.text.data());
    }
    out = std::copy(c.text.data(), c.text.data() + c.size, out);
  }
  *out++ = '\n';
  row_.resize(static_cast<size_t>(out - row_.data()));
  if (row_.size() >= kRowFlushBytes) flush_rows();
}

void RunRecorder::flush_rows() {
  iterations_csv_.stream().write(row_.data(), static_cast<std::streamsize>(row_.size()));
  row_.clear();
}

void RunRecorder::task_started(const Task& task, double /*start_s*/) {
  // A pull reads the shard's current version when it leaves the server.
  if (task.kind == TaskKind::comm && task.pull)
    pulled_[static_cast<size_t>(task.worker) * version_.size() + task.index] = version_[task.index];
  if (!read_.empty() && task.kind == TaskKind::fwd) read_[task.worker] = averaged_[task.worker];
}

void RunRecorder::prefetch(const Task& task) const {
  if (task.worker < 0 || task.kind == TaskKind::comm) return;
  if (task.kind == TaskKind::apply) {
    const size_t k = static_cast<size_t>(task.worker) * version_.size() + task.index;
    if (k < pulled_.size()) __builtin_prefetch(&pulled_[k]);
  }
  const auto i = static_cast<size_t>(task.iteration);
  if (i < pending_.size() && !pending_[i].of.empty())
    __builtin_prefetch(&pending_[i].of[static_cast<size_t>(task.worker)], 1);
}

void RunRecorder::check_steady_state() {
  const int n = scenario_.iterations;
  for (; steady_checked_ < n && updates_done_[steady_checked_] == scenario_.workers;
       ++steady_checked_) {
    const int i = steady_checked_;
    if (i < scenario_.warmup_iterations) continue;
    const double t = iteration_end_[i] - (i > 0 ? iteration_end_[i - 1] : 0.0);
    // Equal to 1e-9 relative: the same iteration simulated again differs in the last bits only.
    const bool same = steady_run_ > 0 && std::abs(t - steady_time_s_) <= 1e-9 * steady_time_s_;
    steady_run_ = same ? steady_run_ + 1 : 1;
    steady_time_s_ = t;
    if (steady_run_ >= scenario_.steady_state) steady_stopped_ = true;
  }
}

namespace {
/// Mean, max and histogram of the staleness of the applied gradients.
json staleness_summary(const std::map<int64_t, int64_t>& hist) {
  double sum = 0, count = 0;
  json h = json::object();
  for (auto [k, c] : hist) {
    sum += static_cast<double>(k * c);
    count += static_cast<double>(c);
    h[std::to_string(k)] = c;
  }
  return {{"mean", sum / count}, {"max", hist.rbegin()->first}, {"histogram", h}};
}

/// Scaling against one worker running the same workload alone (no variability): weak keeps
/// the per-worker batch, strong gives that worker the whole global batch.
json scaling_summary(const Workload& w, int workers, double mean_s) {
  const double compute_1 = w.io_s + w.forward_s + w.backward_s;
  const double t1 = compute_1 + w.update_s;
  const double t1_global = compute_1 * workers + w.update_s;
  return {{"single_worker_iteration_time_s", t1},
          {"weak_efficiency", mean_s > 0 ? t1 / mean_s : 0.0},
          {"single_worker_global_batch_iteration_time_s", t1_global},
          {"strong_efficiency", mean_s > 0 ? t1_global / (workers * mean_s) : 0.0}};
}
}  // namespace

json RunRecorder::finish(const EngineResult& result, double wall_time_s, const json& extra) {
  flush_rows();
  // A run stopped early (target accuracy) counts the iterations every worker finished.
  int completed = 0;
  while (completed < scenario_.iterations && updates_done_[completed] == scenario_.workers)
    ++completed;
  const int warm = std::min(scenario_.warmup_iterations, std::max(0, completed - 1));
  std::vector<double> times;
  double prev = warm > 0 ? iteration_end_[warm - 1] : 0.0;
  double comm = 0, compute = 0, update = 0, exposed = 0;
  for (int i = warm; i < completed; ++i) {
    times.push_back(iteration_end_[i] - prev);
    prev = iteration_end_[i];
    comm += comm_per_iter_[i];
    compute += compute_sum_[i];
    update += update_sum_[i];
    exposed += exposed_sum_[i];
  }
  const double n = static_cast<double>(std::max<size_t>(1, times.size()));
  const double per_worker = n * scenario_.workers;
  SeriesStats st = series_stats(times);
  json s;
  s["scenario"] = scenario_.name;
  s["scheme"] = scenario_.scheme.type;
  s["workers"] = scenario_.workers;
  s["iterations"] = completed;
  s["warmup_iterations"] = warm;
  s["batch_size"] = scenario_.batch_size;
  s["model"] = workload_.model_name;
  s["parameters"] = workload_.parameters;
  s["gradient_bytes"] = workload_.gradient_bytes;
  s["buckets"] = workload_.buckets.size();
  s["collective"] = scenario_.collective;
  s["network_model"] = network_model_name(scenario_.network_model);
  s["fidelity"] = fidelity_name(scenario_.fidelity);
  s["simulated_time_s"] = result.simulated_time_s;
  s["iteration_time_s"] = {{"mean", st.mean}, {"p50", st.p50}, {"p99", st.p99}};
  // Samples per second summed over workers, each at its own steady-state pace (with a
  // barrier every worker has the group's pace; without one, fast workers keep theirs).
  double throughput = 0;
  for (int w = 0; w < scenario_.workers; ++w)
    if (worker_time_[w] > 0)
      throughput += scenario_.samples_per_iteration() * worker_iters_[w] / worker_time_[w];
  s["throughput_samples_per_s"] = throughput;
  s["compute_s_per_iter"] = compute / per_worker;
  s["update_s_per_iter"] = update / per_worker;
  s["comm_s_per_iter"] = comm / n;
  s["exposed_comm_s_per_iter"] = exposed / per_worker;
  // Staleness where the scheme defines it: measured for async, fixed for ssp and pseudo_sync.
  std::map<int64_t, int64_t> hist = staleness_;
  for (size_t k = 0; k < staleness_dense_.size(); ++k)
    if (staleness_dense_[k] > 0) hist[static_cast<int64_t>(k)] = staleness_dense_[k];
  const int64_t updates = static_cast<int64_t>(completed) * scenario_.workers;
  if (const auto& fixed = scheme_traits(scenario_).fixed_staleness)
    if (std::optional<int> lag = fixed(scenario_)) hist = {{*lag, updates}};
  if (!hist.empty()) s["staleness"] = staleness_summary(hist);
  s["scaling"] = scaling_summary(workload_, scenario_.workers, st.mean);
  if (scenario_.steady_state > 0)
    s["steady_state"] = {{"window", scenario_.steady_state},
                         {"active", steady_active_},
                         {"stopped", steady_stopped_},
                         {"iterations_requested", scenario_.iterations}};
  for (const auto& [k, v] : extra.items()) s[k] = v;
  s["activities"] = result.activities;
  if (result.closed_form_messages >= 0)
    s["closed_form"] = {{"messages", result.closed_form_messages},
                        {"handed_over", result.closed_form_handovers}};
  s["wall_time_s"] = wall_time_s;
  s["sgdsim_version"] = SGDSIM_VERSION;

  iterations_csv_.commit();
  if (timeline_) {
    timeline_->stream() << "\n]}\n";
    timeline_->commit();
  }
  write_file_atomic(out_dir_ / "scenario.resolved.json", scenario_.resolved.dump(2) + "\n");
  write_file_atomic(out_dir_ / "summary.json", s.dump(2) + "\n");
  return s;
}

}  // namespace sgdsim

namespace sgdsim {

void write_convergence(const std::filesystem::path& dir,
                       const std::vector<ConvergencePoint>& points) {
  AtomicFile f(dir / "convergence.csv");
  // Schemes with diverging replicas (gossip) add their consensus distance; others stay as they
  // were.
  const bool consensus = !points.empty() && points.front().consensus_distance >= 0;
  f.stream() << (consensus ? "time_s,iteration,loss,accuracy,consensus_distance\n"
                           : "time_s,iteration,loss,accuracy\n");
  for (const auto& p : points) {
    f.stream() << fmt::format("{:.9f},{},{:.6f},{:.6f}", p.time_s, p.iteration, p.loss, p.accuracy);
    f.stream() << (consensus ? fmt::format(",{:.9e}\n", p.consensus_distance) : "\n");
  }
  f.commit();
}

}  // namespace sgdsim
