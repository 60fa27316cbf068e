// Chakra ET support: the protobuf wire codec, ET decoding of files written by an independent
// (Python) encoder, encode/decode round trips, malformed input as InputErrors naming file, place
// and expectation, cross-rank matching of collectives and messages, and the compute chains
// the schemes build from the traces (dependency structure and zero-time joins).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/schemes/common.hpp"
#include "sim/trace/import.hpp"
#include "sim/workload/chakra_et.hpp"
#include "sim/workload/chakra_workload.hpp"
#include "sim/workload/protobuf_wire.hpp"

using namespace sgdsim;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string src(const std::string& rel) {
  return std::string(SGDSIM_SOURCE_DIR) + "/" + rel;
}

/// The InputError message `f` throws ("" if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

ChakraNode comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {},
                const std::string& name = "c") {
  ChakraNode n;
  n.id = id;
  n.name = name;
  n.type = ChakraNodeType::comp;
  n.duration_micros = us;
  n.data_deps = std::move(deps);
  return n;
}

ChakraNode allreduce(uint64_t id, int64_t bytes, std::vector<uint64_t> deps) {
  ChakraNode n;
  n.id = id;
  n.name = "ar";
  n.type = ChakraNodeType::comm_coll;
  n.comm_type = 0;
  n.comm_size = bytes;
  n.data_deps = std::move(deps);
  return n;
}

ChakraTrace trace_of(std::vector<ChakraNode> nodes, const std::string& file = "t.0.et") {
  ChakraTrace t;
  t.file = file;
  t.version = "0.0.4";
  t.nodes = std::move(nodes);
  return t;
}

}  // namespace

TEST(ProtobufWire, VarintsRoundTripAtTheirBoundaries) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383},
                     uint64_t{16384}, uint64_t{1} << 63, ~uint64_t{0}}) {
    std::string b;
    pbwire::append_varint(b, v);
    pbwire::Reader r(b, "x");
    EXPECT_EQ(r.varint(), v);
    EXPECT_FALSE(r.more());
  }
  std::string b;
  pbwire::append_varint(b, 300);
  EXPECT_EQ(b, std::string("\xac\x02", 2));  // the encoding guide's example
  for (int64_t v : {0L, -1L, 1L, -64L, 63L, INT64_MIN, INT64_MAX})
    EXPECT_EQ(pbwire::zigzag_decode(pbwire::zigzag_encode(v)), v);
  EXPECT_EQ(pbwire::zigzag_encode(-1), 1u);
  EXPECT_EQ(pbwire::zigzag_encode(1), 2u);
}

TEST(ProtobufWire, MalformedFieldsAreInputErrorsWithTheirOffset) {
  // An eleven-byte varint, a truncated one, a length past the end, a group, field number 0.
  const std::pair<std::string, std::string> cases[] = {
      {std::string(10, '\xff') + "\x01", "varint longer than 64 bits"},
      {"\x08\x80", "truncated varint"},
      {"\x12\x05"
       "ab",
       "truncated length-delimited field (5 bytes announced, 2 left)"},
      {"\x0b", "wire type 3 of field 1"},
      {std::string("\x00\x01", 2), "field number 0"},
      {"\x09\x01\x02", "truncated fixed64 field"},
  };
  for (const auto& [bytes, expect] : cases) {
    // An init-capture: clang 14 cannot capture a structured binding itself.
    const std::string e = error_of([&bytes = bytes] {
      pbwire::Reader r(bytes, "f.et", 7);
      while (r.more()) r.next();
    });
    EXPECT_NE(e.find("f.et: byte "), std::string::npos) << e;
    EXPECT_NE(e.find(expect), std::string::npos) << e;
  }
}

