// Importers of measured traces and logs (sim/trace): malformed inputs give InputErrors naming
// the file and what was expected; the real files of data/validation parse to the known
// numbers; validation cases load and derive their scenarios.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/trace/bcaffe.hpp"
#include "sim/trace/import.hpp"
#include "sim/trace/kineto.hpp"
#include "sim/trace/kineto_layers.hpp"
#include "sim/trace/nccl_tests.hpp"
#include "sim/trace/pipedream.hpp"
#include "sim/trace/sgdsim_timeline.hpp"
#include "sim/trace/trace_events.hpp"
#include "sim/trace/validation.hpp"
#include "sim/workload/profile.hpp"

using namespace sgdsim;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kValidation = SGDSIM_SOURCE_DIR "/data/validation/";
const std::string kHta = kValidation + "hta/nccl_parser_config/nccl_data.json.gz";
const std::string kBcaffe = kValidation + "bcaffe-googlenet/";

/// A temporary file holding `content` (removed at the end of the test).
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content) {
    path_ = fs::temp_directory_path() /
            ("sgdsim-trace-test-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string gzip(const std::string& text) {
  uLongf cap = compressBound(static_cast<uLong>(text.size())) + 32;
  std::string out(cap, '\0');
  z_stream zs{};
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// The InputError message of importing `content` as a trace ("" if none was thrown).
std::string trace_error(const std::string& name, const std::string& content) {
  TempFile f(name, content);
  try {
    read_kineto_trace(f.path());
  } catch (const InputError& e) {
    std::string msg = e.what();
    // Replace the temporary path by the bare name for stable expectations.
    auto pos = msg.find(f.path());
    if (pos != std::string::npos) msg.replace(pos, f.path().size(), name);
    return msg;
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Malformed Chrome traces

TEST(TraceMalformed, EmptyFile) {
  EXPECT_EQ(trace_error("empty.json", ""),
            "empty.json: empty file: expected a Chrome trace (a JSON object with "
            "\"traceEvents\", or an array of events)");
}

TEST(TraceMalformed, TruncatedJson) {
  std::string e = trace_error("cut.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1)");
  EXPECT_EQ(e.rfind("cut.json: malformed JSON: parse error at line 1", 0), 0u) << e;
}

TEST(TraceMalformed, WrongTypes) {
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": "abc"}]})"),
            "t.json: /traceEvents/0/ts: expected a number, got \"abc\"");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "M", "name": "m"}, )"
                                  R"({"ph": "X", "name": "a", "ts": 1, "dur": [1]}]})"),
            "t.json: /traceEvents/1/dur: expected a number, got an array");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": {"ph": "X"}})"),
            "t.json: /traceEvents: expected an array of trace events, got an object");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [5]})"),
            "t.json: /traceEvents/0: expected an event object, got 5");
  EXPECT_EQ(trace_error("t.json", R"([{"ph": "X", "name": "a", "ts": 1, "dur": -2}])"),
            "t.json: /0/dur: expected a duration >= 0, got -2");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, )"
                                  R"("args": {"In msg nelems": "many"}}]})"),
            "t.json: /traceEvents/0/args/In msg nelems: expected a number, got \"many\"");
  EXPECT_EQ(trace_error("t.json", "42"),
            "t.json: /: expected a Chrome trace (a JSON object with \"traceEvents\", or an array "
            "of events), got 42");
}

TEST(TraceMalformed, MissingFields) {
  EXPECT_EQ(trace_error("t.json", R"({"schemaVersion": 1})"),
            "t.json: expected a Chrome trace: a JSON object with a \"traceEvents\" array (or an "
            "array of events), found no \"traceEvents\"");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"name": "a", "ts": 1}]})"),
            "t.json: /traceEvents/0: expected a \"ph\" (phase) string in every event");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "X", "name": "a", "dur": 1}]})"),
            "t.json: /traceEvents/0: expected a \"ts\" (number) in every \"X\" event");
}

TEST(TraceMalformed, GzipGarbageAndTruncation) {
  std::string garbage = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-not-deflate-data";
  std::string e = trace_error("bad.json.gz", garbage);
  EXPECT_EQ(e.rfind("bad.json.gz: ", 0), 0u) << e;
  EXPECT_NE(e.find("gzip data"), std::string::npos) << e;

  std::string doc = R"({"traceEvents": [)";
  for (int i = 0; i < 2000; ++i)
    doc += (i ? "," : "") + std::string(R"({"ph": "X", "name": "k", "ts": )") + std::to_string(i) +
           R"(, "dur": 1})";
  doc += "]}";
  std::string gz = gzip(doc);
  e = trace_error("cut.json.gz", gz.substr(0, gz.size() / 2));
  EXPECT_EQ(e.rfind("cut.json.gz: ", 0), 0u) << e;
  EXPECT_TRUE(e.find("gzip data") != std::string::npos ||
              e.find("malformed JSON") != std::string::npos)
      << e;
  // The whole file reads fine.
  TempFile ok("ok.json.gz", gz);
  TraceEventFile ev = read_trace_events(ok.path());
  EXPECT_EQ(ev.events.size(), 2000u);
}

