// Chakra ET files as a sgdsim workload: COMP nodes are compute with their recorded durations,
// COMM_COLL ALL_REDUCE, ALL_GATHER and REDUCE_SCATTER nodes sgdsim collectives (on the
// scenario's algorithm, one stream in topological order), COMM_SEND/COMM_RECV pairs
// point-to-point messages; data and control dependencies are both kept as dependencies.
// comm_size as ASTRA-sim reads it (astra-sim's native Ring: an ALL_GATHER's comm_size is what
// each rank contributes, the result p times that; a REDUCE_SCATTER's is each rank's input, the
// result 1/p of it), measured with ASTRA-sim on its own microbenchmarks (docs/chakra.md).
// Leaves out the other collective types (ALL_TO_ALL, BROADCAST, REDUCE, GATHER, SCATTER,
// BARRIER), sub-group collectives (pg_name: every collective spans all ranks), MEM_LOAD/MEM_STORE
// nodes, and the recorded durations of communication nodes (the network model times them).
#include "sim/workload/chakra_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "sim/core/errors.hpp"

namespace sgdsim {

namespace {

ChakraCollective type_of(const ChakraNode& n) {
  return static_cast<ChakraCollective>(*n.comm_type);
}

[[noreturn]] void fail_at(const ChakraTrace& t, const ChakraNode& n, const std::string& what) {
  throw InputError(t.file, fmt::format("node {}", n.id), what);
}

bool names_backward(const std::string& name) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return s.find("bwd") != std::string::npos || s.find("backward") != std::string::npos ||
         s.find("grad") != std::string::npos;
}

/// Node indices of a trace in a topological order (Kahn; ties by file order).
std::vector<size_t> topological_nodes(const ChakraTrace& t) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < t.nodes.size(); ++i) index[t.nodes[i].id] = i;
  std::vector<std::vector<size_t>> succ(t.nodes.size());
  std::vector<int> indeg(t.nodes.size(), 0);
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    std::vector<uint64_t> deps = t.nodes[i].data_deps;
    deps.insert(deps.end(), t.nodes[i].ctrl_deps.begin(), t.nodes[i].ctrl_deps.end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (uint64_t d : deps) {
      succ[index.at(d)].push_back(i);
      ++indeg[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (indeg[i] == 0) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t j : succ[i])
      if (--indeg[j] == 0) ready.push(j);
  }
  if (order.size() != t.nodes.size()) {
    for (size_t i = 0; i < t.nodes.size(); ++i)
      if (indeg[i] > 0)
        fail_at(t, t.nodes[i], "its dependencies form a cycle: expected an acyclic trace");
  }
  return order;
}

