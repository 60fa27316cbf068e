// A node of the generated platform: a preset (sim/scenario/host_path.cpp), or a board read
// from its spec sheet into the same NodeDescription, laid out as the presets are (GPUs and
// NICs spread in order over PCIe switches and sockets). Models what the presets model; leaves
// out what they leave out (docs/host-path.md): PCIe switch hierarchies, NVLink topologies other
// than one rate per GPU, per-channel limits.
#include "sim/scenario/node_field.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sim/core/errors.hpp"
#include "sim/scenario/json_reader.hpp"

namespace sgdsim {

using nlohmann::json;

namespace {

/// The preset named by `name` at `pointer`; an InputError listing the presets otherwise.
NodeDescription preset_named(const json& name, const std::string& file,
                             const std::string& pointer) {
  try {
    if (name.is_string()) return node_preset(name.get<std::string>());
  } catch (const std::out_of_range&) {
  }
  throw InputError(file, pointer,
                   fmt::format("expected a node preset ({}), got {}",
                               fmt::join(node_preset_names(), ", "), show_value(name)));
}

/// An integer key with a default.
int int_or(JsonObject& o, const std::string& key, int fallback, int min, int max) {
  return o.has(key) ? static_cast<int>(o.get_int(key, min, max)) : fallback;
}

/// The GPUs, their PCIe links and the CPUs they hang under.
void read_gpus_and_sockets(JsonObject& o, NodeDescription& n, int* sockets) {
  const int gpus = static_cast<int>(o.get_int("gpus", 1, 1024));
  if (!o.has("pcie_gen")) o.fail("pcie_gen", "the GPUs' PCIe generation, 1 to 6");
  const int gen = static_cast<int>(o.get_int("pcie_gen", 1, 6));
  const int lanes = int_or(o, "pcie_lanes", 16, 1, 32);
  const int per_switch = int_or(o, "gpus_per_switch", 0, 0, gpus);
  *sockets = int_or(o, "sockets", 1, 1, 8);
  if (gpus % *sockets != 0)
    o.fail("sockets",
           fmt::format("a divisor of the {} GPUs (spread evenly over the sockets)", gpus));
  n.gpus = pcie_endpoints(gpus, gen, lanes, per_switch, *sockets);
  if (!o.has("cpu")) o.fail("cpu", "\"intel\", \"amd\" or \"arm\" (the CPUs' vendor)");
  n.intel_root_complex = o.get_choice("cpu", {"intel", "amd", "arm"}) == "intel";
  if (!o.has("host_memory_bandwidth"))
    o.fail("host_memory_bandwidth", "one socket's peak DRAM bandwidth, e.g. \"204.8GBps\"");
  n.host_memory_Bps = o.get_bandwidth_Bps("host_memory_bandwidth");
  if (*sockets > 1 && !o.has("socket_link_bandwidth"))
    o.fail("socket_link_bandwidth",
           "the rate between the sockets, e.g. \"22GBps\" (needed with sockets > 1)");
  if (o.has("socket_link_bandwidth")) {
    if (*sockets == 1) o.fail("socket_link_bandwidth", "nothing with one socket");
    n.socket_link_Bps = o.get_bandwidth_Bps("socket_link_bandwidth");
  }
}

/// NVLink between the GPUs, and NVLink SHARP on their NVSwitch.
void read_nvlink(JsonObject& o, NodeDescription& n) {
  if (o.has("nvlink_bandwidth")) n.nvlink_Bps = o.get_bandwidth_Bps("nvlink_bandwidth");
  if (o.has("nvls")) {
    n.nvls = o.get_bool("nvls");
    if (n.nvls && n.nvlink_Bps <= 0) o.fail("nvls", "false without nvlink_bandwidth");
  }
}

/// The NICs: how many, their line rate and PCIe links, where they hang.
void read_nics(JsonObject& o, NodeDescription& n, int sockets) {
  const int nics = int_or(o, "nics", 1, 0, 1024);
  const int gen = int_or(o, "nic_pcie_gen", n.gpus.front().gen, 1, 6);
  const int lanes = int_or(o, "nic_pcie_lanes", 16, 1, 32);
  const int per_switch = int_or(o, "nics_per_switch", 0, 0, std::max(nics, 1));
  n.nics = pcie_endpoints(nics, gen, lanes, per_switch, sockets);
  if (nics > 0 && !o.has("nic_bandwidth"))
    o.fail("nic_bandwidth", "one NIC's line rate, e.g. \"100Gbps\" (needed with nics > 0)");
  if (o.has("nic_bandwidth")) n.nic_line_Bps = o.get_bandwidth_Bps("nic_bandwidth");
}

/// A board described from its spec sheet.
NodeDescription read_board(JsonObject& o) {
  NodeDescription n;
  n.name = "custom";
  int sockets = 1;
  read_gpus_and_sockets(o, n, &sockets);
  read_nvlink(o, n);
  read_nics(o, n, sockets);
  return n;
}

}  // namespace

NodeDescription read_node_description(const json& value, const std::string& file,
                                      const std::string& pointer) {
  if (!value.is_object()) return preset_named(value, file, pointer);
  JsonObject o(value, file, pointer);
  if (o.has("preset") && o.has("gpus"))
    throw InputError(file, pointer,
                     "give either \"preset\" or a board description (\"gpus\", ...), not both");
  if (!o.has("preset") && !o.has("gpus"))
    throw InputError(file, pointer,
                     fmt::format("expected \"preset\" or a board description (\"gpus\", "
                                 "\"pcie_gen\", \"cpu\", \"host_memory_bandwidth\", ...), got {}",
                                 show_value(value)));
  NodeDescription n =
      o.has("preset") ? preset_named(o.raw("preset"), file, o.pointer_of("preset")) : read_board(o);
  // A server with the preset's host path and NICs of another rate (its layout kept).
  if (o.has("preset") && o.has("nic_bandwidth"))
    n.nic_line_Bps = o.get_bandwidth_Bps("nic_bandwidth");
  if (o.has("p2p")) n.p2p = o.get_bool("p2p");
  if (o.has("gdr")) n.gdr = o.get_bool("gdr");
  o.finish();
  return n;
}

void check_within_nic_line_rate(double node_link_Bps, const NodeDescription& n,
                                const std::string& file, const std::string& pointer) {
  const double line_Bps = n.nic_line_Bps * static_cast<double>(n.nics.size());
  // Rounding of unit strings: a rate equal to the NICs' in other units passes. A node without
  // NICs has no line rate to compare with (its host path leaves nothing between nodes).
  if (n.nics.empty() || node_link_Bps <= line_Bps * (1 + 1e-9)) return;
  auto gbps = [](double Bps) { return fmt::format("{:g}Gbps", Bps * 8 / 1e9); };
  throw InputError(file, pointer,
                   fmt::format("expected at most {} (the line rate of the {} NIC(s) of node "
                               "\"{}\"; faster NICs: give their rate as the node's "
                               "\"nic_bandwidth\"), got {}",
                               gbps(line_Bps), n.nics.size(), n.name, gbps(node_link_Bps)));
}

NodeDescription read_node_argument(const std::string& text, const std::string& what) {
  if (!text.empty() && text.front() == '{') {
    const std::optional<json> v = parse_json_value(text, what);
    if (!v)
      throw InputError(what + ": expected a preset name or a board description in JSON, got " +
                       text);
    return read_node_description(*v, what, "");
  }
  try {
    return node_preset(text);
  } catch (const std::out_of_range&) {
    throw InputError(fmt::format("{}: expected {}, got \"{}\"", what,
                                 fmt::join(node_preset_names(), ", "), text));
  }
}

}  // namespace sgdsim
