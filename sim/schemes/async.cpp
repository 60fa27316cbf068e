// Asynchronous parameter-server SGD (Dean et al.): a worker pushes its gradient in keys to S
// servers, each server applies keys one at a time in arrival order, and the worker pulls the key
// back; no barrier between workers. Granularity "model": every key is pushed after the whole
// backward pass and the next iteration starts once all are pulled. "layer" / "bucket" (MXNet's
// KVStoreDist with ps-lite): a layer's (fusion bucket's) keys are pushed as soon as its backward
// is done, and the next iteration's forward of that layer (bucket) waits only for their pulls.
// Keys follow MXNet: a unit of >= 1e6 parameters (MXNET_KVSTORE_BIGARRAY_BOUND) is split evenly
// over all servers, a smaller one goes whole to server (index x 9973) mod S.
// Leaves out bounded-delay variants, server replication and ByteScheduler-style priorities
// between the keys in flight (they share the worker's link in arrival order).
#include <fmt/format.h>

#include <algorithm>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"
#include "sim/workload/chakra_workload.hpp"

namespace sgdsim {

namespace {

class Async final : public Scheme {
 public:
  explicit Async(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        worker_side_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        keys_(async_keys(*c.scenario, *c.workload)) {
    worker_side_.update_s = 0;  // the optimizer runs on the servers (apply tasks)
    if (s_.scheme.granularity != "model") worker_side_.buckets = async_units(s_, w_);
    if (w_.chakra) check_chakra();
    require_allreduce_buckets(s_, w_);
  }

  /// Workers that never wait for each other cannot exchange a Chakra trace's messages, and the
  /// traces' compute nodes are not layers.
  void check_chakra() const {
    const std::string& file = s_.source_file;
    if (!w_.chakra->messages.empty())
      throw InputError(file, "/scheme/type",
                       "\"async\" with a Chakra workload that has point-to-point messages: "
                       "expected a scheme whose workers run together (sync, pseudo_sync, ssp, "
                       "local_sgd), or traces without COMM_SEND/COMM_RECV nodes");
    if (s_.scheme.granularity != "model")
      throw InputError(file, "/scheme/granularity",
                       "with a Chakra workload: expected \"model\" (the traces' compute nodes are "
                       "not layers)");
  }

  std::string name() const override { return "async"; }
  int groups() const override { return s_.workers; }

  Fragment build(int iteration) const override { return combine_groups(*this, iteration); }

  Fragment build_group(int iteration, int k) const override {
    return s_.scheme.granularity == "model" ? build_model(iteration, k) : build_units(iteration, k);
  }

  /// From iteration 1 on a worker's fragment has the same tasks and cross edges, its compute
  /// times are drawn anew only with jitter or stragglers.
  int repeats_from() const override { return v_.uniform() ? 2 : -1; }

 private:
  /// The push, apply and pull of one key; returns the pull.
  uint32_t add_key(Fragment& f, int k, int key_index, uint32_t after) const {
    const PsKey& key = keys_[key_index];
    const int server_host = server_host_index(s_, key.server);
    const double apply_s = w_.gradient_bytes > 0 ? w_.update_s * key.bytes / w_.gradient_bytes : 0;
    const int it = f.iteration;
    Task push{TaskKind::comm, k, it, key_index, 0, key.bytes, k, server_host};
    Task apply{TaskKind::apply, k, it, key_index, apply_s, 0, k, server_host, key.server};
    Task pull{TaskKind::comm, k, it, key_index, 0, key.bytes, server_host, k, -1, true};
    const uint32_t p = f.graph.add_task(push), a = f.graph.add_task(apply),
                   q = f.graph.add_task(pull);
    f.graph.add_edge(after, p);
    f.graph.add_edge(p, a);
    f.graph.add_edge(a, q);
    return q;
  }

  Fragment build_model(int iteration, int k) const {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, worker_side_, v_, 0.0, k);
    for (int key = 0; key < static_cast<int>(keys_.size()); ++key)
      f.graph.add_edge(add_key(f, k, key, chains[0].last_bwd), chains[0].update);
    chain_iterations(f, chains);
    return f;
  }

