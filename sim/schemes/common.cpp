#include "sim/schemes/common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "sim/collectives/collective.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/chakra_chains.hpp"
#include "sim/workload/chakra_workload.hpp"

namespace sgdsim {

std::vector<WorkerChain> add_worker_chains(Fragment& f, const Scenario& s, const Workload& w,
                                           const ComputeVariability& v, double predict_s,
                                           int only_worker) {
  if (w.chakra) return add_chakra_chains(f, s, w, v, predict_s, only_worker);
  const int buckets = static_cast<int>(w.buckets.size());
  // A compressed exchange: each bucket's gradient is compressed on the device right after its
  // backward (one stream: the next bucket's backward waits); decompression runs with the step.
  const std::vector<learn::CompressedExchange> exchanges = bucket_exchanges(s, w);
  double decompress_s = 0;
  for (const auto& e : exchanges) decompress_s += device_operations_s(w, e.flops_after);
  const int lo = only_worker >= 0 ? only_worker : 0;
  const int hi = only_worker >= 0 ? only_worker + 1 : s.workers;
  std::vector<WorkerChain> chains(static_cast<size_t>(hi - lo));
  for (int k = lo; k < hi; ++k) {
    WorkerChain& c = chains[k - lo];
    int slot = 0;
    auto compute = [&](TaskKind kind, int index, double duration) {
      return f.graph.add_task(
          {kind, k, f.iteration, index, duration * v.factor(k, f.iteration, slot++), 0});
    };
    uint32_t prev = 0;
    bool has_prev = false;
    auto then = [&](uint32_t task) {  // the worker's next task in its one stream
      if (has_prev)
        f.graph.add_edge(prev, task);
      else
        c.first = task;
      has_prev = true;
      return prev = task;
    };
    // Gradient accumulation: the micro-batches before the last run forward and backward and
    // only add up their gradients (DDP's no_sync); the last one's buckets are exchanged.
    for (int m = 1; m < s.scheme.accumulation_steps; ++m) {
      if (w.io_s > 0) then(compute(TaskKind::io, m, w.io_s));
      then(compute(TaskKind::fwd, m, w.forward_s));
      for (int b = 0; b < buckets; ++b) then(compute(TaskKind::bwd, b, w.buckets[b].backward_s));
    }
    if (w.io_s > 0) then(compute(TaskKind::io, 0, w.io_s));
    then(compute(TaskKind::fwd, 0, w.forward_s));
    for (int b = 0; b < buckets; ++b) {
      c.bwd.push_back(then(compute(TaskKind::bwd, b, w.buckets[b].backward_s)));
      if (exchanges.empty()) continue;
      const double before_s = device_operations_s(w, exchanges[b].messages.front().flops_before);
      c.bwd.back() = then(compute(TaskKind::compress, b, before_s));  // its collective waits
    }
    c.last_bwd = prev;
    if (predict_s > 0) {
      c.predict = compute(TaskKind::predict, 0, predict_s);
      f.graph.add_edge(c.last_bwd, c.predict);
    }
    c.update = compute(TaskKind::update, 0, w.update_s + decompress_s);
    f.graph.add_edge(predict_s > 0 ? c.predict : c.last_bwd, c.update);
  }
  return chains;
}

namespace {

/// The messages after the first of bucket b's compressed exchange: each waits for every
/// worker's compute before it, which waits for the message before. Returns the last message.
uint32_t add_later_messages(Fragment& f, const Workload& w, const learn::CompressedExchange& e,
                            size_t b, uint32_t first, size_t workers) {
  uint32_t last = first;
  for (size_t j = 1; j < e.messages.size(); ++j) {
    const learn::CompressedMessage& m = e.messages[j];
    Task t{TaskKind::comm, -1, f.iteration, static_cast<int>(b), 0, m.bytes};
    t.op = m.op;
    const uint32_t comm = f.graph.add_task(t);
    for (size_t k = 0; k < workers; ++k) {
      const uint32_t work =
          f.graph.add_task({TaskKind::compress, static_cast<int>(k), f.iteration,
                            static_cast<int>(b), device_operations_s(w, m.flops_before), 0});
      f.graph.add_edge(last, work);
      f.graph.add_edge(work, comm);
    }
    last = comm;
  }
  return last;
}

}  // namespace

int credit_waits_for(const Workload& w, size_t b, double in_flight_bytes) {
  // Buckets m..b may be in flight together while their bytes fit the credit; bucket b itself
  // always may start once the one before it is done.
  double bytes = w.buckets[b].bytes;
  size_t m = b;
  while (m > 0 && bytes + w.buckets[m - 1].bytes <= in_flight_bytes) bytes += w.buckets[--m].bytes;
  if (m == b) return static_cast<int>(b) - 1;
  return static_cast<int>(m) - 1;
}

std::vector<uint32_t> add_bucket_collectives(Fragment& f, const Scenario& s, const Workload& w,
                                             const std::vector<WorkerChain>& chains,
                                             double in_flight_bytes) {
  const bool wfbp = s.scheme.overlap == "wfbp";
  const size_t buckets = w.buckets.size();
  // Each collective's predecessors, read from the chains in one pass (at 10^5 workers the
  // chains and their separately allocated bwd lists are larger than the caches: one pass per
  // bucket, and another for the Chakra lists, read them from memory every time).
  std::vector<uint32_t> before(chains.size() * buckets);
  bool any_after = false;
  for (size_t k = 0; k < chains.size(); ++k) {
    const WorkerChain& c = chains[k];
    for (size_t b = 0; b < buckets; ++b) before[k * buckets + b] = wfbp ? c.bwd[b] : c.last_bwd;
    any_after = any_after || !c.after_comm.empty();
  }
  const std::vector<learn::CompressedExchange> exchanges = bucket_exchanges(s, w);
  std::vector<uint32_t> comms;
  for (size_t b = 0; b < buckets; ++b) {
    Task first{TaskKind::comm, -1, f.iteration, static_cast<int>(b), 0, w.buckets[b].bytes};
    first.op = w.buckets[b].op;
    if (!exchanges.empty()) {
      first.bytes = exchanges[b].messages.front().bytes;
      first.op = exchanges[b].messages.front().op;
    }
    const uint32_t comm = f.graph.add_task(first);
    for (size_t k = 0; k < chains.size(); ++k) f.graph.add_edge(before[k * buckets + b], comm);
    if (in_flight_bytes < 0) {
      if (b > 0) f.graph.add_edge(comms.back(), comm);
    } else if (const int after = credit_waits_for(w, b, in_flight_bytes); after >= 0) {
      f.graph.add_edge(comms[after], comm);
    }
    std::vector<uint32_t> waiting;  // Chakra: tasks after the collective (a message once)
    if (any_after)
      for (const auto& c : chains)
        if (b < c.after_comm.size())
          waiting.insert(waiting.end(), c.after_comm[b].begin(), c.after_comm[b].end());
    std::sort(waiting.begin(), waiting.end());
    waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
    for (uint32_t t : waiting) f.graph.add_edge(comm, t);
    comms.push_back(
        exchanges.empty() ? comm : add_later_messages(f, w, exchanges[b], b, comm, chains.size()));
  }
  return comms;
}

void add_synchronizing_step(Fragment& f, const Scenario& s, const Workload& w,
                            const std::vector<WorkerChain>& chains) {
  const double in_flight = s.tensors_in_flight_bytes();
  auto comms = add_bucket_collectives(f, s, w, chains, in_flight);
  if (comms.empty()) return;
  // One at a time the last collective ends last; in flight together, any may.
  const size_t first = in_flight < 0 ? comms.size() - 1 : 0;
  for (const auto& c : chains)
    for (size_t b = first; b < comms.size(); ++b) f.graph.add_edge(comms[b], c.update);
}

void add_partial_synchronizing_step(Fragment& f, const Scenario& s, const Workload& w,
                                    const std::vector<WorkerChain>& chains,
                                    const std::vector<size_t>& buckets) {
  const bool wfbp = s.scheme.overlap == "wfbp";
  std::optional<uint32_t> last;
  for (size_t b : buckets) {
    const uint32_t comm = f.graph.add_task(
        {TaskKind::comm, -1, f.iteration, static_cast<int>(b), 0, w.buckets[b].bytes});
    for (const auto& c : chains) f.graph.add_edge(wfbp ? c.bwd[b] : c.last_bwd, comm);
    if (last) f.graph.add_edge(*last, comm);
    last = comm;
  }
  if (last)
    for (const auto& c : chains) f.graph.add_edge(*last, c.update);
}

int fragment_of_bucket(size_t bucket, size_t buckets, int fragments) {
  const size_t forward = buckets - 1 - bucket;
  return static_cast<int>(((forward + 1) * static_cast<size_t>(fragments) - 1) / buckets);
}

void chain_iterations(Fragment& f, const std::vector<WorkerChain>& chains) {
  if (f.iteration == 0) return;
  f.cross.reserve(f.cross.size() + chains.size());
  for (const auto& c : chains) f.cross.push_back({1, c.update, c.first});
}

double per_parameter_time_s(const Workload& w, double flops_per_parameter) {
  const double pass_s = w.flop_pass_s > 0 ? w.flop_pass_s : w.update_s;
  return pass_s / kUpdateFlopsPerParameter * flops_per_parameter;
}

double device_operations_s(const Workload& w, double operations) {
  if (w.parameters <= 0) return 0;
  return per_parameter_time_s(w, 1) * operations / static_cast<double>(w.parameters);
}

std::vector<learn::CompressedExchange> bucket_exchanges(const Scenario& s, const Workload& w) {
  std::vector<learn::CompressedExchange> out;
  const learn::CompressorKind* kind = s.scheme.compressor();
  if (kind == nullptr) return out;
  const double value_bytes = s.gradient_bytes_per_parameter;
  for (const Bucket& b : w.buckets) {
    learn::BucketShape shape{b.bytes / value_bytes, s.workers, value_bytes};
    for (int l = b.first_layer; l <= b.last_layer; ++l)
      if (w.layers[l].gradient_bytes > 0)
        shape.tensors.push_back(w.layers[l].gradient_bytes / value_bytes);
    out.push_back(kind->plan(shape, s.scheme.compression));
  }
  return out;
}

void check_compression(const Scenario& s, const Workload& w) {
  const learn::CompressorKind* kind = s.scheme.compressor();
  if (kind == nullptr) return;
  if (w.chakra)
    throw InputError(s.source_file, "/scheme/compression",
                     "a Chakra workload (compression sizes its messages from a model profile's "
                     "buckets: expected \"model\")");
  const Collective& c = collective_by_name(s.collective);
  const CollectiveGroup all = collective_group(s);
  for (const learn::CompressedExchange& e : bucket_exchanges(s, w))
    for (const learn::CompressedMessage& m : e.messages)
      if (const auto why = c.unsupported(m.op, all))
        throw InputError(s.source_file, "/collective/algorithm",
                         fmt::format("\"{}\" (scheme.compression \"{}\" needs {}: {})",
                                     s.collective, kind->id, collective_op_name(m.op), *why));
}

void require_allreduce_buckets(const Scenario& s, const Workload& w) {
  if (chakra_only_allreduces(w)) return;
  throw InputError(s.source_file, "/scheme/type",
                   fmt::format("\"{}\" with a Chakra workload whose collectives include "
                               "ALL_GATHER or REDUCE_SCATTER: expected \"sync\" (this scheme "
                               "treats every collective as a gradient allreduce)",
                               s.scheme.type));
}

void check_bucket_ops(const Scenario& s, const Workload& w) {
  const Collective& c = collective_by_name(s.collective);
  const CollectiveGroup all = collective_group(s);
  for (const Bucket& b : w.buckets) {
    const auto why = c.unsupported(b.op, all);
    if (!why) continue;
    std::vector<std::string> able;  // the registered collectives that run it on this group
    for (const std::string& name : collective_names())
      if (!collective_by_name(name).unsupported(b.op, all)) able.push_back(name);
    throw InputError(s.source_file, "/collective/algorithm",
                     fmt::format("expected a collective that runs {} ({}) for the Chakra "
                                 "workload's {} nodes, got \"{}\" ({})",
                                 collective_op_name(b.op), fmt::join(able, ", "),
                                 collective_op_name(b.op), s.collective, *why));
  }
}

SchemeParam accumulation_steps_param() {
  return bind_scheme_param(
      {.key = "accumulation_steps",
       .type = ParamType::integer,
       .default_value = 1,
       .brief = "gradient accumulation, micro-batches of `batch_size` per optimizer step; the "
                "first N - 1 run forward and backward with no communication (PyTorch DDP's "
                "`no_sync`, Horovod's `backward_passes_per_step`), the last one's backward "
                "carries the buckets' collectives as `overlap` says; throughput counts N x "
                "`batch_size` per worker and step (`fsdp` and `zero`: every micro-batch "
                "all-gathers as the scheme does and reduces as `accumulation_sync` or the ZeRO "
                "stage says). Not with a `training` section or a Chakra workload",
       .min = 1,
       .max = 1 << 16},
      &SchemeSpec::accumulation_steps);
}

void check_accumulation(JsonObject& scheme, Scenario& s) {
  if (s.scheme.accumulation_steps > 1 && !s.chakra_files.empty())
    scheme.fail("accumulation_steps",
                "1 with a Chakra workload (its traces are whole steps; trace the accumulated "
                "step instead)");
}

}  // namespace sgdsim
