// `sgdsim platform`: a generated platform (of a scenario, or of the options alone) as SimGrid
// XML.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/analytic/platform_model.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/guards.hpp"
#include "sim/app/subcommand.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/scenario/json_reader.hpp"
#include "sim/scenario/scenario.hpp"

using nlohmann::json;

namespace sgdsim {
namespace {

constexpr const char* kPlatformHelpHead =
    R"(usage: sgdsim platform [SCENARIO.json] [--topology star|fat_tree] [--nodes N]
                       [--devices-per-node D] [--node-bandwidth B] [--node-latency L]
                       [--intra-bandwidth B] [--intra-latency L] [--device-speed S]
                       [--nodes-per-leaf K] [--oversubscription R] [--node-technology T]
                       [--intra-technology T] [--spines S] [--ecmp-seed E]
                       [--ecmp-connections N] [--output FILE] [--time-limit T]

Writes a generated platform as SimGrid XML (stdout, or FILE written atomically). With a
scenario, writes that scenario's generated platform; the options override its fields. With
its device.overlap_slowdown s > 0 each device declares speed / (1 + s) as a second pstate,
which a run on the file with the same s needs. Defaults are the scenario defaults (star,
100Gbps/1us tcp node links, 16GBps/1us pcie intra-node links, 15Tf devices, 16 nodes per
leaf, no oversubscription). Links carry their technology and transport as <prop> elements
(network_model "links" reads them); a star of single-device nodes is a SimGrid <cluster>,
whose links cannot carry properties: a scenario using it gives them the node link's
technology.

)";

const std::vector<OptionSpec> kPlatformOptions = {
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed\n"
     "or written"},
    {"--topology", "star|fat_tree", ""},
    {"--nodes", "N", ""},
    {"--devices-per-node", "D", ""},
    {"--node-bandwidth", "B", ""},
    {"--node-latency", "L", ""},
    {"--intra-bandwidth", "B", ""},
    {"--intra-latency", "L", ""},
    {"--device-speed", "S", ""},
    {"--nodes-per-leaf", "K", ""},
    {"--oversubscription", "R", ""},
    {"--output", "FILE", ""},
    {"--node-technology", "T", ""},
    {"--intra-technology", "T", ""},
    {"--spines", "S", ""},
    {"--ecmp-seed", "E", ""},
    {"--ecmp-connections", "N", ""},
};

int cmd_platform(const std::vector<std::string>& argv) {
  if (wants_help(argv))
    return std::cout << kPlatformHelpHead << options_help(kPlatformOptions, 23), 0;
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = parse_args(argv, kPlatformOptions);
  arm_time_limit_option(a, wall_start);
  json raw = {
      {"model",
       {{"name", "none"},
        {"kind", "flops"},
        {"layers",
         {{{"name", "l"}, {"parameters", 0}, {"forward_flops", 0}, {"backward_flops", 0}}}}}}};
  std::string file = "<command line>";
  if (a.positional.size() > 1)
    throw InputError("usage: sgdsim platform [SCENARIO.json] [options] (see --help)");
  if (a.positional.size() == 1) {
    file = a.positional[0];
    raw = parse_json_file(file);
    if (!raw.is_object()) throw InputError(file, "/", "expected a JSON object");
    if (raw.contains("platform") && raw["platform"].is_object() && raw["platform"].contains("file"))
      throw InputError(file, "/platform/file",
                       "the scenario uses a platform file, nothing to generate");
  }
  const std::vector<std::pair<std::string, std::string>> map = {
      {"--topology", "platform.generate.topology"},
      {"--nodes", "platform.generate.nodes"},
      {"--devices-per-node", "platform.generate.devices_per_node"},
      {"--node-bandwidth", "platform.generate.node_link.bandwidth"},
      {"--node-latency", "platform.generate.node_link.latency"},
      {"--node-technology", "platform.generate.node_link.technology"},
      {"--intra-bandwidth", "platform.generate.intra_node_link.bandwidth"},
      {"--intra-technology", "platform.generate.intra_node_link.technology"},
      {"--intra-latency", "platform.generate.intra_node_link.latency"},
      {"--device-speed", "platform.generate.device_speed"},
      {"--nodes-per-leaf", "platform.generate.nodes_per_leaf"},
      {"--oversubscription", "platform.generate.oversubscription"},
      {"--spines", "platform.generate.spines"},
      {"--ecmp-seed", "platform.generate.ecmp_seed"},
      {"--ecmp-connections", "platform.generate.ecmp_connections"}};
  for (const auto& [opt, path] : map)
    if (auto v = a.get(opt)) apply_override(raw, path + "=" + *v);
  Scenario sc = parse_scenario(raw, file);
  // With device.overlap_slowdown the devices declare their slowed speed as a second pstate,
  // so that a run on the written file with the same value is the scenario's run.
  GeneratedPlatform generated = *sc.platform.generate;
  generated.overlap_slowdown = sc.device.overlap_slowdown;
  PlatformModel pm(generated);
  const std::string xml = pm.xml();
  disarm_time_limit();
  if (auto out = a.get("--output"))
    write_file_atomic(*out, xml);
  else
    std::cout << xml;
  return 0;
}

const RegisterSubcommand kPlatform({"platform", "platform",
                                    "write a generated platform as SimGrid XML", 60, cmd_platform});

}  // namespace
}  // namespace sgdsim