TEST(ChakraEt, ReadsFilesWrittenByTheIndependentPythonEncoder) {
  ChakraTrace t = read_chakra_file(src("experiments/astra_sim/et/dp.3.et"));
  EXPECT_EQ(t.version, "0.0.4");
  ASSERT_EQ(t.nodes.size(), 9u);
  EXPECT_EQ(t.nodes[0].type, ChakraNodeType::comp);
  EXPECT_EQ(t.nodes[0].duration_micros, 20000u);
  EXPECT_EQ(t.nodes[0].is_cpu_op, false);
  for (int k = 0; k < 4; ++k) {
    const ChakraNode& b = t.nodes[1 + 2 * k];
    const ChakraNode& ar = t.nodes[2 + 2 * k];
    EXPECT_EQ(b.name, "bwd_" + std::to_string(k));
    EXPECT_EQ(b.duration_micros, 10000u);
    EXPECT_EQ(b.data_deps, std::vector<uint64_t>{k == 0 ? 0u : static_cast<uint64_t>(2 * k - 1)});
    EXPECT_EQ(ar.type, ChakraNodeType::comm_coll);
    EXPECT_EQ(ar.comm_type, 0);
    EXPECT_EQ(ar.comm_size, int64_t{256} << 20);
    EXPECT_EQ(ar.data_deps, std::vector<uint64_t>{b.id});
  }
}

TEST(ChakraEt, EncodeThenParseKeepsEveryFieldSgdsimReads) {
  ChakraNode s;
  s.id = 7;
  s.name = "send";
  s.type = ChakraNodeType::comm_send;
  s.comm_size = 1 << 20;
  s.comm_src = 0;
  s.comm_dst = 3;
  s.comm_tag = -5;  // int32 negative: ten-byte varint
  s.ctrl_deps = {1};
  s.pg_name = "dp";
  s.start_time_micros = 123;
  ChakraTrace t = trace_of({comp(1, 40, {}, "fwd"), allreduce(2, 4096, {1}), s});
  t.schema = "test";
  const ChakraTrace u = parse_chakra(encode_chakra(t), "x.et");
  EXPECT_EQ(u.version, "0.0.4");
  EXPECT_EQ(u.schema, "test");
  ASSERT_EQ(u.nodes.size(), 3u);
  EXPECT_EQ(u.nodes[0].duration_micros, 40u);
  EXPECT_EQ(u.nodes[1].comm_size, 4096);
  EXPECT_EQ(u.nodes[1].data_deps, std::vector<uint64_t>{1});
  EXPECT_EQ(u.nodes[2].id, 7u);
  EXPECT_EQ(u.nodes[2].comm_dst, 3);
  EXPECT_EQ(u.nodes[2].comm_tag, -5);
  EXPECT_EQ(u.nodes[2].ctrl_deps, std::vector<uint64_t>{1});
  EXPECT_EQ(u.nodes[2].pg_name, "dp");
  EXPECT_EQ(u.nodes[2].start_time_micros, 123u);
  EXPECT_EQ(encode_chakra(u), encode_chakra(t));
}

TEST(ChakraEt, MalformedTracesNameTheFileNodeAndExpectation) {
  const std::pair<std::string, std::string> files[] = {
      {"truncated.0.et", "byte 36: truncated message"},
      {"missing-dep.0.et", "node 0: depends on node 7, which the file lacks"},
      {"no-size.0.et", "node 0: communication node without a comm_size"},
      {"group.0.et", "wire type 3 of field 2"},
  };
  for (const auto& [f, expect] : files) {
    const std::string path = src("tests/bad_inputs/chakra/" + f);
    const std::string e = error_of([&] { read_chakra_file(path); });
    EXPECT_NE(e.find(path), std::string::npos) << e;
    EXPECT_NE(e.find(expect), std::string::npos) << e;
  }
  EXPECT_NE(error_of([] { parse_chakra("", "e.et"); }).find("empty file"), std::string::npos);
  ChakraTrace dup = trace_of({comp(1, 1), comp(1, 2)});
  EXPECT_NE(error_of([&] { parse_chakra(encode_chakra(dup), "d.et"); }).find("duplicate node id"),
            std::string::npos);
  ChakraNode bad_type = comp(2, 1);
  bad_type.type = static_cast<ChakraNodeType>(9);
  EXPECT_NE(error_of([&] {
              parse_chakra(encode_chakra(trace_of({bad_type})), "t.et");
            }).find("node type 9: expected 1..7"),
            std::string::npos);
}