TEST(TraceMalformed, MissingFileAndUnknownFormat) {
  EXPECT_THROW(read_kineto_trace("/nonexistent/trace.json"), InputError);
  TempFile f("notes.txt", "hello world\nthis is not a trace\n");
  try {
    import_measured(f.path());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot tell the format"), std::string::npos) << e.what();
  }
  TempFile empty("empty.log", "");
  EXPECT_THROW(import_measured(empty.path()), InputError);
}

TEST(TraceMalformed, SgdsimFormatOnAKinetoTrace) {
  ImportOptions o;
  o.format = "sgdsim";
  try {
    import_measured(kHta, o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/otherData/time_unit: expected an sgdsim timeline"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------
// Small well-formed traces

TEST(Kineto, StepsKernelsAndLaunchMatching) {
  const std::string doc = R"J({"schemaVersion": 1,
    "distributedInfo": {"rank": 1, "world_size": 4},
    "traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
      {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddBackward0", "pid": 1, "tid": 2, "ts": 1400, "dur": 10},
      {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 1500, "dur": 5,
       "args": {"Collective name": "allreduce", "In msg nelems": 1000, "dtype": "Float", "Group size": 4}},
      {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 1, "tid": 2, "ts": 1600, "dur": 50},
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1100, "dur": 200},
      {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 7, "ts": 1250, "dur": 100},
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1800, "dur": 50},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 1510, "dur": 300},
      {"ph": "f", "cat": "ac2g", "name": "flow", "pid": 0, "tid": 9, "ts": 1510},
      {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 5000, "dur": 1}
    ]
})J";
  TempFile f("small.json", doc);
  MeasuredTrace t = read_kineto_trace(f.path());
  EXPECT_EQ(t.format, "kineto");
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 4);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].step, 7);
  EXPECT_NEAR(t.steps[0].time_s, 1e-3, 1e-15);
  EXPECT_NEAR(t.steps[0].compute_s, 300e-6, 1e-15);  // [1100,1350) U [1800,1850)
  EXPECT_NEAR(t.steps[0].comm_s, 300e-6, 1e-15);
  EXPECT_NEAR(t.steps[0].backward_start_s, 400e-6, 1e-15);
  EXPECT_NEAR(t.steps[0].backward_end_s, 650e-6, 1e-15);
  ASSERT_EQ(t.collectives.size(), 1u);
  const auto& c = t.collectives[0];
  EXPECT_EQ(c.name, "allreduce");
  EXPECT_DOUBLE_EQ(c.bytes, 4000);  // from the CPU launch: the kernel has no args
  EXPECT_EQ(c.group_size, 4);
  EXPECT_NEAR(c.launch_s, 500e-6, 1e-15);
  EXPECT_NEAR(c.start_s, 510e-6, 1e-15);

  DdpProfile d = ddp_profile_from_trace(t);
  ASSERT_EQ(d.profile.layers.size(), 2u);
  EXPECT_NEAR(d.forward_s, 400e-6, 1e-15);
  EXPECT_EQ(d.profile.layers[1].parameters, 1000);
  EXPECT_NEAR(d.profile.layers[1].backward_s, 100e-6, 1e-15);  // launch - first backward op
  EXPECT_NEAR(d.profile.layers[0].backward_s, 150e-6, 1e-15);  // backward after the launch
  EXPECT_NEAR(d.update_s, 1000e-6 - 810e-6, 1e-15);            // step end - allreduce end
}

TEST(Kineto, ChromeArrayFormWithoutSteps) {
  TempFile f(
      "array.json",
      R"J([{"ph": "X", "name": "ncclKernel_Broadcast_RING_LL(x)", "cat": "kernel", "ts": 5, "dur": 2, "pid": "GPU", "tid": "s"}])J");
  MeasuredTrace t = read_kineto_trace(f.path());
  EXPECT_EQ(t.format, "chrome");
  EXPECT_TRUE(t.steps.empty());
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_EQ(t.collectives[0].name, "broadcast");
  EXPECT_TRUE(std::isnan(t.collectives[0].bytes));
  EXPECT_THROW(ddp_profile_from_trace(t), InputError);
}

// ---------------------------------------------------------------------------------------
// Per-layer profiles from the autograd structure (sim/trace/kineto_layers)

const std::string kLayersFixture = SGDSIM_SOURCE_DIR "/tests/data/kineto/ddp-two-layers.json";

/// `text` with every `from` replaced by `to`.
std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t at = 0;
  for (size_t hit; (hit = text.find(from, at)) != std::string::npos; at = hit + from.size())
    out += text.substr(at, hit - at) + to;
  return out + text.substr(at);
}

