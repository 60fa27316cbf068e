// Export of one iteration's task graph as Chakra ET (see chakra_export.hpp). Leaves out
// cross-iteration edges (one file holds one iteration; ASTRA-sim repeats it) and async's
// parameter servers (their applies run on server hosts that are not ranks).
#include "sim/app/chakra_export.hpp"

#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/workload/chakra_et.hpp"

namespace sgdsim {

namespace {

/// Whether task `t` appears in rank r's trace.
bool on_rank(const Task& t, int r) {
  if (t.kind == TaskKind::comm) return t.worker < 0 || t.src == r || t.dst == r;
  return t.worker == r;
}

/// Task `t` as rank r's node `id` of a trace over `ranks` ranks.
ChakraNode node_of(const Task& t, int r, int ranks, uint64_t id) {
  ChakraNode n;
  n.id = id;
  n.name = task_label(t);
  n.is_cpu_op = false;
  if (t.kind != TaskKind::comm) {
    n.type = ChakraNodeType::comp;
    n.duration_micros = static_cast<uint64_t>(std::llround(t.duration_s * 1e6));
    return n;
  }
  n.comm_size = static_cast<int64_t>(std::llround(t.bytes));
  if (t.worker < 0 && t.src < 0) {
    n.type = ChakraNodeType::comm_coll;
    // ASTRA-sim reads an ALL_GATHER's comm_size as one rank's part of the gathered whole.
    if (t.op == CollectiveOp::allgather)
      n.comm_size = static_cast<int64_t>(std::llround(t.bytes / ranks));
    const ChakraCollective type = t.op == CollectiveOp::allgather ? ChakraCollective::all_gather
                                  : t.op == CollectiveOp::reduce_scatter
                                      ? ChakraCollective::reduce_scatter
                                      : ChakraCollective::all_reduce;
    n.comm_type = static_cast<int64_t>(type);
  } else {
    n.type = t.src == r ? ChakraNodeType::comm_send : ChakraNodeType::comm_recv;
    n.comm_src = t.src;
    n.comm_dst = t.dst;
    n.comm_tag = t.index;
  }
  return n;
}

}  // namespace

std::vector<std::string> chakra_rank_streams(const TaskGraph& g, int ranks) {
  for (uint32_t i = 0; i < g.num_tasks(); ++i)
    if (g.task(i).kind == TaskKind::comm && g.task(i).subgroup != 0)
      throw InputError(
          "usage: dag --format chakra: collectives over subgroups of the workers (HSDP) have no "
          "process-group form here: expected collectives over all workers");
  for (uint32_t i = 0; i < g.num_tasks(); ++i)
    if (g.task(i).kind == TaskKind::apply || g.task(i).pull)
      throw InputError(
          "usage: dag --format chakra: the scheme's parameter servers (async) have no Chakra "
          "form: expected a scheme whose workers exchange gradients by collectives");
  const auto edges = g.edges();
  std::vector<std::string> out;
  for (int r = 0; r < ranks; ++r) {
    ChakraTrace t;
    t.version = "0.0.4";
    t.schema = "sgdsim dag --format chakra";
    std::unordered_map<uint32_t, size_t> node;  // task -> position in t.nodes
    for (uint32_t i = 0; i < g.num_tasks(); ++i)
      if (on_rank(g.task(i), r)) {
        node[i] = t.nodes.size();
        t.nodes.push_back(node_of(g.task(i), r, ranks, t.nodes.size()));
      }
    for (const auto& [from, to] : edges) {
      auto a = node.find(from), b = node.find(to);
      if (a != node.end() && b != node.end()) t.nodes[b->second].data_deps.push_back(a->second);
    }
    out.push_back(encode_chakra(t));
  }
  return out;
}

std::vector<std::string> write_chakra_files(const std::vector<std::string>& streams,
                                            const std::string& prefix) {
  std::vector<std::string> files;
  const auto parent = std::filesystem::path(prefix).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  for (size_t r = 0; r < streams.size(); ++r) {
    files.push_back(chakra_rank_file(prefix, static_cast<int>(r)));
    write_file_atomic(files.back(), streams[r]);
  }
  return files;
}

}  // namespace sgdsim
