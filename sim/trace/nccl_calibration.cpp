#include "sim/trace/nccl_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "sim/core/errors.hpp"

namespace sgdsim {

CollectiveGroup nccl_group(const NcclLayout& layout, const NcclOptions& o) {
  CollectiveGroup g{layout.ranks, layout.gpus_per_node, 0, o.inter_algorithm};
  g.intra_algorithm = o.intra_algorithm;
  g.chunk_bytes = o.chunk_bytes;
  g.channels = o.channels;
  g.launch_latency_s = o.launch_latency_s;
  g.channel_launch_s = o.channel_launch_s;
  g.step_latency_intra_s = o.step_latency_intra_s;
  g.step_latency_inter_s = o.step_latency_inter_s;
  g.intra_nvlink = o.intra_nvlink;
  g.protocols = o.protocols;
  g.memory_Bps = o.memory_Bps;
  g.staged_host_Bps = o.staged_host_Bps;
  g.nccl_buffer_bytes = o.nccl_buffer_bytes;
  g.tree_ll_latency_s = o.tree_ll_latency_s;
  g.tree_ll_level_Bps = o.tree_ll_level_Bps;
  g.tuner_channels = o.tuner_channels;
  g.tuner_channel_Bps = o.tuner_channel_Bps;
  // One GPU per node: the tree's path inside a node is only the GPU's to its NIC.
  g.tuner_intra_channel_Bps = layout.gpus_per_node > 1 ? o.tuner_intra_channel_Bps : 0;
  g.nccl_algo = o.nccl_algo;
  return g;
}

double gpu_memory_Bps(const std::string& device) {
  // HBM bandwidth from NVIDIA's datasheets (A100: "NVIDIA A100 Tensor Core GPU" datasheet,
  // 40 GB 1,555 GB/s, 80 GB 2,039 GB/s; V100: "NVIDIA Tesla V100" datasheet, 900 GB/s; H100
  // SXM: 3.35 TB/s); 80 GB names come first so that they are not read as the 40 GB part.
  static const std::vector<std::pair<std::string, double>> table = {
      {"A100-SXM4-80GB", 2039e9}, {"A100-SXM-80GB", 2039e9},  {"A100 80GB", 2039e9},
      {"A100-SXM4-40GB", 1555e9}, {"A100-PCIE-40GB", 1555e9}, {"V100", 900e9},
      {"H100 80GB HBM3", 3350e9}, {"H100-SXM", 3350e9}};
  for (const auto& [name, Bps] : table)
    if (device.find(name) != std::string::npos) return Bps;
  return 0;
}

NcclLayout nccl_layout(const NcclTestsLog& log) {
  if (log.ranks < 2)
    throw InputError(log.file, "",
                     fmt::format("expected a log of >= 2 ranks (\"# Rank N ... on HOST device "
                                 "D\" lines), got {}",
                                 log.ranks));
  NcclLayout l{log.ranks, nccl_gpus_per_node(log), nccl_nodes(log), log.gpus_per_thread};
  if (!log.rank_hosts.empty()) {
    std::map<std::string, int> per_host;
    for (const auto& h : log.rank_hosts) ++per_host[h];
    for (const auto& [host, n] : per_host)
      if (n != l.gpus_per_node)
        throw InputError(log.file, "",
                         fmt::format("expected the same number of ranks on every host, got {} on "
                                     "{} and {} on another",
                                     n, host, l.gpus_per_node));
  }
  return l;
}

namespace {

/// Sum of squared relative errors, and the errors, of a cost on the fitted sizes.
struct Score {
  double sum_sq = 0;
  std::vector<double> abs_err;
};

Score score(const NcclTestsLog& log, const Collective& c, const CollectiveGroup& g,
            const NetworkCost& cost, double min_bytes, double max_bytes) {
  Score s;
  for (const auto& p : log.points) {
    if (p.size_bytes < min_bytes || p.size_bytes > max_bytes) continue;
    const double e = (c.formula_s(g, p.size_bytes, cost) - p.time_s) / p.time_s;
    s.sum_sq += e * e;
    s.abs_err.push_back(std::abs(e));
  }
  return s;
}

/// Cost with the fitted class at (log10 alpha, log10 bandwidth).
NetworkCost cost_at(double la, double lb, bool intra_fit, const std::optional<AlphaBeta>& intra) {
  const AlphaBeta ab{std::pow(10.0, la), std::pow(10.0, -lb), 0.0};
  if (intra_fit || !intra) return {ab, ab};
  return {ab, *intra};
}

/// Fits nccl_tuner's tree/LL latency A and per-level bandwidth 1/k to the sizes of a multi-node
/// log where NCCL's tuner picks tree/LL, whatever min_bytes: the model is then c0 + A + k x,
/// linear in (A, k) (c0 and x read from the formula at k = 0 and k = 1 s/B), so weighted least
/// squares on the relative error is exact. Leaves the model off (level bandwidth 0) without 2
/// such sizes or with A < 0 or k <= 0.
void fit_tree_ll(const NcclTestsLog& log, const Collective& collective, NcclFit& f) {
  NcclOptions o = f.options;
  o.tree_ll_latency_s = 0;
  o.tree_ll_level_Bps = 1e300;  // the data term vanishes: formula_s gives c0
  const CollectiveGroup g = nccl_group(f.layout, o);
  o.tree_ll_level_Bps = 1;  // k = 1 s/B: formula_s gives c0 + x
  const CollectiveGroup unit = nccl_group(f.layout, o);
  double s1 = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const auto& p : log.points) {
    if (!nccl_tuner_picks_tree_ll(g, p.size_bytes)) continue;
    const double c0 = collective.formula_s(g, p.size_bytes, f.cost);
    const double x = collective.formula_s(unit, p.size_bytes, f.cost) - c0, y = p.time_s - c0;
    const double w = 1 / (p.time_s * p.time_s);
    s1 += w, sx += w * x, sxx += w * x * x, sy += w * y, sxy += w * x * y;
    ++f.tree_ll_points;
  }
  const double det = s1 * sxx - sx * sx;
  if (f.tree_ll_points < 2 || det <= 0) return;
  const double a = (sy * sxx - sx * sxy) / det, k = (s1 * sxy - sx * sy) / det;
  if (a < 0 || k <= 0) return;
  f.options.tree_ll_latency_s = a;
  f.options.tree_ll_level_Bps = 1 / k;
}

/// The launch latency (or link alpha) and bandwidth fit of fit_nccl_tests, the other options
/// (channel_launch_s among them) as given.
NcclFit fit_link(const NcclTestsLog& log, const Collective& collective, const NcclOptions& options,
                 double min_bytes, const std::optional<AlphaBeta>& intra) {
  NcclFit f;
  f.algorithm = collective.name();
  f.options = options;
  if (const auto launch = nccl_tests_launch_per_gpu_s(log); launch && options.fit_launch_per_gpu)
    f.options.launch_per_gpu_s = *launch;
  f.layout = nccl_layout(log);
  f.fitted = f.layout.nodes == 1 ? "intra" : "inter";
  f.min_bytes = min_bytes;
  const bool intra_fit = f.layout.nodes == 1;
  // nccl_tuner pays its latency once, as a start delay: fit that instead of the link alpha.
  const bool fit_launch = collective.latency_in_start_delay();
  auto group_at = [&](double la) {
    NcclOptions o = options;
    if (fit_launch) o.launch_latency_s = std::pow(10.0, la);
    return nccl_group(f.layout, o);
  };
  auto model_cost = [&](double la, double lb) {
    return cost_at(fit_launch ? -std::numeric_limits<double>::infinity() : la, lb, intra_fit,
                   intra);
  };
  auto objective = [&](double la, double lb) {
    return score(log, collective, group_at(la), model_cost(la, lb), min_bytes,
                 options.fit_max_bytes)
        .sum_sq;
  };
  if (score(log, collective, group_at(-6), model_cost(-6, 9), min_bytes, options.fit_max_bytes)
          .abs_err.size() < 2)
    throw InputError(log.file, "",
                     fmt::format("expected >= 2 message sizes >= {} bytes to fit", min_bytes));
  // Times that do not grow with the size fit no bandwidth (the search would run off to its
  // edge, 10 TB/s, and report it): refused, as calibrate osu refuses them.
  const NcclTestsPoint* smallest = nullptr;
  const NcclTestsPoint* largest = nullptr;
  size_t used = 0;
  for (const auto& p : log.points) {
    if (p.size_bytes < min_bytes || p.size_bytes > options.fit_max_bytes) continue;
    ++used;
    if (!smallest || p.size_bytes < smallest->size_bytes) smallest = &p;
    if (!largest || p.size_bytes > largest->size_bytes) largest = &p;
  }
  if (smallest && largest && largest->time_s <= smallest->time_s)
    throw InputError(
        log.file, "",
        fmt::format("the {} measurements >= {} bytes do not grow with message size "
                    "({:.4g} s at {} bytes, {:.4g} s at {} bytes): no positive bandwidth "
                    "fits the {} formula",
                    used, min_bytes, smallest->time_s, smallest->size_bytes, largest->time_s,
                    largest->size_bytes, collective.name()));
  // Grid: alpha 10 ns .. 10 ms, bandwidth 1 MB/s .. 10 TB/s, a third of a decade apart (pipelined
  // formulas walk their whole schedule: evaluations are counted), then a pattern search.
  double best_la = -6, best_lb = 9, best = objective(best_la, best_lb);
  for (int i = 0; i <= 18; ++i)
    for (int j = 0; j <= 21; ++j) {
      const double la = -8 + i / 3.0, lb = 6 + j / 3.0, v = objective(la, lb);
      if (v < best) best = v, best_la = la, best_lb = lb;
    }
  for (double step = 1.0 / 6; step > 1e-7; step /= 2) {
    bool moved = true;
    while (moved) {
      moved = false;
      for (auto [da, db] : {std::pair{step, 0.0}, {-step, 0.0}, {0.0, step}, {0.0, -step}}) {
        const double v = objective(best_la + da, best_lb + db);
        if (v < best) best = v, best_la += da, best_lb += db, moved = true;
      }
    }
  }
  f.cost = model_cost(best_la, best_lb);
  if (fit_launch) f.options.launch_latency_s = std::pow(10.0, best_la);
  Score s = score(log, collective, group_at(best_la), f.cost, min_bytes, options.fit_max_bytes);
  f.points = s.abs_err.size();
  f.median_abs_rel_error = median(s.abs_err);
  f.rms_rel_error = std::sqrt(s.sum_sq / static_cast<double>(f.points));
  if (fit_launch && options.fit_tree_ll && f.layout.nodes > 1) fit_tree_ll(log, collective, f);
  return f;
}

/// The channel cost that minimizes the squared relative error of the sizes >= 32 KiB (below,
/// the nccl-tests floor or NCCL's smallest LL steps decide), at most the launch latency over
/// the communicator's channels (Simple's launch latency holds them all).
double fit_channel_launch(const NcclTestsLog& log, const Collective& collective, const NcclFit& f) {
  const double floor_s = nccl_tests_floor_s(log.gpus_per_thread, f.options.launch_per_gpu_s);
  auto objective = [&](double a) {
    NcclOptions o = f.options;
    o.channel_launch_s = a;
    const CollectiveGroup g = nccl_group(f.layout, o);
    double sum = 0;
    for (const auto& p : log.points) {
      if (p.size_bytes < 32 * 1024 || p.size_bytes > f.options.fit_max_bytes) continue;
      const double e =
          std::max(floor_s, collective.formula_s(g, p.size_bytes, f.cost)) / p.time_s - 1;
      sum += e * e;
    }
    return sum;
  };
  const double most = f.options.launch_latency_s / (2 * f.options.tuner_channels);
  double best_a = 0, best = objective(0);
  for (int i = 1; i <= 400; ++i)
    if (const double a = most * i / 400, v = objective(a); v < best) best = v, best_a = a;
  return best_a;
}

}  // namespace

