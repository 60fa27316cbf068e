#pragma once
/// Reading a node of `platform.generate.node` (and of `sgdsim collective --node`): a preset's
/// name, a preset with P2P or GPUDirect RDMA turned off, or a board described from its spec
/// sheet (GPUs, PCIe, sockets, host memory, NICs) laid out as the presets are.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/scenario/host_path.hpp"

namespace sgdsim {

/// The node `value` at `pointer` of `file`: a preset name, `{"preset", "p2p", "gdr",
/// "nic_bandwidth"}`, or a description `{"gpus", "pcie_gen", "cpu", "host_memory_bandwidth",
/// ...}` (docs/host-path.md, "Describing a board"); throws InputError naming the bad key.
NodeDescription read_node_description(const nlohmann::json& value, const std::string& file,
                                      const std::string& pointer);
/// Throws InputError (at `pointer` of `file`) if a bandwidth between nodes that the user gave,
/// `node_link_Bps`, exceeds the line rate of node `n`'s NICs together: the host path would cap
/// it silently, where the user meant other NICs (node.nic_bandwidth says so).
void check_within_nic_line_rate(double node_link_Bps, const NodeDescription& n,
                                const std::string& file, const std::string& pointer);
/// A node given on the command line, `what` naming where ("usage: --node"): a preset's name,
/// or a board description in JSON; throws InputError "<what>: expected ..., got ...".
NodeDescription read_node_argument(const std::string& text, const std::string& what);

}  // namespace sgdsim