TEST(ChakraProgram, MatchesCollectivesAndMessagesAcrossRanks) {
  ChakraNode s, r;
  s.id = 2;
  s.type = ChakraNodeType::comm_send;
  s.comm_size = 100;
  s.comm_dst = 1;
  s.data_deps = {1};
  r.id = 5;
  r.type = ChakraNodeType::comm_recv;
  r.comm_size = 100;
  r.comm_src = 0;
  ChakraProgram p =
      build_chakra_program({trace_of({comp(1, 10), s, allreduce(3, 64, {1})}, "a.0.et"),
                            trace_of({r, comp(6, 10, {5}), allreduce(7, 64, {6})}, "a.1.et")});
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_EQ(p.collectives[0].bytes, 64);
  ASSERT_EQ(p.messages.size(), 1u);
  EXPECT_EQ(p.messages[0].src, 0);
  EXPECT_EQ(p.messages[0].dst, 1);
  EXPECT_EQ(p.ranks[0][1].message, 0);
  EXPECT_EQ(p.ranks[1][0].message, 0);

  // Collective sizes differ between ranks.
  EXPECT_NE(
      error_of([] {
        build_chakra_program({trace_of({allreduce(1, 64, {})}, "b.0.et"),
                              trace_of({allreduce(1, 65, {})}, "b.1.et")});
      }).find("b.1.et: node 1: collective #0 (topological order) has comm_size 65: expected 64"),
      std::string::npos);
  // Collective types differ between ranks; a type sgdsim does not model.
  ChakraNode gather = allreduce(1, 64, {});
  gather.comm_type = static_cast<int64_t>(ChakraCollective::all_gather);
  EXPECT_NE(error_of([&] {
              build_chakra_program(
                  {trace_of({allreduce(1, 64, {})}, "g.0.et"), trace_of({gather}, "g.1.et")});
            })
                .find("g.1.et: node 1: collective #0 (topological order) is ALL_GATHER: expected "
                      "ALL_REDUCE as node 1 of g.0.et"),
            std::string::npos);
  ChakraNode all_to_all = gather;
  all_to_all.comm_type = static_cast<int64_t>(ChakraCollective::all_to_all);
  EXPECT_NE(error_of([&] { build_chakra_program({trace_of({all_to_all}, "h.0.et")}); })
                .find("h.0.et: node 1: ALL_TO_ALL collective: expected ALL_REDUCE, ALL_GATHER or "
                      "REDUCE_SCATTER"),
            std::string::npos);
  // The operations: ALL_GATHER and REDUCE_SCATTER keep theirs; other types have none.
  EXPECT_EQ(chakra_collective_op(ChakraCollective::all_gather), CollectiveOp::allgather);
  EXPECT_EQ(chakra_collective_op(ChakraCollective::reduce_scatter), CollectiveOp::reduce_scatter);
  EXPECT_EQ(chakra_collective_op(ChakraCollective::all_reduce), CollectiveOp::allreduce);
  EXPECT_FALSE(chakra_collective_op(ChakraCollective::broadcast).has_value());
  // A send nobody receives; a rank with one collective fewer.
  EXPECT_NE(error_of([&] {
              build_chakra_program({trace_of({comp(1, 1), s}), trace_of({comp(1, 1)})});
            }).find("has no matching COMM_RECV_NODE"),
            std::string::npos);
  EXPECT_NE(
      error_of([] {
        build_chakra_program({trace_of({allreduce(1, 8, {})}), trace_of({comp(1, 1)}, "c.1.et")});
      }).find("c.1.et: 0 collective nodes: expected 1"),
      std::string::npos);
  // Each rank's receive waits for its own send to the other: a deadlock.
  ChakraNode s0 = s, r0 = r, s1 = s, r1 = r;
  s0.data_deps = {5};  // rank 0 sends after receiving
  r0.id = 5;
  r0.comm_src = 1;
  s1.comm_dst = 0;
  s1.data_deps = {5};
  r1.comm_src = 0;
  EXPECT_NE(error_of([&] {
              build_chakra_program({trace_of({r0, s0}), trace_of({r1, s1})});
            }).find("form a cycle"),
            std::string::npos);
}