/// One rank's ops in topological order; collectives numbered by their order.
std::vector<ChakraOp> rank_ops(const ChakraTrace& t, int rank, int ranks,
                               std::vector<const ChakraNode*>& collective_nodes) {
  std::vector<size_t> order = topological_nodes(t);
  std::unordered_map<uint64_t, int> op_of;
  std::vector<ChakraOp> ops;
  for (size_t i : order) {
    const ChakraNode& n = t.nodes[i];
    ChakraOp op;
    op.node_id = n.id;
    op.name = n.name;
    switch (n.type) {
      case ChakraNodeType::comp:
      case ChakraNodeType::metadata:  // no work of its own: a zero-time ordering point
        op.kind = ChakraOp::Kind::compute;
        op.duration_s = n.type == ChakraNodeType::comp ? n.duration_micros * 1e-6 : 0.0;
        op.backward = names_backward(n.name);
        break;
      case ChakraNodeType::comm_coll:
        if (!chakra_collective_op(type_of(n)))
          fail_at(t, n,
                  fmt::format("{} collective: expected ALL_REDUCE, ALL_GATHER or REDUCE_SCATTER "
                              "(other collective types are not modelled)",
                              chakra_collective_name(type_of(n))));
        op.kind = ChakraOp::Kind::collective;
        op.collective = static_cast<int>(collective_nodes.size());
        collective_nodes.push_back(&n);
        break;
      case ChakraNodeType::comm_send:
      case ChakraNodeType::comm_recv: {
        const bool send = n.type == ChakraNodeType::comm_send;
        op.kind = send ? ChakraOp::Kind::send : ChakraOp::Kind::recv;
        const int64_t peer = send ? *n.comm_dst : *n.comm_src;
        if (peer >= ranks || peer == rank)
          fail_at(t, n,
                  fmt::format("{} rank {}: expected another rank of the {} traces (this file is "
                              "rank {})",
                              send ? "comm_dst" : "comm_src", peer, ranks, rank));
        break;
      }
      default:
        fail_at(t, n,
                fmt::format("{}: expected COMP, COMM_COLL, COMM_SEND, COMM_RECV or METADATA nodes "
                            "(memory nodes are not modelled)",
                            chakra_node_type_name(n.type)));
    }
    std::vector<uint64_t> deps = n.data_deps;
    deps.insert(deps.end(), n.ctrl_deps.begin(), n.ctrl_deps.end());
    for (uint64_t d : deps) op.preds.push_back(op_of.at(d));
    std::sort(op.preds.begin(), op.preds.end());
    op.preds.erase(std::unique(op.preds.begin(), op.preds.end()), op.preds.end());
    op_of[n.id] = static_cast<int>(ops.size());
    ops.push_back(std::move(op));
  }
  return ops;
}

/// Pairs sends with receives: the k-th send src -> dst with tag t meets the k-th such receive.
void match_messages(const std::vector<ChakraTrace>& traces, ChakraProgram& p) {
  using Key = std::tuple<int, int, int64_t>;
  std::map<Key, std::vector<std::pair<int, int>>> sends, recvs;  // (rank, op) in order
  for (int r = 0; r < static_cast<int>(p.ranks.size()); ++r)
    for (int i = 0; i < static_cast<int>(p.ranks[r].size()); ++i) {
      const ChakraOp& op = p.ranks[r][i];
      if (op.kind != ChakraOp::Kind::send && op.kind != ChakraOp::Kind::recv) continue;
      const ChakraNode* n = nullptr;
      for (const auto& x : traces[r].nodes)
        if (x.id == op.node_id) n = &x;
      const int64_t tag = n->comm_tag.value_or(0);
      if (op.kind == ChakraOp::Kind::send)
        sends[{r, static_cast<int>(*n->comm_dst), tag}].push_back({r, i});
      else
        recvs[{static_cast<int>(*n->comm_src), r, tag}].push_back({r, i});
    }
  auto node_of = [&](int r, int i) -> const ChakraNode& {
    for (const auto& x : traces[r].nodes)
      if (x.id == p.ranks[r][i].node_id) return x;
    return traces[r].nodes.front();
  };
  for (auto& [key, list] : sends) {
    auto& other = recvs[key];
    const auto [src, dst, tag] = key;
    for (size_t k = 0; k < list.size(); ++k) {
      const ChakraNode& s = node_of(list[k].first, list[k].second);
      if (k >= other.size())
        fail_at(traces[src], s,
                fmt::format("send to rank {} (tag {}) has no matching COMM_RECV_NODE in {}: "
                            "expected as many receives from rank {} with that tag",
                            dst, tag, traces[dst].file, src));
      const ChakraNode& rcv = node_of(other[k].first, other[k].second);
      if (*rcv.comm_size != *s.comm_size)
        fail_at(traces[dst], rcv,
                fmt::format("receives comm_size {} from rank {} whose send (node {}) has {}: "
                            "expected equal sizes",
                            *rcv.comm_size, src, s.id, *s.comm_size));
      const int m = static_cast<int>(p.messages.size());
      p.messages.push_back({src, dst, tag, static_cast<double>(*s.comm_size)});
      p.ranks[src][list[k].second].message = m;
      p.ranks[dst][other[k].second].message = m;
    }
  }
  for (auto& [key, list] : recvs) {
    const auto [src, dst, tag] = key;
    const size_t sent = sends.count(key) ? sends[key].size() : 0;
    if (list.size() > sent)
      fail_at(traces[dst], node_of(list[sent].first, list[sent].second),
              fmt::format("receive from rank {} (tag {}) has no matching COMM_SEND_NODE in {}: "
                          "expected as many sends to rank {} with that tag",
                          src, tag, traces[src].file, dst));
  }
}

