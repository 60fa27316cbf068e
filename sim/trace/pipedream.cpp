// PipeDream graph.txt -> measured model profile (same layers as make_profiles.py).
#include "sim/trace/pipedream.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/trace/input_file.hpp"
#include "sim/trace/text_lines.hpp"

namespace sgdsim {

using namespace text;

namespace {

bool parse_node_id(std::string_view s, int& id) {
  if (s.size() < 5 || s.substr(0, 4) != "node") return false;
  long long v = 0;
  if (!parse_int(s.substr(4), v) || v < 0 || v > 100000000) return false;
  id = static_cast<int>(v);
  return true;
}

}  // namespace

PipeDreamGraph parse_pipedream_graph(std::istream& in, const std::string& file) {
  PipeDreamGraph g;
  g.file = file;
  std::map<std::string, size_t> index;
  std::string raw;
  size_t lineno = 0;
  static const std::string kFwd = " -- forward_compute_time=";
  while (std::getline(in, raw)) {
    ++lineno;
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      return InputError(file, line_ref(lineno),
                        "expected a node line \"nodeN -- module -- forward_compute_time=F, "
                        "backward_compute_time=B, activation_size=A, parameter_size=P\" or an "
                        "edge \"nodeA -- nodeB\"" +
                            (what.empty() ? "" : " (" + what + ")") + ", got " + quote(line));
    };
    auto fwd = line.rfind(kFwd);
    if (fwd == std::string_view::npos) {
      // Edge.
      auto sep = line.find(" -- ");
      int a = 0, b = 0;
      if (sep == std::string_view::npos) throw bad("");
      std::string_view from = trim(line.substr(0, sep)), to = trim(line.substr(sep + 4));
      if (!parse_node_id(from, a) || !parse_node_id(to, b)) throw bad("");
      g.edges.emplace_back(std::string(from), std::string(to));
      continue;
    }
    auto sep = line.find(" -- ");
    PipeDreamNode n;
    if (sep == std::string_view::npos || sep >= fwd) throw bad("");
    n.name = std::string(line.substr(0, sep));
    if (!parse_node_id(n.name, n.id)) throw bad("node name");
    n.module = std::string(trim(line.substr(sep + 4, fwd - sep - 4)));
    std::string_view rest = line.substr(fwd + 4);  // "forward_compute_time=..., ..."
    std::map<std::string, double> kv;
    size_t start = 0;
    while (start < rest.size()) {
      size_t comma = rest.find(',', start);
      std::string_view item = trim(rest.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      auto eq = item.find('=');
      double v = 0;
      if (eq == std::string_view::npos || !parse_double(item.substr(eq + 1), v))
        throw bad("value of " + quote(item));
      kv[std::string(item.substr(0, eq))] = v;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    for (const char* k :
         {"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"})
      if (!kv.count(k)) throw bad(std::string("missing ") + k);
    n.forward_ms = kv["forward_compute_time"];
    n.backward_ms = kv["backward_compute_time"];
    n.activation_bytes = kv["activation_size"];
    n.parameter_bytes = kv["parameter_size"];
    if (n.forward_ms < 0 || n.backward_ms < 0 || n.parameter_bytes < 0) throw bad("negative value");
    if (index.count(n.name)) throw InputError(file, line_ref(lineno), "duplicate node " + n.name);
    index[n.name] = g.nodes.size();
    g.nodes.push_back(std::move(n));
  }
  if (g.nodes.empty())
    throw InputError(file, "",
                     "no nodes: expected PipeDream graph lines \"nodeN -- module -- "
                     "forward_compute_time=F, backward_compute_time=B, activation_size=A, "
                     "parameter_size=P\"");
  for (const auto& [a, b] : g.edges)
    for (const auto& n : {a, b})
      if (!index.count(n)) throw InputError(file, "", "an edge refers to undefined node " + n);
  return g;
}

PipeDreamGraph read_pipedream_graph(const std::string& path) {
  std::istringstream in(read_text_maybe_gzip(path));
  return parse_pipedream_graph(in, path);
}

Profile pipedream_profile(const PipeDreamGraph& g, int batch_size, const std::string& name) {
  // Kahn's algorithm, ties broken by node id.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  std::set<std::pair<std::string, std::string>> unique(g.edges.begin(), g.edges.end());
  std::vector<std::vector<size_t>> succ(g.nodes.size());
  std::vector<int> indeg(g.nodes.size(), 0);
  for (const auto& [a, b] : unique) {
    succ[index[a]].push_back(index[b]);
    ++indeg[index[b]];
  }
  using Item = std::pair<int, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (indeg[i] == 0) ready.push({g.nodes[i].id, i});
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t n = ready.top().second;
    ready.pop();
    order.push_back(n);
    for (size_t s : succ[n])
      if (--indeg[s] == 0) ready.push({g.nodes[s].id, s});
  }
  if (order.size() != g.nodes.size()) throw InputError(g.file, "", "the graph has a cycle");

  // Batch size from the Linear layers' outputs (fp32).
  int batch = 0;
  for (const auto& n : g.nodes) {
    if (n.module.rfind("Linear(", 0) != 0) continue;
    auto pos = n.module.find("out_features=");
    if (pos == std::string::npos) continue;
    long long out = 0;
    size_t end = n.module.find_first_not_of("0123456789", pos + 13);
    if (!parse_int(std::string_view(n.module).substr(pos + 13, end - pos - 13), out) || out <= 0)
      continue;
    const double b = n.activation_bytes / (4.0 * static_cast<double>(out));
    if (std::abs(b - std::round(b)) > 1e-9 || b < 1 || b > (1 << 24))
      throw InputError(g.file, "",
                       fmt::format("{}: activation_size {} is not a whole number of batches "
                                   "(at most 2^24) of {} fp32 outputs",
                                   n.name, n.activation_bytes, out));
    if (batch != 0 && batch != static_cast<int>(std::round(b)))
      throw InputError(g.file, "",
                       fmt::format("the Linear layers imply different batch sizes ({} and {})",
                                   batch, std::round(b)));
    batch = static_cast<int>(std::round(b));
  }
  if (batch == 0) batch = batch_size;
  if (batch <= 0)
    throw InputError(g.file, "",
                     "cannot derive the batch size (no Linear layer): give it (--batch-size N)");

  Profile p;
  p.name = name.empty() ? std::filesystem::path(g.file).parent_path().filename().string() : name;
  if (p.name.empty()) p.name = "pipedream";
  p.source = "PipeDream profiler output " + g.file + "; converted by sgdsim trace";
  p.measured = true;
  p.batch_size = batch;
  p.bytes_per_parameter = 4;
  for (size_t i : order) {
    const PipeDreamNode& n = g.nodes[i];
    if (n.module.rfind("Input", 0) == 0) continue;
    if (std::fmod(n.parameter_bytes, 4.0) != 0 || n.parameter_bytes > 4e15)
      throw InputError(g.file, "",
                       fmt::format("{}: parameter_size {} is not a multiple of 4 (fp32) of at "
                                   "most 4e15 bytes",
                                   n.name, n.parameter_bytes));
    const auto params = static_cast<int64_t>(n.parameter_bytes / 4);
    if (params == 0 && n.forward_ms == 0 && n.backward_ms == 0) continue;
    ProfileLayer l;
    l.name = n.name + " " + n.module;
    l.parameters = params;
    l.forward_s = n.forward_ms * 1e-3;
    l.backward_s = n.backward_ms * 1e-3;
    p.layers.push_back(l);
  }
  if (p.layers.empty()) throw InputError(g.file, "", "no layers left after dropping Input nodes");
  return p;
}

MeasuredTrace pipedream_trace(const PipeDreamGraph& g, int batch_size) {
  Profile p = pipedream_profile(g, batch_size);
  MeasuredTrace t;
  t.file = g.file;
  t.format = "pipedream";
  t.world_size = 1;
  MeasuredStep st;
  for (const auto& l : p.layers) st.compute_s += l.forward_s + l.backward_s;
  st.time_s = st.compute_s;
  t.steps.push_back(st);
  t.notes.push_back(fmt::format(
      "PipeDream profile: {} layers, {} parameters, batch size {}; the one step is the summed "
      "forward and backward time of the layers (single GPU, no communication)",
      p.layers.size(), p.total_parameters(), p.batch_size));
  return t;
}

}  // namespace sgdsim