TEST(TraceEvents, KeepsSequenceCorrelationAndLaunchDimensions) {
  TraceEventFile ev = read_trace_events(kLayersFixture);
  int seen = 0;
  for (const auto& e : ev.events) {
    const std::string& name = ev.str(e.name);
    if (name == "aten::cudnn_convolution") {
      EXPECT_EQ(e.sequence, 10);
      ++seen;
    } else if (name == "conv_fwd") {
      EXPECT_EQ(e.correlation, 1);
      EXPECT_DOUBLE_EQ(e.threads, 64.0 * 256);
      ++seen;
    } else if (name == "gemm") {
      EXPECT_DOUBLE_EQ(e.threads, -1);  // no grid/block
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(ev.other_events, 2u);  // the fwdbwd flow's two ends
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, )"
                                  R"("args": {"grid": [1, "x", 1]}}]})"),
            "t.json: /traceEvents/0/args/grid/1: expected a number, got \"x\"");
  EXPECT_EQ(trace_error("t.json", R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, )"
                                  R"("args": {"block": [-3]}}]})"),
            "t.json: /traceEvents/0/args/block/0: expected a launch dimension in [0, "
            "2147483647], got -3");
}

TEST(KinetoLayers, GroupsForwardAndBackwardOpsIntoLayers) {
  TraceEventFile ev = read_trace_events(kLayersFixture);
  MeasuredTrace t = kineto_trace(ev);
  std::string why;
  auto d = layer_profile_from_trace(ev, t, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->per_layer);
  EXPECT_EQ(d->steps_used, 1);
  const auto& L = d->profile.layers;
  ASSERT_EQ(L.size(), 3u);  // prelude, conv2d (+ the ReLU after it), linear
  EXPECT_EQ(L[1].name.rfind("1 aten::conv2d", 0), 0u) << L[1].name;
  EXPECT_EQ(L[2].name.rfind("2 aten::linear", 0), 0u) << L[2].name;
  // Parameters: the 12000-byte bucket split by the gradient kernels' threads 256 : 128 : 384
  // (linear's AccumulateGrad ran first, then conv's two).
  EXPECT_EQ(L[0].parameters, 0);
  EXPECT_EQ(L[1].parameters, 2000);
  EXPECT_EQ(L[2].parameters, 1000);
  ASSERT_EQ(d->bucket_bytes.size(), 1u);
  EXPECT_DOUBLE_EQ(d->bucket_bytes[0], 12000);
  // Forward: prelude [1000,1100); conv's span ends at 1300 but its kernel at 1340; linear's
  // span ends at the first backward op (1500).
  EXPECT_NEAR(L[0].forward_s, 100e-6, 1e-12);
  EXPECT_NEAR(L[1].forward_s, 240e-6, 1e-12);
  EXPECT_NEAR(L[2].forward_s, 160e-6, 1e-12);
  // Backward: linear's run [1500,1700); conv's layer gets the ReLU backward [1700,1800) and its
  // own run up to its last gradient kernel (2125), past the CPU's end of the pass (2020).
  EXPECT_NEAR(L[0].backward_s, 0, 1e-12);
  EXPECT_NEAR(L[2].backward_s, 200e-6, 1e-12);
  EXPECT_NEAR(L[1].backward_s, 425e-6, 1e-12);
  EXPECT_NE(L[1].name.find("GPU: forward 0.200 ms, backward 0.305 ms"), std::string::npos)
      << L[1].name;
  EXPECT_NEAR(d->forward_s, 500e-6, 1e-12);
  EXPECT_NEAR(d->gpu_s, (200 + 305 + 20 + 55) * 1e-6, 1e-12);
  EXPECT_NEAR(d->update_s, 2000e-6 - 1450e-6, 1e-12);  // step end - allreduce end
  // A valid profile.
  Profile p = parse_profile(json::parse(profile_json_text(d->profile, d->notes)), "layers", "");
  EXPECT_EQ(p.total_parameters(), 3000);
}

TEST(KinetoLayers, FallsBackToBucketsWithoutTheAutogradStructure) {
  std::ifstream in(kLayersFixture);
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  doc = replace_all(doc, "Sequence number", "Other arg");
  TempFile f("no-seq.json", doc);
  TraceEventFile ev = read_trace_events(f.path());
  MeasuredTrace t = kineto_trace(ev);
  std::string why;
  EXPECT_FALSE(layer_profile_from_trace(ev, t, &why));
  EXPECT_EQ(why, "step 3: no forward ops with a \"Sequence number\"");
  DdpProfile d = profile_from_trace(ev, t);
  EXPECT_FALSE(d.per_layer);
  ASSERT_EQ(d.profile.layers.size(), 2u);  // forward pass + one bucket
  EXPECT_EQ(d.profile.layers[1].parameters, 3000);
  EXPECT_NEAR(d.profile.layers[1].backward_s, 500e-6, 1e-12);  // launch - first backward op
  EXPECT_NE(d.notes.find("No per-layer profile: step 3: no forward ops"), std::string::npos);
  // Neither path: no allreduce of known size.
  doc = replace_all(doc, "In msg nelems", "x");
  TempFile g("no-size.json", doc);
  TraceEventFile ev2 = read_trace_events(g.path());
  try {
    profile_from_trace(ev2, kineto_trace(ev2));
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no per-layer profile either"), std::string::npos)
        << e.what();
  }
}

