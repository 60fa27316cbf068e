// Chakra ET decoding and encoding on the wire codec of protobuf_wire. Field numbers transcribed
// from mlcommons/chakra schema/protobuf/et_def.proto (Apache-2.0): GlobalMetadata {version 1,
// attr 2}; Node {id 1, name 2, type 3, ctrl_deps 4, data_deps 5, start_time_micros 6,
// duration_micros 7, inputs 8, outputs 9, attr 10}; AttributeProto {name 1, doc_string 2, then a
// oneof of typed values 3..32}. Leaves out IOInfo, tensor and list-valued attributes (skipped).
#include "sim/workload/chakra_et.hpp"

#include <fmt/format.h>

#include <bit>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/workload/protobuf_wire.hpp"

namespace sgdsim {

namespace {

using pbwire::Field;
using pbwire::Reader;
using pbwire::WireType;

/// A scalar attribute value: integers (any integer type) and bools as int64, strings as text.
struct Attribute {
  std::string name;
  std::optional<int64_t> integer;
  std::optional<std::string> text;
};

/// The wire type each AttributeProto value field must have (et_def.proto's oneof).
WireType attribute_wire_type(uint32_t number) {
  switch (number) {
    case 3:
    case 21:
    case 25:
      return WireType::fixed64;  // double, fixed64, sfixed64
    case 5:
    case 19:
    case 23:
      return WireType::fixed32;  // float, fixed32, sfixed32
    case 7:
    case 9:
    case 11:
    case 13:
    case 15:
    case 17:
    case 27:
      return WireType::varint;  // (u)int32/64, sint32/64, bool
    default:
      return WireType::length;  // strings, bytes and the lists
  }
}

void expect_type(const Field& f, WireType want, const std::string& file, const char* message) {
  if (f.type != want)
    throw InputError(file, fmt::format("byte {}", f.offset),
                     fmt::format("{} field {}: expected wire type {}, got {}", message, f.number,
                                 static_cast<int>(want), static_cast<int>(f.type)));
}

Attribute parse_attribute(const Field& outer, const std::string& file) {
  Reader r(outer.bytes, file, outer.offset);
  Attribute a;
  while (r.more()) {
    const Field f = r.next();
    if (f.number == 1 || f.number == 2) {
      expect_type(f, WireType::length, file, "AttributeProto");
      if (f.number == 1) a.name = std::string(f.bytes);
      continue;
    }
    if (f.number > 32) continue;  // newer schema: not ours to read
    expect_type(f, attribute_wire_type(f.number), file, "AttributeProto");
    switch (f.number) {
      case 7:
      case 23:  // int32, sfixed32: the low 32 bits, signed
        a.integer = static_cast<int32_t>(static_cast<uint32_t>(f.value));
        break;
      case 9:
      case 25:
      case 13:
      case 21:  // int64, sfixed64, uint64, fixed64
        a.integer = static_cast<int64_t>(f.value);
        break;
      case 11:
      case 19:  // uint32, fixed32
        a.integer = static_cast<int64_t>(static_cast<uint32_t>(f.value));
        break;
      case 15:
        a.integer = static_cast<int32_t>(pbwire::zigzag_decode(f.value));
        break;
      case 17:
        a.integer = pbwire::zigzag_decode(f.value);
        break;
      case 27:
        a.integer = f.value != 0 ? 1 : 0;
        break;
      case 29:
        a.text = std::string(f.bytes);
        break;
      default:
        break;  // doubles, floats, bytes and lists: not read by sgdsim
    }
  }
  return a;
}

void apply_attribute(ChakraNode& n, const Attribute& a, const std::string& file, uint64_t offset) {
  // An attribute present without a value reads as 0, as protobuf's accessors do; a string
  // where sgdsim reads a number is an error (it would read as 0 too).
  if (a.text && !a.integer &&
      (a.name == "comm_type" || a.name == "comm_size" || a.name == "comm_src" ||
       a.name == "comm_dst" || a.name == "comm_tag" || a.name == "is_cpu_op"))
    throw InputError(
        file, fmt::format("byte {}", offset),
        fmt::format("attribute {} has the string value \"{}\": expected an integer "
                    "value (int64_val and the like of et_def.proto)",
                    a.name, a.text->size() > 40 ? a.text->substr(0, 37) + "..." : *a.text));
  const int64_t v = a.integer.value_or(0);
  if (a.name == "comm_type")
    n.comm_type = v;
  else if (a.name == "comm_size")
    n.comm_size = v;
  else if (a.name == "comm_src")
    n.comm_src = v;
  else if (a.name == "comm_dst")
    n.comm_dst = v;
  else if (a.name == "comm_tag")
    n.comm_tag = v;
  else if (a.name == "is_cpu_op")
    n.is_cpu_op = v != 0;
  else if (a.name == "pg_name")
    n.pg_name = a.text.value_or("");
}

ChakraNode parse_node(std::string_view payload, const std::string& file, uint64_t offset) {
  Reader r(payload, file, offset);
  ChakraNode n;
  while (r.more()) {
    const Field f = r.next();
    switch (f.number) {
      case 1:
        expect_type(f, WireType::varint, file, "Node");
        n.id = f.value;
        break;
      case 2:
        expect_type(f, WireType::length, file, "Node");
        n.name = std::string(f.bytes);
        break;
      case 3:
        expect_type(f, WireType::varint, file, "Node");
        if (f.value < 1 || f.value > 7)
          throw InputError(file, fmt::format("byte {}", f.offset),
                           fmt::format("node type {}: expected 1..7 (METADATA_NODE .. "
                                       "COMM_COLL_NODE of et_def.proto)",
                                       f.value));
        n.type = static_cast<ChakraNodeType>(f.value);
        break;
      case 4:
        pbwire::append_repeated_varints(f, file, n.ctrl_deps);
        break;
      case 5:
        pbwire::append_repeated_varints(f, file, n.data_deps);
        break;
      case 6:
        expect_type(f, WireType::varint, file, "Node");
        n.start_time_micros = f.value;
        break;
      case 7:
        expect_type(f, WireType::varint, file, "Node");
        n.duration_micros = f.value;
        break;
      case 8:
      case 9:
        expect_type(f, WireType::length, file, "Node");
        break;  // IOInfo: skipped
      case 10:
        expect_type(f, WireType::length, file, "Node");
        apply_attribute(n, parse_attribute(f, file), file, f.offset);
        break;
      default:
        break;  // newer schema fields
    }
  }
  return n;
}

void parse_metadata(std::string_view payload, const std::string& file, uint64_t offset,
                    ChakraTrace& t) {
  Reader r(payload, file, offset);
  while (r.more()) {
    const Field f = r.next();
    if (f.number == 1) {
      expect_type(f, WireType::length, file, "GlobalMetadata");
      t.version = std::string(f.bytes);
    } else if (f.number == 2) {
      expect_type(f, WireType::length, file, "GlobalMetadata");
      Attribute a = parse_attribute(f, file);
      if (a.name == "schema" && a.text) t.schema = *a.text;
    }
  }
}

void fail_node(const std::string& file, const ChakraNode& n, const std::string& what) {
  throw InputError(file, fmt::format("node {}", n.id), what);
}

/// Checks what the simulator relies on: unique ids, dependencies on present nodes, the
/// attributes communication nodes need.
void check_nodes(const ChakraTrace& t) {
  std::unordered_set<uint64_t> ids;
  for (const auto& n : t.nodes)
    if (!ids.insert(n.id).second) fail_node(t.file, n, "duplicate node id: expected unique ids");
  for (const auto& n : t.nodes) {
    if (n.type == ChakraNodeType::invalid)
      fail_node(t.file, n, "no node type: expected a type field (1..7 of et_def.proto)");
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (uint64_t d : *deps) {
        if (d == n.id) fail_node(t.file, n, "depends on itself: expected other nodes' ids");
        if (!ids.count(d))
          fail_node(t.file, n,
                    fmt::format("depends on node {}, which the file lacks: expected ids of "
                                "nodes in the file",
                                d));
      }
    if (static_cast<double>(n.duration_micros) > limits::kMaxTime_s * 1e6)
      fail_node(t.file, n,
                fmt::format("duration_micros {}: more than the limit of {:.0e} s on input times",
                            n.duration_micros, limits::kMaxTime_s));
    const bool comm = n.type == ChakraNodeType::comm_coll || n.type == ChakraNodeType::comm_send ||
                      n.type == ChakraNodeType::comm_recv;
    if (!comm) continue;
    if (!n.comm_size || *n.comm_size < 0)
      fail_node(t.file, n,
                "communication node without a comm_size >= 0: expected an attribute "
                "comm_size (bytes)");
    if (static_cast<double>(*n.comm_size) > limits::kMaxMessageBytes)
      fail_node(t.file, n,
                fmt::format("comm_size {}: more than the limit of {:.0f} bytes (2^48) on message "
                            "sizes",
                            *n.comm_size, limits::kMaxMessageBytes));
    if (n.type == ChakraNodeType::comm_coll &&
        (!n.comm_type || *n.comm_type < 0 || *n.comm_type > 9))
      fail_node(t.file, n,
                "collective node without a comm_type in 0..9: expected an attribute "
                "comm_type (CollectiveCommType of et_def.proto)");
    if (n.type == ChakraNodeType::comm_send && (!n.comm_dst || *n.comm_dst < 0))
      fail_node(t.file, n, "send node without a comm_dst >= 0: expected the receiving rank");
    if (n.type == ChakraNodeType::comm_recv && (!n.comm_src || *n.comm_src < 0))
      fail_node(t.file, n, "receive node without a comm_src >= 0: expected the sending rank");
  }
}

void put_int_attribute(pbwire::Writer& w, const char* name, int64_t v, uint32_t field) {
  pbwire::Writer a;
  a.bytes(1, name);
  a.varint(field, static_cast<uint64_t>(v), false);
  w.bytes(10, a.data(), false);
}

}  // namespace

const char* chakra_node_type_name(ChakraNodeType t) {
  static const char* names[] = {"INVALID_NODE",   "METADATA_NODE", "MEM_LOAD_NODE",
                                "MEM_STORE_NODE", "COMP_NODE",     "COMM_SEND_NODE",
                                "COMM_RECV_NODE", "COMM_COLL_NODE"};
  return names[static_cast<int>(t) & 7];
}

const char* chakra_collective_name(ChakraCollective t) {
  static const char* names[] = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  const int i = static_cast<int>(t);
  return i <= 9 ? names[i] : "?";
}

ChakraTrace parse_chakra(const std::string& bytes, const std::string& file) {
  ChakraTrace t;
  t.file = file;
  if (bytes.empty())
    throw InputError(file, "", "empty file: expected a Chakra ET stream (GlobalMetadata, nodes)");
  Reader stream(bytes, file);
  bool metadata = true;
  while (stream.more()) {
    const uint64_t n = stream.varint();
    const uint64_t at = stream.offset();
    std::string_view payload = stream.take(n, "message");
    if (metadata) {
      parse_metadata(payload, file, at, t);
      metadata = false;
      continue;
    }
    if (payload.empty())
      throw InputError(file, fmt::format("byte {}", at),
                       "empty node message: expected a Node with an id and a type");
    t.nodes.push_back(parse_node(payload, file, at));
  }
  check_nodes(t);
  return t;
}

ChakraTrace read_chakra_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open file: expected a readable Chakra ET file");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b)
    throw InputError(path, "",
                     "gzip-compressed: a scenario's workload reads uncompressed Chakra ET files "
                     "(gunzip it first; sgdsim trace reads both)");
  return parse_chakra(bytes, path);
}