NcclFit fit_nccl_tests(const NcclTestsLog& log, const Collective& collective,
                       const NcclOptions& options, double min_bytes,
                       const std::optional<AlphaBeta>& intra) {
  NcclFit f = fit_link(log, collective, options, min_bytes, intra);
  if (!collective.latency_in_start_delay() || f.layout.nodes != 1 || !options.fit_channel_launch ||
      options.protocols != "auto")
    return f;
  for (int pass = 0; pass < 2; ++pass) {
    NcclOptions o = options;
    o.channel_launch_s = fit_channel_launch(log, collective, f);
    f = fit_link(log, collective, o, min_bytes, intra);
  }
  return f;
}

double nccl_tests_floor_s(int gpus_per_thread, double launch_per_gpu_s) {
  return gpus_per_thread >= 2 ? gpus_per_thread * launch_per_gpu_s : 0.0;
}

std::optional<double> nccl_tests_launch_per_gpu_s(const NcclTestsLog& log) {
  if (log.gpus_per_thread < 2) return std::nullopt;
  std::vector<double> small;
  for (const auto& p : log.points)
    if (p.size_bytes <= 4096) small.push_back(p.time_s);
  if (small.empty()) return std::nullopt;
  return median(small) / log.gpus_per_thread;
}

LogCheck check_nccl_tests(const NcclTestsLog& log, const Collective& collective,
                          const NcclOptions& options, const NetworkCost& cost, double min_bytes) {
  const NcclLayout layout = nccl_layout(log);
  const CollectiveGroup g = nccl_group(layout, options);
  const double floor_s = nccl_tests_floor_s(log.gpus_per_thread, options.launch_per_gpu_s);
  std::vector<PointCheck> points;
  for (const auto& p : log.points) {
    const double model_s = collective.formula_s(g, p.size_bytes, cost),
                 predicted = std::max(floor_s, model_s);
    points.push_back({p.size_bytes, p.time_s, predicted, (predicted - p.time_s) / p.time_s,
                      floor_s > model_s ? "launch floor" : collective.chosen(g, p.size_bytes)});
  }
  return summarize_check(log.file, collective.name(), layout.ranks, min_bytes, std::move(points));
}

}  // namespace sgdsim