/// The whole program must be acyclic once collectives and messages join ranks (and the
/// collective stream orders collectives), or the run would deadlock.
void check_acyclic(const ChakraProgram& p) {
  // Vertices: every rank's compute ops, then one per collective, then one per message.
  std::vector<size_t> base(p.ranks.size() + 1, 0);
  for (size_t r = 0; r < p.ranks.size(); ++r) base[r + 1] = base[r] + p.ranks[r].size();
  const size_t coll0 = base.back(), msg0 = coll0 + p.collectives.size();
  const size_t n = msg0 + p.messages.size();
  auto vertex = [&](size_t r, int i) {
    const ChakraOp& op = p.ranks[r][i];
    if (op.kind == ChakraOp::Kind::collective) return coll0 + op.collective;
    if (op.kind == ChakraOp::Kind::send || op.kind == ChakraOp::Kind::recv)
      return msg0 + op.message;
    return base[r] + i;
  };
  std::vector<std::vector<size_t>> succ(n);
  std::vector<int> indeg(n, 0);
  auto edge = [&](size_t a, size_t b) {
    if (a == b) return;
    succ[a].push_back(b);
    ++indeg[b];
  };
  for (size_t r = 0; r < p.ranks.size(); ++r)
    for (int i = 0; i < static_cast<int>(p.ranks[r].size()); ++i)
      for (int d : p.ranks[r][i].preds) edge(vertex(r, d), vertex(r, i));
  for (size_t c = 1; c < p.collectives.size(); ++c) edge(coll0 + c - 1, coll0 + c);
  std::vector<size_t> ready;
  for (size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) ready.push_back(v);
  size_t seen = 0;
  while (!ready.empty()) {
    const size_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (size_t w : succ[v])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  if (seen != n)
    throw InputError(p.files.front(), "",
                     "the ranks' dependencies form a cycle through their collectives (run one "
                     "at a time, in each rank's topological order) or messages: expected "
                     "traces whose collectives come in the same order on every rank and whose "
                     "receives do not wait for what their sends wait for");
}

}  // namespace

std::optional<CollectiveOp> chakra_collective_op(ChakraCollective type) {
  switch (type) {
    case ChakraCollective::all_reduce:
      return CollectiveOp::allreduce;
    case ChakraCollective::all_gather:
      return CollectiveOp::allgather;
    case ChakraCollective::reduce_scatter:
      return CollectiveOp::reduce_scatter;
    default:
      return std::nullopt;
  }
}

bool chakra_only_allreduces(const Workload& w) {
  return std::all_of(w.buckets.begin(), w.buckets.end(),
                     [](const Bucket& b) { return b.op == CollectiveOp::allreduce; });
}

