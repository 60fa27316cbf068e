#pragma once
/// Chakra execution traces (MLCommons Chakra, the workload format of ASTRA-sim): one file per
/// rank, a varint-length-prefixed stream of protobuf messages, a GlobalMetadata then Nodes.
/// Field numbers and types follow the public schema schema/protobuf/et_def.proto of
/// github.com/mlcommons/chakra (Apache-2.0); node attributes follow its feeder's names
/// (comm_type, comm_size, comm_src, comm_dst, comm_tag, pg_name, is_cpu_op).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sgdsim {

/// Chakra NodeType values (et_def.proto).
enum class ChakraNodeType : uint8_t {
  invalid = 0,
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  comp = 4,
  comm_send = 5,
  comm_recv = 6,
  comm_coll = 7,
};

/// Chakra CollectiveCommType values (et_def.proto).
enum class ChakraCollective : uint8_t {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};

/// Schema name of a node type ("COMP_NODE", ...).
const char* chakra_node_type_name(ChakraNodeType type);
/// Schema name of a collective type ("ALL_REDUCE", ...).
const char* chakra_collective_name(ChakraCollective type);

/// One node of an execution trace (the fields sgdsim reads; other attributes are skipped).
struct ChakraNode {
  uint64_t id = 0;                                ///< node id, unique in the file
  std::string name;                               ///< node name
  ChakraNodeType type = ChakraNodeType::invalid;  ///< what it does
  std::vector<uint64_t> ctrl_deps;                ///< control dependencies (node ids)
  std::vector<uint64_t> data_deps;                ///< data dependencies (node ids)
  uint64_t start_time_micros = 0;                 ///< start in the traced run
  uint64_t duration_micros = 0;                   ///< duration (compute nodes: their time)
  std::optional<int64_t> comm_type;               ///< attribute comm_type (CollectiveCommType)
  std::optional<int64_t> comm_size;               ///< attribute comm_size (bytes)
  std::optional<int64_t> comm_src;                ///< attribute comm_src (sending rank)
  std::optional<int64_t> comm_dst;                ///< attribute comm_dst (receiving rank)
  std::optional<int64_t> comm_tag;                ///< attribute comm_tag (matches a send to a recv)
  std::string pg_name;                            ///< attribute pg_name (process group), if any
  std::optional<bool> is_cpu_op;                  ///< attribute is_cpu_op
};

/// One rank's execution trace.
struct ChakraTrace {
  std::string file;               ///< where it was read from
  std::string version;            ///< GlobalMetadata.version
  std::string schema;             ///< GlobalMetadata attribute "schema", if any
  std::vector<ChakraNode> nodes;  ///< nodes in file order
};

/// Decodes an ET byte stream; malformed input throws InputError naming `file`, the byte offset
/// and what was expected (truncated fields, bad wire types, duplicate ids, unknown node types,
/// dependencies on missing nodes, communication nodes without their attributes).
ChakraTrace parse_chakra(const std::string& bytes, const std::string& file);
/// Reads and decodes one ET file.
ChakraTrace read_chakra_file(const std::string& path);
/// Encodes a trace as ET bytes (GlobalMetadata with version and schema, then the nodes; the
/// attributes with the value types Chakra's feeder reads: comm_type/comm_size int64,
/// comm_src/comm_dst/comm_tag int32, is_cpu_op bool, pg_name string).
std::string encode_chakra(const ChakraTrace& trace);

/// Rank r's file of a per-rank set written as `<prefix>.<r>.et` (Chakra's naming).
std::string chakra_rank_file(const std::string& prefix, int rank);

}  // namespace sgdsim
