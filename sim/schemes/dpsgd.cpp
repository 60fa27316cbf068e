// Decentralized parallel SGD, D-PSGD (Lian et al., "Can Decentralized Algorithms Outperform
// Centralized Algorithms? A Case Study for Decentralized Parallel Stochastic Gradient Descent",
// NeurIPS 2017). Models: every worker keeps its own replica, takes its local SGD step (its own
// gradient and momentum), sends the stepped parameters to each out-neighbour of the mixing
// matrix W (one point-to-point message of the whole parameter vector per directed edge, all in
// flight together) and replaces its replica by sum_j W_ij x_j over what it received; no
// allreduce, no barrier beyond the neighbours'. The order is adapt-then-combine,
// x_i <- sum_j W_ij (x_j - lr d_j): Lian et al.'s Algorithm 1 combines the neighbours'
// un-stepped x_j while the gradient is computed, x_i <- sum_j W_ij x_j - lr g_i (equal in
// expectation, not step by step); here the message carries the stepped replica, so it leaves
// after the update and the next forward pass waits for it, and W = 11^T/n is exactly sync's
// step in exact arithmetic. Topologies: ring, 2-D torus, the static exponential graph (Ying et
// al., NeurIPS 2021: out-neighbours at distance 2^k), complete, or a matrix file. Leaves out:
// the mixing's own compute (2 (d+1) FLOPs per parameter), time-varying graphs (one-peer
// exponential of Assran et al. 2019), gradient tracking, and mixing of momentum (it stays
// local).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"
#include "sim/schemes/gossip.hpp"

namespace sgdsim {

std::vector<std::string> gossip_topology_names() {
  return {"ring", "torus", "exponential", "complete"};
}

namespace {

/// Rows of uniform weights 1/(d+1) over each worker and its distinct in-neighbours.
MixingRows uniform_rows(const std::vector<std::set<int>>& in_neighbours) {
  MixingRows rows(in_neighbours.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::set<int> with_self = in_neighbours[i];
    with_self.insert(static_cast<int>(i));
    const double weight = 1.0 / static_cast<double>(with_self.size());
    for (int j : with_self) rows[i].push_back({j, weight});
  }
  return rows;
}

/// Rows and columns of the 2-D torus: the largest divisor of n not above sqrt(n) (1: a ring).
std::pair<int, int> torus_shape(int n) {
  int r = 1;
  for (int d = 1; static_cast<int64_t>(d) * d <= n; ++d)
    if (n % d == 0) r = d;
  return {r, n / r};
}

}  // namespace

MixingRows topology_mixing(const std::string& topology, int n) {
  // Named by their place in gossip_topology_names(), so that the names are written once.
  const auto names = gossip_topology_names();
  const auto found = std::find(names.begin(), names.end(), topology);
  if (found == names.end()) throw std::out_of_range("unknown gossip topology " + topology);
  enum Kind { kRing, kTorus, kExponential, kComplete };
  const auto kind = static_cast<Kind>(found - names.begin());
  std::vector<std::set<int>> in(static_cast<size_t>(n));
  auto link = [&](int from, int to) {
    if (from != to) in[static_cast<size_t>(to)].insert(from);
  };
  const auto [rows, cols] = torus_shape(n);
  for (int i = 0; i < n; ++i) {
    if (kind == kRing) {
      link((i + 1) % n, i);
      link((i + n - 1) % n, i);
    } else if (kind == kTorus) {
      const int r = i / cols, c = i % cols;
      link(((r + 1) % rows) * cols + c, i);
      link(((r + rows - 1) % rows) * cols + c, i);
      link(r * cols + (c + 1) % cols, i);
      link(r * cols + (c + cols - 1) % cols, i);
    } else if (kind == kExponential) {
      // Static exponential graph: worker i sends to i + 2^k (mod n) for every 2^k < n.
      for (int64_t hop = 1; hop < n; hop *= 2) link(i, static_cast<int>((i + hop) % n));
    } else {
      for (int j = 0; j < n; ++j) link(j, i);
    }
  }
  return uniform_rows(in);
}

namespace {

/// The entries of row `i` of a matrix file, checked; returns its sum.
double read_mixing_row(const nlohmann::json& row, int i, int n, const std::string& path,
                       MixingRows& rows) {
  const std::string at = fmt::format("/{}", i);
  if (!row.is_array() || static_cast<int>(row.size()) != n)
    throw InputError(
        path, at,
        fmt::format("expected a row of {} numbers (one per worker), got {}", n, show_value(row)));
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    const nlohmann::json& v = row[static_cast<size_t>(j)];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      throw InputError(path, fmt::format("{}/{}", at, j),
                       "expected a number >= 0, got " + show_value(v));
    const double w = v.get<double>();
    sum += w;
    if (w > 0) rows[static_cast<size_t>(i)].push_back({j, w});
  }
  return sum;
}

}  // namespace