TEST(KinetoLayers, HtaTracesGiveTheResNet50Layers) {
  for (const std::string& file :
       {kHta,
        kValidation + "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"}) {
    TraceEventFile ev = read_trace_events(file);
    MeasuredTrace t = kineto_trace(ev);
    DdpProfile d = profile_from_trace(ev, t);
    ASSERT_TRUE(d.per_layer) << d.notes;
    const auto& L = d.profile.layers;
    // 53 convolutions, 53 batch norms and the fc layer, after the prelude.
    ASSERT_EQ(L.size(), 108u);
    int convs = 0, norms = 0;
    for (const auto& l : L) {
      convs += l.name.find(" aten::conv2d ") != std::string::npos;
      norms += l.name.find(" aten::batch_norm ") != std::string::npos;
    }
    EXPECT_EQ(convs, 53);
    EXPECT_EQ(norms, 53);
    EXPECT_EQ(L[1].parameters, 9408);       // conv1: 64 x 3 x 7 x 7, from DDP's copy-back bytes
    EXPECT_EQ(L[2].parameters, 128);        // bn1: weight and bias of 64 channels
    EXPECT_EQ(L[107].parameters, 2049000);  // fc: 2048 x 1000 + 1000
    EXPECT_EQ(d.profile.total_parameters(), 25557032);
    EXPECT_NE(d.notes.find("copy_bucket_to_grad"), std::string::npos);
  }
  // The 2 x A100 trace is CPU-bound: the layers add up to its forward and backward passes as
  // the bucket profile measures them (step start to the backward pass's end, ~189.7 ms).
  TraceEventFile ev = read_trace_events(kHta);
  MeasuredTrace t = kineto_trace(ev);
  DdpProfile d = profile_from_trace(ev, t);
  DdpProfile b = ddp_profile_from_trace(t);
  double layers = 0, buckets = 0;
  for (const auto& l : d.profile.layers) layers += l.forward_s + l.backward_s;
  for (const auto& l : b.profile.layers) buckets += l.forward_s + l.backward_s;
  EXPECT_NEAR(layers, buckets, 1e-3);
  EXPECT_NEAR(d.update_s, b.update_s, 1e-4);
  EXPECT_LT(d.gpu_s, 0.25 * layers);
}

TEST(NcclTests, ParsesBothColumnLayouts) {
  const std::string log =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: "
      "20\n"
      "#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid   6899 on node1 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   6900 on node2 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#\n# Collective test starting: all_reduce_perf\n"
      "#                                                              out-of-place                 "
      "      in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    10.84    0.00    0.00      0    "
      "10.42    0.00    0.00      0\n"
      "   134217728      33554432     float     sum      -1   1290.5  104.01  104.01    N/A   "
      "1288.1  104.20  104.20    N/A\n"
      "node1:6899:6899 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Destroy COMPLETE\n"
      "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 52.005 \n";
  std::istringstream in(log);
  NcclTestsLog l = parse_nccl_tests_log(in, "nccl.log");
  EXPECT_EQ(l.ranks, 2);
  EXPECT_EQ(l.collective, "allreduce");
  EXPECT_TRUE(l.collective_from_log);
  EXPECT_EQ(l.device, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(l.avg_busbw_GBps, 52.005);
  ASSERT_EQ(l.points.size(), 2u);
  EXPECT_DOUBLE_EQ(l.points[1].size_bytes, 134217728);
  EXPECT_DOUBLE_EQ(l.points[1].time_s, 1290.5e-6);
  EXPECT_DOUBLE_EQ(l.points[1].in_place_time_s, 1288.1e-6);
  EXPECT_DOUBLE_EQ(l.points[1].busbw_GBps, 104.01);
  // Older nccl-tests: no root column; ranks from the caller.
  std::istringstream old(
      "    1048576  262144  float  sum  55.1  19.03  28.55  0  54.9  19.10  28.65  0\n");
  NcclTestsLog o = parse_nccl_tests_log(old, "old.log", 8);
  EXPECT_EQ(o.ranks, 8);
  EXPECT_FALSE(o.collective_from_log);
  EXPECT_DOUBLE_EQ(o.points[0].time_s, 55.1e-6);
  MeasuredTrace t = nccl_tests_trace(o);
  EXPECT_EQ(t.collectives.size(), 1u);
}

TEST(NcclTests, MalformedLines) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      parse_nccl_tests_log(in, "n.log");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("8 2 float sum -1 10.84 0.00\n")
                .rfind("n.log: line 1: expected an nccl-tests data line", 0),
            0u);
  EXPECT_NE(error("8 2 float sum -1 x 0 0 0 1 0 0 0\n").find("out-of-place time"),
            std::string::npos);
  EXPECT_EQ(error("# only a header\n"),
            "n.log: no measurements: expected nccl-tests data lines \"size count type redop "
            "[root] time algbw busbw #wrong time algbw busbw #wrong\"");
}

