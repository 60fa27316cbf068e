// Chakra ET import for `sgdsim trace` (see chakra.hpp). Leaves out what a single rank's file
// cannot say: the time of collectives whose nodes carry no recorded duration (0 here; the
// simulator times them when the files are a scenario's workload.chakra).
#include "sim/trace/chakra.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "sim/core/errors.hpp"
#include "sim/trace/input_file.hpp"

namespace sgdsim {

namespace fs = std::filesystem;

bool looks_like_chakra(const std::string& path) {
  const fs::path p(path);
  return p.extension() == ".et" || (p.extension() == ".gz" && p.stem().extension() == ".et");
}

namespace {

/// Rank and world size from "<prefix>.<rank>.et" (-1 / 0 when the name does not say).
std::pair<int, int> rank_from_name(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();  // <prefix>.<rank>
  const size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size()) return {-1, 0};
  const std::string digits = stem.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.size() > 6)
    return {-1, 0};
  const std::string prefix = (fs::path(path).parent_path() / stem.substr(0, dot)).string();
  int world = 0;
  std::error_code ec;
  while (fs::is_regular_file(chakra_rank_file(prefix, world), ec)) ++world;
  return {std::stoi(digits), world};
}

}  // namespace

namespace {

/// Every node's earliest finish over its recorded durations, and the nodes in a topological
/// order (file order is not topological in general); a cycle is an InputError.
std::vector<double> earliest_finish(const ChakraTrace& et, const std::string& path,
                                    std::vector<size_t>& order) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < et.nodes.size(); ++i) index[et.nodes[i].id] = i;
  std::vector<double> finish(et.nodes.size(), -1.0);
  std::vector<int> state(et.nodes.size(), 0);  // 0 new, 1 open, 2 done
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t root = 0; root < et.nodes.size(); ++root) {
    if (state[root]) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, k] = stack.back();
      const ChakraNode& n = et.nodes[i];
      const size_t deps = n.data_deps.size() + n.ctrl_deps.size();
      if (k < deps) {
        const uint64_t d =
            k < n.data_deps.size() ? n.data_deps[k] : n.ctrl_deps[k - n.data_deps.size()];
        ++k;
        const size_t j = index.at(d);
        if (state[j] == 1)
          throw InputError(path, fmt::format("node {}", n.id),
                           "its dependencies form a cycle: expected an acyclic trace");
        if (state[j] == 0) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
        continue;
      }
      double start = 0;
      for (uint64_t d : n.data_deps) start = std::max(start, finish[index.at(d)]);
      for (uint64_t d : n.ctrl_deps) start = std::max(start, finish[index.at(d)]);
      finish[i] = start + n.duration_micros * 1e-6;
      state[i] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }
  return finish;
}

}  // namespace

MeasuredTrace chakra_trace(const std::string& path) {
  const ChakraTrace et = parse_chakra(read_text_maybe_gzip(path), path);  // plain or gzip
  MeasuredTrace t;
  t.file = path;
  t.format = "chakra";
  std::tie(t.rank, t.world_size) = rank_from_name(path);
  if (t.rank >= t.world_size) t.world_size = 0;
  std::vector<size_t> order;
  const std::vector<double> finish = earliest_finish(et, path, order);
  MeasuredStep step;
  int comps = 0, colls = 0, p2p = 0;
  bool parts_unscaled = false;
  for (size_t i : order) {
    const ChakraNode& n = et.nodes[i];
    step.time_s = std::max(step.time_s, finish[i]);
    if (n.type == ChakraNodeType::comp) {
      step.compute_s += n.duration_micros * 1e-6;
      ++comps;
      continue;
    }
    const bool coll = n.type == ChakraNodeType::comm_coll;
    if (!coll && n.type != ChakraNodeType::comm_send && n.type != ChakraNodeType::comm_recv)
      continue;
    MeasuredCollective c;
    c.step = 0;
    c.index = static_cast<int>(t.collectives.size());
    c.name = coll ? normalize_collective_name(
                        chakra_collective_name(static_cast<ChakraCollective>(*n.comm_type)))
                  : (n.type == ChakraNodeType::comm_send ? "send" : "recv");
    c.bytes = static_cast<double>(*n.comm_size);
    // An ALL_GATHER's comm_size is one rank's part (as ASTRA-sim reads it); sizes here are the
    // gathered whole, as nccl-tests and sgdsim count an all-gather.
    const bool part = coll && *n.comm_type == static_cast<int64_t>(ChakraCollective::all_gather);
    if (part && t.world_size > 0) c.bytes *= t.world_size;
    parts_unscaled = parts_unscaled || (part && t.world_size <= 0);
    c.time_s = n.duration_micros * 1e-6;
    c.start_s = finish[i] - c.time_s;
    c.group_size = coll ? t.world_size : 2;
    c.detail = n.name;
    step.comm_s += c.time_s;
    (coll ? colls : p2p)++;
    t.collectives.push_back(std::move(c));
  }
  t.steps.push_back(step);
  t.notes.push_back(fmt::format(
      "Chakra ET{}: {} nodes ({} COMP, {} COMM_COLL, {} send/recv); one step, its time the "
      "critical path over recorded durations (communication nodes without one count 0: "
      "simulate the files as workload.chakra to time them)",
      et.version.empty() ? "" : " version " + et.version, et.nodes.size(), comps, colls, p2p));
  if (parts_unscaled)
    t.notes.push_back(
        "ALL_GATHER sizes are one rank's part (comm_size): the file names give no world size "
        "to scale them by");
  return t;
}

}  // namespace sgdsim
