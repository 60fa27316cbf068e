// sgdsim timeline.json -> MeasuredTrace (the round trip of the simulator's own output).
#include "sim/trace/sgdsim_timeline.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"

namespace sgdsim {

bool is_sgdsim_timeline(const TraceEventFile& ev) {
  return ev.time_unit.find("simulated") != std::string::npos;
}

MeasuredTrace sgdsim_timeline_trace(const TraceEventFile& ev, int warmup) {
  MeasuredTrace t;
  t.file = ev.file;
  t.format = "sgdsim";
  t.device = "simulated";
  int workers = 0;
  const int process_name = ev.find("process_name");
  for (const auto& e : ev.events)
    if (e.ph == 'M' && e.name == process_name) ++workers;
  struct Iter {
    std::map<int64_t, double> update_end;  // worker -> end of its update
    std::map<int64_t, double> compute;     // worker -> io + fwd + bwd
  };
  std::map<int64_t, Iter> iters;
  std::vector<MeasuredCollective> colls;
  for (const auto& e : ev.events) {
    if (e.ph != 'X' || e.iteration < 0) continue;
    const std::string& cat = ev.str(e.cat);
    const std::string& name = ev.str(e.name);
    const double start = e.ts_us * 1e-6, end = (e.ts_us + e.dur_us) * 1e-6;
    if (cat == "compute" && e.tid == 0) {
      if (name == "update")
        iters[e.iteration].update_end[e.pid] = end;
      else if (name != "predict")
        iters[e.iteration].compute[e.pid] += end - start;
    } else if (cat == "communication" && e.pid == 0 && name.rfind("comm[", 0) == 0) {
      MeasuredCollective c;
      c.step = e.iteration;
      c.index = static_cast<int>(e.bucket);
      c.name = "allreduce";
      c.bytes = e.bytes >= 0 ? e.bytes : kUnknown;
      c.time_s = end - start;
      c.start_s = start;
      c.group_size = workers;
      c.detail = name;
      colls.push_back(c);
    }
  }
  if (workers == 0)
    for (const auto& [it, i] : iters)
      workers = std::max(workers, static_cast<int>(i.update_end.size()));
  t.world_size = workers;
  // Iterations in order, while every worker finished them (as summary.json counts).
  std::map<int64_t, double> comm;
  for (const auto& c : colls) comm[c.step] += c.time_s;
  double prev_end = 0;
  int64_t expected = 0;
  for (const auto& [it, i] : iters) {
    if (it != expected || static_cast<int>(i.update_end.size()) < workers || workers == 0) break;
    double end = 0, compute = 0;
    for (const auto& [w, e] : i.update_end) end = std::max(end, e);
    for (const auto& [w, c] : i.compute) compute += c;
    MeasuredStep st;
    st.step = it;
    st.start_s = prev_end;
    st.time_s = end - prev_end;
    st.compute_s = compute / workers;
    st.comm_s = comm.count(it) != 0 ? comm[it] : 0.0;
    t.steps.push_back(st);
    prev_end = end;
    ++expected;
  }
  for (auto& c : colls)
    if (c.step < expected) {
      c.start_s -= c.step > 0 ? t.steps[static_cast<size_t>(c.step) - 1].start_s +
                                    t.steps[static_cast<size_t>(c.step) - 1].time_s
                              : 0.0;
      t.collectives.push_back(c);
    }
  std::stable_sort(t.collectives.begin(), t.collectives.end(),
                   [](const MeasuredCollective& a, const MeasuredCollective& b) {
                     return a.step != b.step ? a.step < b.step : a.index < b.index;
                   });
  t.warmup_steps = std::clamp(warmup, 0, std::max(0, static_cast<int>(t.steps.size()) - 1));
  t.notes.push_back(
      "sgdsim timeline: an iteration ends with the last worker's update; its time is counted "
      "from the previous iteration's end, as in summary.json; collectives are worker 0's "
      "comm[b] tasks; start_s is relative to the previous iteration's end");
  return t;
}

int warmup_beside(const std::string& timeline_path) {
  namespace fs = std::filesystem;
  fs::path resolved = fs::path(timeline_path).parent_path() / "scenario.resolved.json";
  std::error_code ec;
  if (!fs::is_regular_file(resolved, ec)) return -1;
  try {
    auto j = parse_json_file(resolved.string());
    if (j.is_object() && j.contains("warmup_iterations") &&
        j["warmup_iterations"].is_number_integer())
      return j["warmup_iterations"].get<int>();
  } catch (const InputError&) {
  }
  return -1;
}

MeasuredTrace read_sgdsim_timeline(const std::string& path, int warmup) {
  TraceEventFile ev = read_trace_events(path);
  if (!is_sgdsim_timeline(ev))
    throw InputError(path, "/otherData/time_unit",
                     "expected an sgdsim timeline (otherData.time_unit \"us of simulated "
                     "time\"); use --format kineto for other traces");
  return sgdsim_timeline_trace(ev, warmup >= 0 ? warmup : std::max(0, warmup_beside(path)));
}

}  // namespace sgdsim