TEST(Bcaffe, MalformedLogs) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      parse_bcaffe_log(in, "b.log");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string p = "I0214 23:25:29.141575 37187 distributed.cpp:112] ";
  EXPECT_EQ(error(p + "[0, 9408, 14690.2, 298]\n" + p + "[1, 64, abc, 106]\n"),
            "b.log: line 2: expected a blob line ending in \"[param_id, size_elements, "
            "compute_us, allreduce_us(, merged_us)]\", got \"" +
                p + "[1, 64, abc, 106]\"");
  EXPECT_EQ(error(p + "[0, 9408, 14690.2, 298]\n" + p + "[2, 64, 1, 106]\n"),
            "b.log: line 2: expected blob 1 (the block starting at line 1 must number its blobs "
            "0, 1, 2, ...), got blob 2");
  EXPECT_EQ(error(p + "[0, 9408, 14690.2, 298]\n"),
            "b.log: line 1: expected an even number of blobs (a weight and a bias blob per "
            "layer), got 1");
  EXPECT_EQ(error("just text\n").rfind("b.log: no blob lines", 0), 0u);
}

TEST(PipeDream, MalformedGraphs) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      Profile p = pipedream_profile(parse_pipedream_graph(in, "g.txt"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string node =
      "node2 -- Conv2d(3, 8) -- forward_compute_time=1.5, backward_compute_time=2.0, "
      "activation_size=100.0, parameter_size=32.000\n";
  EXPECT_EQ(error(node + "\tnode2 -- node9\n"), "g.txt: an edge refers to undefined node node9");
  EXPECT_EQ(error(node + "garbage line\n").rfind("g.txt: line 2: expected a node line", 0), 0u);
  EXPECT_EQ(error(node),
            "g.txt: cannot derive the batch size (no Linear layer): give it (--batch-size N)");
  std::istringstream in(node);
  Profile p = pipedream_profile(parse_pipedream_graph(in, "g.txt"), 16);
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.batch_size, 16);
  EXPECT_EQ(p.layers[0].parameters, 8);
}

// ---------------------------------------------------------------------------------------
// The real files of data/validation

// Its import time (target < 1 s) is a row of make bench, not an assertion here: a loaded
// machine made a timed assertion fail on correct code.
TEST(TraceRealFiles, HtaNcclTraceTwoA100) {
  MeasuredTrace t = import_measured(kHta);
  EXPECT_EQ(t.format, "kineto");
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.device, "NVIDIA A100-PG509-200");
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].step, 4);
  EXPECT_EQ(t.steps[2].step, 6);
  EXPECT_NEAR(t.steps[0].time_s, 222.442191e-3, 1e-9);
  EXPECT_NEAR(t.steps[1].time_s, 219.726905e-3, 1e-9);
  EXPECT_NEAR(t.steps[2].time_s, 224.936243e-3, 1e-9);
  EXPECT_NEAR(t.steps[0].compute_s, 39.392e-3, 1e-5);
  int allreduces = 0, broadcasts = 0;
  std::map<int64_t, double> bytes_per_step;
  for (const auto& c : t.collectives) {
    if (c.name == "allreduce") {
      ++allreduces;
      EXPECT_EQ(c.group_size, 2);
      bytes_per_step[c.step] += c.bytes;
    }
    broadcasts += c.name == "broadcast";
  }
  EXPECT_EQ(allreduces, 15);
  EXPECT_EQ(broadcasts, 6);
  for (const auto& [step, bytes] : bytes_per_step) EXPECT_DOUBLE_EQ(bytes, 25557032.0 * 4);

  DdpProfile d = ddp_profile_from_trace(t);
  EXPECT_EQ(d.steps_used, 3);
  EXPECT_EQ(d.bucket_bytes.size(), 5u);
  EXPECT_DOUBLE_EQ(d.bucket_bytes[0], 2049000.0 * 4);  // the fc layer's bucket goes first
  EXPECT_EQ(d.profile.total_parameters(), 25557032);
  EXPECT_NEAR(d.forward_s, 105.0e-3, 1e-3);
  EXPECT_GT(d.update_s, 20e-3);
  EXPECT_LT(d.update_s, 35e-3);
  double bwd = 0;
  for (const auto& l : d.profile.layers) bwd += l.backward_s;
  EXPECT_NEAR(d.forward_s + bwd, 187.8e-3, 1e-3);  // last bucket launch
  // The profile text is a valid sgdsim profile.
  Profile p = parse_profile(json::parse(profile_json_text(d.profile, d.notes)), "ddp", "");
  EXPECT_EQ(p.layers.size(), 6u);
}