  /// [io ->] fwd of the units in forward order -> bwd in backward order; each unit's keys after
  /// its bwd; the (zero-time) update ends the iteration once every key is pulled.
  Fragment build_units(int iteration, int k) const {
    Fragment f;
    f.iteration = iteration;
    const auto& units = worker_side_.buckets;
    const int n = static_cast<int>(units.size());
    int slot = 0;
    auto compute = [&](TaskKind kind, int index, double duration) {
      return f.graph.add_task(
          {kind, k, iteration, index, duration * v_.factor(k, iteration, slot++), 0});
    };
    std::vector<uint32_t> fwd(n), bwd(n);
    uint32_t prev = 0;
    bool has_prev = false;
    if (w_.io_s > 0) {
      prev = compute(TaskKind::io, 0, w_.io_s);
      has_prev = true;
    }
    for (int u = n - 1; u >= 0; --u) {  // forward order: the last unit holds the first layers
      fwd[u] = compute(TaskKind::fwd, u, unit_forward_s(units[u]));
      if (has_prev) f.graph.add_edge(prev, fwd[u]);
      prev = fwd[u];
      has_prev = true;
    }
    for (int u = 0; u < n; ++u) {
      bwd[u] = compute(TaskKind::bwd, u, units[u].backward_s);
      f.graph.add_edge(prev, bwd[u]);
      prev = bwd[u];
    }
    const uint32_t update = compute(TaskKind::update, 0, 0.0);
    f.graph.add_edge(prev, update);
    std::vector<uint32_t> pulls;
    for (int key = 0; key < static_cast<int>(keys_.size()); ++key) {
      pulls.push_back(add_key(f, k, key, bwd[keys_[key].unit]));
      f.graph.add_edge(pulls.back(), update);
    }
    if (iteration > 0) {
      // Tasks sit at the same index in every iteration's fragment. The device runs the next
      // forward after this backward (task 0 is the io or first forward); a unit's forward also
      // waits for the pulls of its keys in the previous iteration.
      f.cross.push_back({1, prev, 0});
      for (int key = 0; key < static_cast<int>(keys_.size()); ++key)
        f.cross.push_back({1, pulls[key], fwd[keys_[key].unit]});
    }
    return f;
  }

  /// A unit's share of the forward pass (by its layers' forward times).
  double unit_forward_s(const Bucket& u) const {
    double total = 0, mine = 0;
    for (size_t l = 0; l < w_.layers.size(); ++l) {
      total += w_.layers[l].forward_s;
      if (static_cast<int>(l) >= u.first_layer && static_cast<int>(l) <= u.last_layer)
        mine += w_.layers[l].forward_s;
    }
    if (total <= 0) return w_.forward_s / std::max<size_t>(1, worker_side_.buckets.size());
    return w_.forward_s * mine / total;
  }