std::string encode_chakra(const ChakraTrace& t) {
  std::string out;
  pbwire::Writer meta;
  meta.bytes(1, t.version);
  if (!t.schema.empty()) {
    pbwire::Writer a;
    a.bytes(1, "schema");
    a.bytes(29, t.schema, false);
    meta.bytes(2, a.data(), false);
  }
  pbwire::append_varint(out, meta.data().size());
  out += meta.data();
  for (const auto& n : t.nodes) {
    pbwire::Writer w;
    w.varint(1, n.id);
    w.bytes(2, n.name);
    w.varint(3, static_cast<uint64_t>(n.type));
    w.packed(4, n.ctrl_deps);
    w.packed(5, n.data_deps);
    w.varint(6, n.start_time_micros);
    w.varint(7, n.duration_micros);
    if (n.is_cpu_op) {
      pbwire::Writer a;
      a.bytes(1, "is_cpu_op");
      a.varint(27, *n.is_cpu_op ? 1 : 0, false);
      w.bytes(10, a.data(), false);
    }
    if (n.comm_type) put_int_attribute(w, "comm_type", *n.comm_type, 9);
    if (n.comm_size) put_int_attribute(w, "comm_size", *n.comm_size, 9);
    if (n.comm_src) put_int_attribute(w, "comm_src", *n.comm_src, 7);
    if (n.comm_dst) put_int_attribute(w, "comm_dst", *n.comm_dst, 7);
    if (n.comm_tag) put_int_attribute(w, "comm_tag", *n.comm_tag, 7);
    if (!n.pg_name.empty()) {
      pbwire::Writer a;
      a.bytes(1, "pg_name");
      a.bytes(29, n.pg_name, false);
      w.bytes(10, a.data(), false);
    }
    pbwire::append_varint(out, w.data().size());
    out += w.data();
  }
  return out;
}

std::string chakra_rank_file(const std::string& prefix, int rank) {
  return fmt::format("{}.{}.et", prefix, rank);
}

}  // namespace sgdsim