TEST(TraceRealFiles, HtaSingleGpuAndSampledRanks) {
  MeasuredTrace one = import_measured(
      kValidation + "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  EXPECT_EQ(one.world_size, 1);
  EXPECT_EQ(one.device, "Tesla V100-SXM2-32GB");
  ASSERT_EQ(one.steps.size(), 5u);
  EXPECT_NEAR(one.steps[4].time_s, 95.699037e-3, 1e-9);
  EXPECT_TRUE(one.collectives.empty());
  for (int r : {0, 1}) {
    MeasuredTrace t = import_measured(kValidation + "hta/trace_filter/sampled_rank-" +
                                      std::to_string(r) + ".json.gz");
    EXPECT_EQ(t.rank, r);
    EXPECT_EQ(t.world_size, 128);
    EXPECT_EQ(t.steps.size(), 2u);
    EXPECT_FALSE(t.collectives.empty());
  }
}

TEST(TraceRealFiles, BcaffeLogsAndProfile) {
  struct Expect {
    int nodes;
    size_t groups;
    double comm_ms;
  };
  for (const Expect& x :
       {Expect{2, 128, 153.993}, Expect{4, 128, 261.512}, Expect{8, 65, 310.738}}) {
    const std::string file = kBcaffe + "tmp" + std::to_string(x.nodes) + "comm.log";
    ImportOptions o;
    o.values.set("ranks", {static_cast<double>(x.nodes), ""});
    MeasuredTrace t = import_measured(file, o);
    EXPECT_EQ(t.format, "bcaffe");
    EXPECT_EQ(t.world_size, x.nodes);
    EXPECT_EQ(t.collectives.size(), x.groups) << file;
    ASSERT_EQ(t.steps.size(), 1u);
    EXPECT_NEAR(t.steps[0].comm_s, x.comm_ms * 1e-3, 1e-9) << file;
    EXPECT_GT(t.steps[0].compute_s, 0.199);
    EXPECT_LT(t.steps[0].compute_s, 0.207);
    double bytes = 0;
    for (const auto& c : t.collectives) bytes += c.bytes;
    EXPECT_DOUBLE_EQ(bytes, 13379136.0 * 4);  // every blob exactly once (padded sizes)
  }
  BcaffeLog two = read_bcaffe_log(kBcaffe + "tmp2comm.log", 2);
  EXPECT_EQ(two.blocks, 2);  // a warm-up block of zeros, then the measured one
  // Same profile as experiments/mgwfbp/bcaffe_profile.py.
  Profile p = bcaffe_profile(two);
  EXPECT_EQ(p.name, "googlenet-bcaffe");
  ASSERT_EQ(p.layers.size(), 64u);
  EXPECT_EQ(p.layers[0].name, "layer0 (blobs 0,1)");
  EXPECT_EQ(p.layers[0].parameters, 9408 + 64);
  EXPECT_NEAR(p.layers[0].backward_s, 14.6902e-3, 1e-12);
  EXPECT_EQ(p.layers[63].parameters, 1024000 + 1024);
  // Group profile: 8-node layout (one allreduce per layer), 2-node backward times.
  BcaffeLog eight = read_bcaffe_log(kBcaffe + "tmp8comm.log", 8);
  Profile g = bcaffe_group_profile(two, eight);
  EXPECT_EQ(g.layers.size(), 65u);
  double bwd_two = 0, bwd_g = 0;
  for (const auto& l : p.layers) bwd_two += l.backward_s;
  for (const auto& l : g.layers) bwd_g += l.backward_s;
  EXPECT_NEAR(bwd_g, bwd_two, 1e-9);
  EXPECT_EQ(g.total_parameters(), p.total_parameters());
}

TEST(TraceRealFiles, OsuLogsDetectedAndRead) {
  for (int n : {2, 4, 8}) {
    const std::string file = kBcaffe + "allreduce" + std::to_string(n) + ".log";
    EXPECT_EQ(detect_format(file), "osu");
    MeasuredTrace t = import_measured(file);
    EXPECT_EQ(t.collectives.size(), 266u);
    EXPECT_EQ(t.world_size, n == 4 ? 0 : n);  // allreduce4.log has no nodes column
  }
  EXPECT_EQ(detect_format(kBcaffe + "tmp4comm.log"), "bcaffe");
  EXPECT_EQ(detect_format(kHta), "kineto");
  EXPECT_EQ(detect_format(kValidation + "pipedream-profiles/vgg16/graph.txt"), "pipedream");
}

TEST(TraceRealFiles, PipeDreamMatchesShippedProfiles) {
  for (const std::string model : {"resnet50", "vgg16", "alexnet", "inception_v3"}) {
    Profile mine = pipedream_profile(
        read_pipedream_graph(kValidation + "pipedream-profiles/" + model + "/graph.txt"));
    Profile shipped = load_profile(SGDSIM_SOURCE_DIR "/models/profiles/" + model + ".json");
    EXPECT_EQ(mine.name, model);
    EXPECT_EQ(mine.batch_size, shipped.batch_size) << model;
    ASSERT_EQ(mine.layers.size(), shipped.layers.size()) << model;
    for (size_t i = 0; i < mine.layers.size(); ++i) {
      EXPECT_EQ(mine.layers[i].name, shipped.layers[i].name) << model << " " << i;
      EXPECT_EQ(mine.layers[i].parameters, shipped.layers[i].parameters) << model << " " << i;
      EXPECT_DOUBLE_EQ(mine.layers[i].forward_s, shipped.layers[i].forward_s) << model << " " << i;
      EXPECT_DOUBLE_EQ(mine.layers[i].backward_s, shipped.layers[i].backward_s)
          << model << " " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------
// sgdsim's own timeline

TEST(SgdsimTimeline, IterationsAsSummaryCountsThem) {
  // Two workers, three iterations; iteration 2 is unfinished on worker 1.
  std::string doc =
      R"({"displayTimeUnit":"ms","otherData":{"scenario":"t","time_unit":"us of simulated time"},"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"worker 0"}},
{"ph":"M","name":"process_name","pid":1,"args":{"name":"worker 1"}},
{"name":"fwd","cat":"compute","ph":"X","pid":0,"tid":0,"ts":0.000,"dur":10.000,"args":{"iteration":0}},
{"name":"fwd","cat":"compute","ph":"X","pid":1,"tid":0,"ts":0.000,"dur":12.000,"args":{"iteration":0}},
{"name":"comm[0]","cat":"communication","ph":"X","pid":0,"tid":1,"ts":12.000,"dur":5.000,"args":{"iteration":0,"bucket":0,"bytes":400.0}},
{"name":"comm[0]","cat":"communication","ph":"X","pid":1,"tid":1,"ts":12.000,"dur":5.000,"args":{"iteration":0,"bucket":0,"bytes":400.0}},
{"name":"update","cat":"compute","ph":"X","pid":0,"tid":0,"ts":17.000,"dur":1.000,"args":{"iteration":0}},
{"name":"update","cat":"compute","ph":"X","pid":1,"tid":0,"ts":17.000,"dur":2.000,"args":{"iteration":0}},
{"name":"fwd","cat":"compute","ph":"X","pid":0,"tid":0,"ts":19.000,"dur":10.000,"args":{"iteration":1}},
{"name":"update","cat":"compute","ph":"X","pid":0,"tid":0,"ts":30.000,"dur":1.000,"args":{"iteration":1}},
{"name":"update","cat":"compute","ph":"X","pid":1,"tid":0,"ts":33.000,"dur":1.000,"args":{"iteration":1}},
{"name":"update","cat":"compute","ph":"X","pid":0,"tid":0,"ts":40.000,"dur":1.000,"args":{"iteration":2}}
]}
)";
  TempFile f("timeline.json", doc);
  MeasuredTrace t = import_measured(f.path());
  EXPECT_EQ(t.format, "sgdsim");
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_NEAR(t.steps[0].time_s, 19e-6, 1e-15);
  EXPECT_NEAR(t.steps[1].time_s, 15e-6, 1e-15);
  EXPECT_NEAR(t.steps[0].compute_s, 11e-6, 1e-15);
  EXPECT_NEAR(t.steps[0].comm_s, 5e-6, 1e-15);
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(t.collectives[0].bytes, 400);
  ImportOptions skip;
  skip.values.set("skip", {1, ""});
  EXPECT_NEAR(trace_stats(import_measured(f.path(), skip)).step_mean_s, 15e-6, 1e-15);
}