  const Scenario& s_;
  const Workload& w_;
  Workload worker_side_;
  ComputeVariability v_;
  std::vector<PsKey> keys_;
};

}  // namespace

std::vector<Bucket> async_units(const Scenario& s, const Workload& w) {
  if (s.scheme.granularity == "layer") return make_buckets(w.layers, 0);
  if (s.scheme.granularity == "bucket") return w.buckets;
  const int last = std::max(0, static_cast<int>(w.layers.size()) - 1);
  return {Bucket{0, last, w.gradient_bytes, w.backward_s}};
}

std::vector<PsKey> async_keys(const Scenario& s, const Workload& w) {
  const int servers = std::max(1, s.scheme.servers);
  const std::vector<Bucket> units = async_units(s, w);
  const double bytes_per_element =
      w.parameters > 0 ? w.gradient_bytes / static_cast<double>(w.parameters) : 4.0;
  std::vector<double> layer_offset(w.layers.size() + 1, 0.0);  // forward-order byte offsets
  for (size_t l = 0; l < w.layers.size(); ++l)
    layer_offset[l + 1] = layer_offset[l] + w.layers[l].gradient_bytes;
  std::vector<PsKey> keys;
  const int n = static_cast<int>(units.size());
  for (int u = 0; u < n; ++u) {
    const Bucket& b = units[u];
    const double offset = w.layers.empty() ? 0.0 : layer_offset[b.first_layer];
    const bool whole_model = s.scheme.granularity == "model";
    if (whole_model || b.bytes / bytes_per_element >= kBigArrayElements) {
      for (int sv = 0; sv < servers; ++sv)
        keys.push_back({u, sv, offset + sv * b.bytes / servers, b.bytes / servers});
    } else if (b.bytes > 0) {
      const int forward_index = n - 1 - u;
      keys.push_back(
          {u, static_cast<int>((int64_t{forward_index} * 9973) % servers), offset, b.bytes});
    }
  }
  return keys;
}

int server_host_index(const Scenario& s, int server) {
  return s.scheme.server_placement == "dedicated" ? s.workers + server : server;
}

namespace {
/// The declared options' limits that depend on the workers and the platform.
void check_async_options(JsonObject& sc, Scenario& s) {
  if (s.scheme.server_placement == "colocated" && s.scheme.servers > s.workers)
    throw InputError(sc.file(), "/scheme/servers",
                     fmt::format("expected at most {} co-located servers (one per worker), got {}",
                                 s.workers, s.scheme.servers));
  if (s.scheme.server_placement == "dedicated" && s.platform.generate) {
    const auto& gp = *s.platform.generate;
    const int64_t hosts = static_cast<int64_t>(gp.nodes) * gp.devices_per_node;
    if (s.workers + s.scheme.servers > hosts)
      throw InputError(sc.file(), "/scheme/servers",
                       fmt::format("expected at most {} dedicated servers ({} hosts less {} "
                                   "workers), got {}",
                                   hosts - s.workers, hosts, s.workers, s.scheme.servers));
  }
}

/// Dedicated servers from the raw `scheme` object: its `servers` (default 1).
int raw_dedicated_servers(const nlohmann::json& sch) {
  if (sch.value("server_placement", nlohmann::json()) != "dedicated") return 0;
  return sch.contains("servers") && sch["servers"].is_number_integer()
             ? std::max(0, sch["servers"].get<int>())
             : 1;
}

SchemeTraits async_traits() {
  SchemeTraits t;
  t.ps_keys = async_keys;
  t.dedicated_hosts = [](const Scenario& s) {
    return s.scheme.server_placement == "dedicated" ? s.scheme.servers : 0;
  };
  // Every worker pushes a shard to each server, the server applies it, the worker pulls it.
  t.activities = [](const Scenario& s, ActivityCount& a) {
    const double ws = static_cast<double>(s.workers) * std::max(1, s.scheme.servers);
    a.comms = 2 * ws;
    a.execs += ws;
    a.largest_collective = 1;
    a.schedule_bytes = 0;
    a.recorder_bytes += 8 * ws;
    a.live_tasks += 3 * ws;
  };
  return t;
}

std::vector<SchemeParam> async_params() {
  return {
      bind_scheme_param({.key = "servers",
                         .type = ParamType::integer,
                         .default_value = 1,
                         .brief = "`async` only: parameter-server shards",
                         .min = 1,
                         .max = 1 << 20},
                        &SchemeSpec::servers),
      bind_scheme_param({.key = "server_placement",
                         .type = ParamType::choice,
                         .default_value = "colocated",
                         .brief = "`async` only: servers on the first workers' hosts, or "
                                  "`dedicated` hosts after the workers'",
                         .choices = {"colocated", "dedicated"}},
                        &SchemeSpec::server_placement),
      bind_scheme_param(
          {.key = "granularity",
           .type = ParamType::choice,
           .default_value = "model",
           .brief = "`async` only: `model` pushes every shard after the whole backward pass; "
                    "`layer` / `bucket` push each layer's (fusion bucket's) keys as soon as its "
                    "backward is done, and the next forward of that layer waits only for their "
                    "pulls (see Schemes)",
           .choices = {"model", "layer", "bucket"}},
          &SchemeSpec::granularity)};
}

const SchemeRegistration async_registration{
    {"async", async_params(), check_async_options, raw_dedicated_servers, nullptr},
    [](const SchemeContext& c) { return std::make_unique<Async>(c); },
    [](const Scenario&) { return UpdateRule{ServerUpdate{}}; },
    async_traits()};
}  // namespace

}  // namespace sgdsim
