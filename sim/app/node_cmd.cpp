// `sgdsim node`: what a node preset or a board description gives, before a run uses it: where
// each GPU and NIC hangs, and the transport and rate NCCL's rules pick for a ring over its first
// g GPUs and for its NICs (sim/scenario/host_path.cpp). Shows nothing a run does not use.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/app/cli.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/host_path.hpp"
#include "sim/scenario/node_field.hpp"

using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kNodeHelpHead =
    R"(usage: sgdsim node [PRESET | JSON] [--json]

Without an argument, lists the node presets (docs/host-path.md, Presets): GPUs, NICs, and the
ring over all GPUs and the NICs together as NCCL's rules give them. With a preset's name or a
board description in JSON ('{"gpus": 4, "pcie_gen": 4, "cpu": "amd", ...}', docs/host-path.md,
Describing a board), prints where each GPU and NIC hangs (PCIe link, switch, socket) and, for
a ring over the first g GPUs (g = 2 .. all), its transport and slowest hop, which becomes the
intra-node bandwidth of a run with g devices per node, and the NICs' rate that caps the node
link. Rates are in GB/s (10^9 bytes/s).

)";

const std::vector<OptionSpec> kNodeOptions = {
    {"--json", "", "print the same as JSON instead of a table"},
};

/// GB/s of a rate in bytes/s, rounded to 0.001 (the table's and the JSON's unit).
double node_GBps(double Bps) {
  return std::round(Bps / 1e6) / 1000;
}

/// The ring over the first `g` GPUs and the NICs' path with them.
json paths_with(const NodeDescription& n, int g) {
  json row = {{"gpus", g}};
  if (g >= 2) {
    const HostPath ring = intra_node_ring_path(n, g);
    row["ring_transport"] = transport_name(ring.transport);
    row["ring_GBps"] = node_GBps(ring.rate_Bps);
    const double nvls = nvls_link_Bps(n, ring);
    if (nvls > 0) row["nvls_GBps"] = node_GBps(nvls);
  }
  if (!n.nics.empty()) row["nics_GBps"] = node_GBps(nic_path(n, g).rate_Bps);
  return row;
}

/// Where each endpoint hangs.
json endpoints_json(const std::vector<PcieEndpoint>& v) {
  json out = json::array();
  for (const PcieEndpoint& e : v)
    out.push_back({{"pcie_gen", e.gen},
                   {"pcie_lanes", e.lanes},
                   {"switch", e.pcie_switch < 0 ? json(nullptr) : json(e.pcie_switch)},
                   {"socket", e.socket}});
  return out;
}

/// One node in full: its endpoints and its paths for every GPU count.
json node_json(const NodeDescription& n) {
  json paths = json::array();
  for (int g = 1; g <= static_cast<int>(n.gpus.size()); ++g) paths.push_back(paths_with(n, g));
  return {{"name", n.name},
          {"gpus", endpoints_json(n.gpus)},
          {"nics", endpoints_json(n.nics)},
          {"nic_line_GBps", node_GBps(n.nic_line_Bps)},
          {"p2p", n.p2p},
          {"gdr", n.gdr},
          {"paths", paths}};
}

/// "Gen4 x16, switch 1, socket 0" for an endpoint of node_json.
std::string place(const json& e) {
  const std::string where =
      e["switch"].is_null() ? "root port" : fmt::format("switch {}", e["switch"].get<int>());
  return fmt::format("Gen{} x{}, {}, socket {}", e["pcie_gen"].get<int>(),
                     e["pcie_lanes"].get<int>(), where, e["socket"].get<int>());
}

/// The table of one node (node_json).
void print_node(const json& j) {
  std::cout << fmt::format("node {} (P2P {}, GPUDirect RDMA {})\n", j["name"].get<std::string>(),
                           j["p2p"].get<bool>() ? "on" : "off",
                           j["gdr"].get<bool>() ? "on" : "off");
  for (size_t i = 0; i < j["gpus"].size(); ++i)
    std::cout << fmt::format("  GPU {:<3} {}\n", i, place(j["gpus"][i]));
  for (size_t k = 0; k < j["nics"].size(); ++k)
    std::cout << fmt::format("  NIC {:<3} {}, line rate {:g} GB/s\n", k, place(j["nics"][k]),
                             j["nic_line_GBps"].get<double>());
  std::cout << fmt::format("  {:>4}  {:<11} {:>9}  {:>9}\n", "GPUs", "ring", "GB/s", "NICs GB/s");
  for (const json& p : j["paths"])
    std::cout << fmt::format(
        "  {:>4}  {:<11} {:>9}  {:>9}\n", p["gpus"].get<int>(), p.value("ring_transport", "-"),
        p.contains("ring_GBps") ? fmt::format("{:g}", p["ring_GBps"].get<double>()) : "-",
        p.contains("nics_GBps") ? fmt::format("{:g}", p["nics_GBps"].get<double>()) : "-");
}

/// Every preset: its GPUs and NICs and its paths with all GPUs.
json preset_rows() {
  json rows = json::array();
  for (const std::string& name : node_preset_names()) {
    const NodeDescription n = node_preset(name);
    json row = paths_with(n, static_cast<int>(n.gpus.size()));
    row["name"] = name;
    row["nics"] = n.nics.size();
    rows.push_back(row);
  }
  return rows;
}

/// The table of the presets (preset_rows).
void print_presets(const json& rows) {
  std::cout << fmt::format("{:<24} {:>4} {:>4}  {:<11} {:>8}  {:>9}\n", "preset", "GPUs", "NICs",
                           "ring", "GB/s", "NICs GB/s");
  for (const json& r : rows)
    std::cout << fmt::format("{:<24} {:>4} {:>4}  {:<11} {:>8g}  {:>9g}\n",
                             r["name"].get<std::string>(), r["gpus"].get<int>(),
                             r["nics"].get<size_t>(), r["ring_transport"].get<std::string>(),
                             r["ring_GBps"].get<double>(), r.value("nics_GBps", 0.0));
}

/// `sgdsim node [PRESET | JSON] [--json]`.
int cmd_node(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::cout << kNodeHelpHead << options_help(kNodeOptions, 23), 0;
  Args a = parse_args(argv, kNodeOptions);
  if (a.positional.size() > 1)
    throw InputError("usage: sgdsim node takes one preset name or board description (see --help)");
  const bool as_json = a.has("--json");
  if (a.positional.empty()) {
    const json rows = preset_rows();
    if (as_json) return std::cout << rows.dump(2) << "\n", 0;
    print_presets(rows);
    return 0;
  }
  const json j = node_json(read_node_argument(a.positional.front(), "usage: sgdsim node"));
  if (as_json) return std::cout << j.dump(2) << "\n", 0;
  print_node(j);
  return 0;
}

const RegisterSubcommand kNode({"node", "node [PRESET | JSON]",
                                "a node preset's or a board's layout and NCCL's paths in it", 95,
                                cmd_node});

}  // namespace
}  // namespace sgdsim