// ---------------------------------------------------------------------------------------
// Validation cases

TEST(ValidationCase, ShippedCasesLoadAndDeriveScenarios) {
  const std::string dir = SGDSIM_SOURCE_DIR "/experiments/validation/";
  ValidationCase b = load_validation_case(dir + "bcaffe-googlenet.json");
  EXPECT_EQ(b.kind, CaseKind::per_layer);
  ASSERT_EQ(b.targets.size(), 3u);
  CaseCalibration cal = calibrate_case(b);
  EXPECT_EQ(cal.network.ranks, 2);
  EXPECT_EQ(cal.network.points, 128u);
  EXPECT_GT(cal.network.alpha_s, 0);
  PreparedTarget t8 = prepare_target(b, cal, b.targets[2]);
  EXPECT_FALSE(t8.in_sample);
  EXPECT_TRUE(prepare_target(b, cal, b.targets[0]).in_sample);
  EXPECT_EQ(t8.ranks, 8);
  EXPECT_EQ(t8.bucket_measured.size(), 65u);
  EXPECT_EQ(t8.scenario["workers"]["count"], 8);
  EXPECT_EQ(t8.scenario["network_model"], "ideal");
  EXPECT_EQ(t8.scenario["scheme"]["overlap"], "none");
  Profile p = parse_profile(json::parse(t8.profile_text), "profile", "");
  EXPECT_EQ(p.layers.size(), 65u);

  ValidationCase h = load_validation_case(dir + "hta-resnet50-ddp.json");
  EXPECT_EQ(h.kind, CaseKind::trace);
  CaseCalibration hc = calibrate_case(h);
  EXPECT_GT(hc.update_s, 0);
  PreparedTarget ht = prepare_target(h, hc, h.targets[0]);
  EXPECT_EQ(ht.ranks, 2);
  EXPECT_EQ(ht.steps.size(), 3u);
  ASSERT_EQ(ht.bucket_measured.size(), 5u);
  for (const auto& b : ht.bucket_measured) EXPECT_EQ(b.size(), 3u);
  // The per-layer profile, whose layers DDP's default caps group into the measured buckets.
  EXPECT_EQ(json::parse(hc.profile_text)["layers"].size(), 108u);
  EXPECT_EQ(hc.buckets, 5u);
  EXPECT_EQ(ht.scenario["scheme"]["fusion_bytes"], 26214400);
  EXPECT_EQ(ht.scenario["scheme"]["first_bucket_bytes"], 1048576);

  ValidationCase o = load_validation_case(dir + "osu-allreduce.json");
  EXPECT_EQ(o.kind, CaseKind::latency);
  EXPECT_DOUBLE_EQ(o.min_bytes, 65536);
  CaseCalibration oc = calibrate_case(o);
  EXPECT_NEAR(oc.network.alpha_s, 47.32e-6, 0.01e-6);  // as `sgdsim calibrate osu` reports
  PreparedTarget o4 = prepare_target(o, oc, o.targets[1]);
  EXPECT_EQ(o4.ranks, 4);
  EXPECT_EQ(o4.bucket_measured.size(), 241u);
}

