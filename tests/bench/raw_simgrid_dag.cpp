// Baseline for `make bench`: the same task DAG as `sgdsim run`, flattened up front into
// activity-level arrays and executed just in time with raw SimGrid calls, with no reporting,
// no lazy window and no observer. Prints the simulated time, activities and wall time as JSON.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include "sim/analytic/platform_model.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/files.hpp"
#include "sim/engine/engine.hpp"
#include "sim/schemes/scheme.hpp"

namespace sg4 = simgrid::s4u;
using namespace sgdsim;

namespace {

struct Node {
  int kind = 0;  // 0 virtual, 1 exec, 2 comm
  int a = 0, b = 0;
  double amount = 0;
};

std::vector<Node> nodes;
std::vector<uint32_t> pending, succ_off, succ;
std::vector<sg4::Host*> hosts;
std::vector<sg4::ActivityPtr> handles;
uint64_t activities = 0;

void release(uint32_t n);

void start(uint32_t n) {
  const Node& node = nodes[n];
  if (node.kind == 0) {
    release(n);
    return;
  }
  ++activities;
  sg4::ActivityPtr act;
  if (node.kind == 1) {
    auto e = sg4::Exec::init();
    e->set_flops_amount(node.amount * hosts[node.a]->get_speed());
    e->set_host(hosts[node.a]);
    act = e;
  } else {
    auto c = sg4::Comm::sendto_init(hosts[node.a], hosts[node.b]);
    c->set_payload_size(static_cast<uint64_t>(std::llround(node.amount * kByteScale)));
    act = c;
  }
  act->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(n)));
  handles[n] = act;
  act->start();
}

void release(uint32_t n) {
  for (uint32_t i = succ_off[n]; i < succ_off[n + 1]; ++i)
    if (--pending[succ[i]] == 0) start(succ[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: raw_simgrid_dag SCENARIO.json ITERATIONS [--set P=V]...\n");
    return 2;
  }
  std::vector<std::string> overrides;
  for (int i = 3; i + 1 < argc; i += 2) overrides.push_back(argv[i + 1]);
  overrides.push_back(std::string("iterations=") + argv[2]);
  Scenario s = load_scenario(argv[1], overrides);
  Workload w = load_workload(s);
  auto scheme = make_scheme({&s, &w});
  const Collective& coll = collective_by_name(s.collective);
  TaskGraph g = join_fragments(build_fragments(*scheme, s.iterations));

  // Flatten: every task gets an entry and an exit node; compute tasks one Exec between them,
  // collectives their schedule's Comms.
  std::vector<std::vector<uint32_t>> out;
  auto add = [&](Node n) {
    nodes.push_back(n);
    out.emplace_back();
    return static_cast<uint32_t>(nodes.size() - 1);
  };
  std::vector<uint32_t> entry(g.num_tasks()), exit_node(g.num_tasks());
  std::map<double, Schedule> schedules;
  for (uint32_t t = 0; t < g.num_tasks(); ++t) {
    const Task& task = g.task(t);
    entry[t] = add({});
    exit_node[t] = add({});
    if (task.kind != TaskKind::comm) {
      uint32_t e = add({1, task.worker, 0, task.duration_s});
      out[entry[t]].push_back(e);
      out[e].push_back(exit_node[t]);
      continue;
    }
    auto it = schedules.find(task.bytes);
    if (it == schedules.end())
      it = schedules.emplace(task.bytes, coll.schedule(s.workers, task.bytes)).first;
    const Schedule& sch = it->second;
    if (sch.steps.empty()) out[entry[t]].push_back(exit_node[t]);
    uint32_t base = static_cast<uint32_t>(nodes.size());
    for (const auto& st : sch.steps) add({2, st.src, st.dst, st.bytes});
    for (uint32_t k = 0; k < sch.steps.size(); ++k) {
      if (sch.pred_count[k] == 0) out[entry[t]].push_back(base + k);
      bool sink = sch.succ_offsets[k] == sch.succ_offsets[k + 1];
      for (uint32_t i = sch.succ_offsets[k]; i < sch.succ_offsets[k + 1]; ++i)
        out[base + k].push_back(base + sch.succ[i]);
      if (sink) out[base + k].push_back(exit_node[t]);
    }
  }
  for (auto [a, b] : g.edges()) out[exit_node[a]].push_back(entry[b]);
  pending.assign(nodes.size(), 0);
  succ_off.assign(nodes.size() + 1, 0);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (uint32_t v : out[n]) ++pending[v];
    succ.insert(succ.end(), out[n].begin(), out[n].end());
    succ_off[n + 1] = static_cast<uint32_t>(succ.size());
  }
  out.clear();
  out.shrink_to_fit();
  handles.resize(nodes.size());

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> args = {"raw", "--log=xbt_cfg.thres:warning"};
  for (const auto& o : network_model_cfg(s.network_model)) args.push_back("--cfg=" + o);
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  int cargc = static_cast<int>(cargv.size());
  sg4::Engine e(&cargc, cargv.data());
  for (const char* opt : {"network/TCP-gamma", "network/weight-S"}) {
    double v = simgrid::config::get_value<double>(opt);
    if (v > 0) sg4::Engine::set_config(opt, v * kByteScale);
  }
  PlatformModel pm(*s.platform.generate);
  std::string xml =
      (std::filesystem::temp_directory_path() / ("raw-" + std::to_string(::getpid()) + ".xml"))
          .string();
  write_file_atomic(xml, pm.xml());
  e.load_platform(xml);
  std::filesystem::remove(xml);
  for (auto* l : e.get_all_links()) l->set_bandwidth(l->get_bandwidth() * kByteScale);
  for (int wk = 0; wk < s.workers; ++wk)
    hosts.push_back(e.host_by_name(pm.host_name(worker_host_index(
        wk, s.workers, s.workers_per_node, s.platform.generate->devices_per_node, s.placement))));
  std::vector<sg4::ActivityPtr> graveyard;
  sg4::Activity::on_completion_cb([&graveyard](sg4::Activity const& a) {
    graveyard.clear();
    auto n = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a.get_data<void>()));
    graveyard.push_back(std::move(handles[n]));
    release(n);
  });
  std::vector<uint32_t> roots;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (pending[n] == 0) roots.push_back(n);
  for (uint32_t n : roots) start(n);
  auto t1 = std::chrono::steady_clock::now();
  e.run();
  auto t2 = std::chrono::steady_clock::now();
  std::printf(
      "{\"simulated_time_s\": %.12g, \"activities\": %llu, \"wall_time_s\": %.6f, "
      "\"run_wall_time_s\": %.6f}\n",
      sg4::Engine::get_clock(), static_cast<unsigned long long>(activities),
      std::chrono::duration<double>(t2 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count());
  return 0;
}