MixingRows read_mixing_file(const std::string& path, int n) {
  const nlohmann::json m = parse_json_file(path);
  if (!m.is_array() || static_cast<int>(m.size()) != n)
    throw InputError(path, "/",
                     fmt::format("expected a mixing matrix: an array of {} rows (workers.count), "
                                 "got {}",
                                 n, show_value(m)));
  MixingRows rows(static_cast<size_t>(n));
  std::vector<double> column(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const double sum = read_mixing_row(m[static_cast<size_t>(i)], i, n, path, rows);
    if (std::abs(sum - 1) > 1e-9)
      throw InputError(path, fmt::format("/{}", i),
                       fmt::format("row {} sums to {}, expected 1 within 1e-9 (W must be "
                                   "doubly stochastic)",
                                   i, sum));
    for (const auto& [j, w] : rows[static_cast<size_t>(i)]) column[static_cast<size_t>(j)] += w;
  }
  for (int j = 0; j < n; ++j)
    if (std::abs(column[static_cast<size_t>(j)] - 1) > 1e-9)
      throw InputError(path, fmt::format("/0/{}", j),
                       fmt::format("column {} sums to {}, expected 1 within 1e-9 (W must be "
                                   "doubly stochastic)",
                                   j, column[static_cast<size_t>(j)]));
  return rows;
}

namespace {

/// The scenario's W: a named topology, else the (checked, resolved) matrix file.
MixingRows scenario_mixing(const Scenario& s) {
  const std::string& topology = s.scheme.params.text("topology");
  const auto names = gossip_topology_names();
  if (std::find(names.begin(), names.end(), topology) != names.end())
    return topology_mixing(topology, s.workers);
  return read_mixing_file(topology, s.workers);
}

class Dpsgd final : public Scheme {
 public:
  explicit Dpsgd(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        mixing_(scenario_mixing(*c.scenario)) {
    if (w_.chakra)
      throw InputError(s_.source_file, "/workload/chakra",
                       "\"dpsgd\" with a Chakra workload: expected a model profile (the scheme "
                       "adds its own neighbour messages)");
  }

  std::string name() const override { return "dpsgd"; }

  /// Per worker: [io ->] fwd -> bwd -> update -> one message to each out-neighbour; the next
  /// iteration's first task waits for the worker's update and for every message into it.
  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    int index = 0;
    for (size_t i = 0; i < mixing_.size(); ++i)
      for (const auto& [j, weight] : mixing_[i]) {
        if (j == static_cast<int>(i)) continue;
        const uint32_t m = f.graph.add_task(
            {TaskKind::comm, j, iteration, index++, 0, w_.gradient_bytes, j, static_cast<int>(i)});
        f.graph.add_edge(chains[static_cast<size_t>(j)].update, m);
        // Tasks sit at the same index in every fragment: this message of the previous
        // iteration gates the receiver's first task.
        if (iteration > 0) f.cross.push_back({1, m, chains[i].first});
      }
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  MixingRows mixing_;
};

/// `topology`: a named one, or a matrix file resolved against the scenario's folder and
/// checked now (exit 2 naming the file and pointer before anything runs).
void check_dpsgd_options(JsonObject& sc, Scenario& s) {
  const std::string& topology = s.scheme.params.text("topology");
  const auto names = gossip_topology_names();
  if (std::find(names.begin(), names.end(), topology) != names.end()) return;
  const std::string base_dir = std::filesystem::path(sc.file()).parent_path().string();
  const std::string path = resolve_data_path(topology, base_dir, sc.file(), "/scheme/topology");
  read_mixing_file(path, s.workers);
  s.scheme.params.set("topology", ParamValue{0, path});
  sc.record("topology", path);  // the resolved scenario names the file it was read from
}

/// Directed edges of W (messages per iteration).
double edges(const Scenario& s) {
  double count = 0;
  for (const auto& row : scenario_mixing(s)) count += static_cast<double>(row.size()) - 1;
  return count;
}

SchemeTraits dpsgd_traits() {
  SchemeTraits t;
  // One point-to-point message per directed edge instead of the bucket collectives.
  t.activities = [](const Scenario& s, ActivityCount& a) {
    const double messages = edges(s);
    a.comms = messages;
    a.largest_collective = 1;
    a.schedule_bytes = 0;
    a.live_tasks += 2 * messages;
  };
  return t;
}

std::vector<SchemeParam> dpsgd_params() {
  return {{{.key = "topology",
            .type = ParamType::text,
            .default_value = "ring",
            .brief = "`dpsgd` only: the mixing matrix W: `ring`, `torus`, `exponential`, "
                     "`complete`, or a JSON file of W (n rows of n weights)",
            .doc = "`dpsgd` only: the mixing matrix W. `ring` (two neighbours, 1/3 each), "
                   "`torus` (2-D, four neighbours, 1/5; 1/(d+1) over fewer when a side is 1 or 2), "
                   "`exponential` (static exponential "
                   "graph: out-neighbours at distance 2^k, 1/(ceil(log2 n) + 1)), `complete` "
                   "(1/n), or a path (relative to the scenario) to a JSON array of n rows of n "
                   "non-negative weights whose rows and columns sum to 1 within 1e-9"}}};
}

const SchemeRegistration dpsgd_registration{
    {"dpsgd", dpsgd_params(), check_dpsgd_options, nullptr, nullptr},
    [](const SchemeContext& c) { return std::make_unique<Dpsgd>(c); },
    [](const Scenario& s) { return UpdateRule{GossipUpdate{scenario_mixing(s)}}; },
    dpsgd_traits()};

}  // namespace

}  // namespace sgdsim