TEST(ValidationCase, MalformedCases) {
  auto error = [](const std::string& text) {
    TempFile f("case.json", text);
    try {
      load_validation_case(f.path());
    } catch (const InputError& e) {
      std::string msg = e.what();
      auto pos = msg.find(f.path());
      if (pos != std::string::npos) msg.replace(pos, f.path().size(), "case.json");
      return msg;
    }
    return std::string();
  };
  const std::string osu2 = kBcaffe + "allreduce2.log";
  EXPECT_EQ(error("{\"targets\": []}"),
            "case.json: /calibration: expected an object {\"file\", \"format\", \"ranks\"}, got "
            "nothing (the field is required)");
  EXPECT_EQ(error("{\"calibration\": {\"file\": \"" + osu2 + "\"}, \"targets\": []}")
                .rfind("case.json: /targets: expected a non-empty array", 0),
            0u);
  EXPECT_EQ(error("{\"calibration\": {\"file\": \"/nonexistent.log\"}, \"targets\": [{}]}")
                .rfind("case.json: /calibration/file: measured file not found", 0),
            0u);
  std::string e = error("{\"calibration\": {\"file\": \"" + osu2 +
                        "\"}, \"targets\": [{\"file\": \"" + osu2 + "\", \"format\": \"trace\"}]}");
  EXPECT_EQ(e.rfind("case.json: /targets/0/format: expected one of", 0), 0u) << e;
  e = error("{\"calibration\": {\"file\": \"" + kBcaffe + "tmp2comm.log\", \"ranks\": 2}, " +
            "\"targets\": [{\"file\": \"" + osu2 + "\"}]}");
  EXPECT_EQ(e,
            "case.json: /calibration/format: expected a latency benchmark (nccl-tests or osu) "
            "like the targets");
  e = error("{\"calibration\": {\"file\": \"" + osu2 + "\"}, \"targets\": [{\"file\": \"" + osu2 +
            "\"}], \"scenaro\": {}}");
  EXPECT_EQ(e.rfind("case.json: /scenaro: ", 0), 0u) << e;
}

TEST(ImportOptions, AFormatTakesTheOptionsItDeclaresAndRefusesOthers) {
  // skip is the trace formats' (kineto, chrome, sgdsim), ranks every format's: an OSU log
  // refuses skip by name, a Kineto trace takes both.
  const std::vector<Param> osu = import_params_of(importer_named("osu"));
  ASSERT_EQ(osu.size(), 1u);
  EXPECT_EQ(osu[0].key, "ranks");
  ImportOptions o;
  o.format = "osu";
  o.values.set("skip", {1, ""});
  try {
    import_measured(kBcaffe + "allreduce2.log", o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "usage: --skip: only for formats chrome, kineto, sgdsim, not \"osu\"");
  }
  ImportOptions k;
  k.values.set("skip", {1, ""});
  k.values.set("ranks", {2, ""});
  EXPECT_EQ(import_measured(kHta, k).warmup_steps, 1);
  // Every declared key is listed once, with the formats that declare it.
  int skips = 0;
  for (const DeclaredImportParam& d : import_params())
    if (d.param.key == "skip") {
      ++skips;
      EXPECT_EQ(d.formats, (std::vector<std::string>{"chrome", "kineto", "sgdsim"}));
    }
  EXPECT_EQ(skips, 1);
}