TEST(ChakraChains, SyncFragmentKeepsTheTracesDependencies) {
  // Two ranks: a -> {b, c} -> allreduce after b and c (a zero-time join); d after the allreduce.
  const fs::path dir = fs::temp_directory_path() / ("sgdsim-chakra-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int rank = 0; rank < 2; ++rank) {
    ChakraNode d = comp(5, 3, {}, "opt");
    d.ctrl_deps = {4};
    ChakraTrace t = trace_of({comp(1, 1000, {}, "a"), comp(2, 2000, {1}, "b_bwd"),
                              comp(3, 3000, {1}, "c_bwd"), allreduce(4, 1 << 20, {2, 3}), d});
    std::ofstream(dir / ("w." + std::to_string(rank) + ".et"), std::ios::binary)
        << encode_chakra(t);
  }
  json j = {{"workload", {{"chakra", (dir / "w").string()}, {"optimizer", "trace"}}},
            {"workers", {{"count", 2}}},
            {"platform", {{"generate", {{"topology", "star"}, {"nodes", 2}}}}}};
  Scenario s = parse_scenario(j, "s.json");
  Workload w = load_workload(s);
  ASSERT_TRUE(w.chakra);
  EXPECT_EQ(w.buckets.size(), 1u);
  EXPECT_DOUBLE_EQ(w.gradient_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(w.update_s, 0.0);
  EXPECT_DOUBLE_EQ(w.forward_s, 1e-3 + 3e-6);
  EXPECT_DOUBLE_EQ(w.backward_s, 5e-3);
  auto scheme = make_scheme({&s, &w});
  Fragment f = scheme->build(1);
  const TaskGraph& g = f.graph;
  // Per rank: a, b, c, the collective's join, d, the final tasks' join (b, c, d), update; then
  // the collective.
  ASSERT_EQ(g.num_tasks(), 15u);
  uint32_t comm = 0;
  for (uint32_t t = 0; t < g.num_tasks(); ++t)
    if (g.task(t).kind == TaskKind::comm) comm = t;
  EXPECT_EQ(g.task(comm).worker, -1);
  EXPECT_DOUBLE_EQ(g.task(comm).bytes, 1 << 20);
  for (uint32_t base : {0u, 7u}) {
    EXPECT_EQ(g.task(base + 1).kind, TaskKind::bwd);
    EXPECT_DOUBLE_EQ(g.task(base + 3).duration_s, 0.0);  // the join
    auto succ = [&](uint32_t t) { return g.successors(t); };
    EXPECT_EQ(succ(base), (std::vector<uint32_t>{base + 1, base + 2}));
    EXPECT_EQ(succ(base + 1), (std::vector<uint32_t>{base + 3, base + 5}));
    EXPECT_EQ(succ(base + 3), std::vector<uint32_t>{comm});
    // d waits for the collective; the update waits for every final task through the join.
    const auto after_comm = succ(comm);
    EXPECT_NE(std::find(after_comm.begin(), after_comm.end(), base + 4), after_comm.end());
    EXPECT_EQ(succ(base + 4), std::vector<uint32_t>{base + 5});
    EXPECT_EQ(succ(base + 5), std::vector<uint32_t>{base + 6});
    EXPECT_EQ(g.task(base + 6).kind, TaskKind::update);
  }
  // Iteration 1's entry (task a) waits for iteration 0's update on the same rank.
  ASSERT_EQ(f.cross.size(), 2u);
  EXPECT_EQ(f.cross[0].from, 6u);
  EXPECT_EQ(f.cross[0].to, 0u);
  fs::remove_all(dir);
}

TEST(ChakraImport, TraceFormatChakraIsOneStepOverTheCriticalPath) {
  MeasuredTrace t = import_measured(src("tests/data/chakra/pipe.1.et"));
  EXPECT_EQ(t.format, "chakra");
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(t.steps[0].compute_s, 15e-3);
  EXPECT_DOUBLE_EQ(t.steps[0].time_s, 15e-3);
  ASSERT_EQ(t.collectives.size(), 3u);
  EXPECT_EQ(t.collectives[0].name, "recv");
  EXPECT_EQ(t.collectives[2].name, "allreduce");
  EXPECT_DOUBLE_EQ(t.collectives[2].bytes, 4e6);
}