ChakraProgram build_chakra_program(const std::vector<ChakraTrace>& traces) {
  ChakraProgram p;
  const int ranks = static_cast<int>(traces.size());
  std::vector<std::vector<const ChakraNode*>> colls(traces.size());
  for (int r = 0; r < ranks; ++r) {
    p.files.push_back(traces[r].file);
    p.ranks.push_back(rank_ops(traces[r], r, ranks, colls[r]));
  }
  for (int r = 0; r < ranks; ++r) {
    if (colls[r].size() != colls[0].size())
      throw InputError(traces[r].file, "",
                       fmt::format("{} collective nodes: expected {} as in {} (every collective "
                                   "spans all ranks)",
                                   colls[r].size(), colls[0].size(), traces[0].file));
    for (size_t c = 0; c < colls[r].size(); ++c) {
      if (*colls[r][c]->comm_type != *colls[0][c]->comm_type)
        fail_at(traces[r], *colls[r][c],
                fmt::format("collective #{} (topological order) is {}: expected {} as node {} "
                            "of {}",
                            c, chakra_collective_name(type_of(*colls[r][c])),
                            chakra_collective_name(type_of(*colls[0][c])), colls[0][c]->id,
                            traces[0].file));
      if (*colls[r][c]->comm_size != *colls[0][c]->comm_size)
        fail_at(traces[r], *colls[r][c],
                fmt::format("collective #{} (topological order) has comm_size {}: expected {} "
                            "as node {} of {}",
                            c, *colls[r][c]->comm_size, *colls[0][c]->comm_size, colls[0][c]->id,
                            traces[0].file));
    }
  }
  for (const ChakraNode* n : colls.empty() ? std::vector<const ChakraNode*>{} : colls[0])
    p.collectives.push_back(
        {static_cast<ChakraCollective>(*n->comm_type), static_cast<double>(*n->comm_size)});
  match_messages(traces, p);
  check_acyclic(p);
  return p;
}

Workload load_chakra_workload(const Scenario& s) {
  const std::string& file = s.source_file;
  if (static_cast<int>(s.chakra_files.size()) != s.workers)
    throw InputError(file, "/workload/chakra",
                     fmt::format("{} ET files: expected one per worker (workers.count {})",
                                 s.chakra_files.size(), s.workers));
  std::vector<ChakraTrace> traces;
  for (const auto& f : s.chakra_files) traces.push_back(read_chakra_file(f));
  auto program = std::make_shared<ChakraProgram>(build_chakra_program(traces));
  if (s.scheme.merge == "mgwfbp")
    throw InputError(file, "/scheme/merge",
                     "\"mgwfbp\" with a Chakra workload: expected \"none\" (the traces fix their "
                     "collectives)");
  Workload w;
  w.model_name = "chakra:" + s.chakra_files.front();
  w.measured = true;  // recorded durations: device.speed does not scale them
  for (const auto& op : program->ranks.front()) {
    if (op.kind != ChakraOp::Kind::compute) continue;
    LayerCost c;
    c.name = op.name;
    (op.backward ? c.backward_s : c.forward_s) = op.duration_s;
    (op.backward ? w.backward_s : w.forward_s) += op.duration_s;
    w.layers.push_back(std::move(c));
  }
  const int ranks = static_cast<int>(program->ranks.size());
  for (const auto& c : program->collectives) {
    const CollectiveOp op = *chakra_collective_op(c.type);
    // An ALL_GATHER's comm_size is one rank's part; CollectiveOp counts the gathered whole.
    const double bytes = op == CollectiveOp::allgather ? c.bytes * ranks : c.bytes;
    w.buckets.push_back({0, 0, bytes, 0.0, op});
    // Gradients travel in allreduces and reduce-scatters; all-gathers carry parameters.
    if (op != CollectiveOp::allgather) w.gradient_bytes += bytes;
  }
  w.parameters = static_cast<int64_t>(w.gradient_bytes / s.gradient_bytes_per_parameter);
  // The optimizer step as for profiles (device.optimizer, else 4 FLOPs per parameter), unless
  // the traces hold it.
  if (s.chakra_optimizer == "sgdsim") {
    const double flops = scenario_device_speed(s) * s.device.efficiency;
    w.flop_pass_s = static_cast<double>(w.parameters) * kUpdateFlopsPerParameter / flops;
    w.update_s = optimizer_step_s(s.device, static_cast<double>(w.parameters), flops);
  }
  w.chakra = std::move(program);
  return w;
}

}  // namespace sgdsim
