// SMPI cross-check: `sgdsim collective` and SMPI (smpirun running a real MPI_Allreduce with
// SMPI's own implementation of the same algorithm, tests/smpi/) agree on the same platform file
// and network model. On the ideal model both are exact to the alpha-beta cost of their message
// schedule; the only modelled difference is SMPI's 16-byte envelope on every message (~1e-4).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;

namespace {

#ifdef SGDSIM_SMPI_TIMER
const char* const kTimer = SGDSIM_SMPI_TIMER;
#else
const char* const kTimer = "";
#endif
#ifdef SGDSIM_SMPI_RUNNER
const char* const kRunner = SGDSIM_SMPI_RUNNER;
#else
const char* const kRunner = SGDSIM_SOURCE_DIR "/tests/smpi/run_smpi_allreduce.sh";
#endif

}  // namespace

// Named, not anonymous: a TEST_P fixture derives from TestWithParam<Case>, and the
// test binaries compile in batches of files (GCC's -Wsubobject-linkage).
namespace smpi_test {
struct Case {
  const char* algorithm;  // sgdsim name; the runner maps it to SMPI's (lr, rab_rdb, rdb)
  int ranks;
  long long bytes;  // a multiple of 4 x ranks: whole MPI_FLOATs, equal chunks for lr
};
// gtest finds it by argument-dependent lookup, so beside the type.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algorithm << " P=" << c.ranks << " N=" << c.bytes;
}
}  // namespace smpi_test
using smpi_test::Case;

namespace {

/// A 64-node star (private 10 Gb/s, 5 us full-duplex link per host: contention-free rings),
/// written once per test process and removed at exit.
class StarPlatform {
 public:
  static const std::filesystem::path& path() {
    static StarPlatform p;
    return p.file_;
  }
  ~StarPlatform() { std::filesystem::remove_all(dir_); }

 private:
  StarPlatform() : dir_(temp_path("smpi-platform")), file_(dir_ / "star64.xml") {
    std::filesystem::create_directories(dir_);
    CliResult r = run_sgdsim({"platform", "--topology", "star", "--nodes", "64", "--node-bandwidth",
                              "10Gbps", "--node-latency", "5us", "--output", file_.string()});
    if (r.exit_code != 0) ADD_FAILURE() << "sgdsim platform failed: " << r.err;
  }
  std::filesystem::path dir_, file_;
};

struct ProgramResult {
  int exit_code = -1;
  std::string out, err;
};

/// Runs `args` (argv[0] a path) with extra environment variables, capturing its output.
ProgramResult run_program(const std::vector<std::string>& args,
                          const std::vector<std::pair<std::string, std::string>>& env) {
  auto dir = temp_path("smpi-io");
  std::filesystem::create_directories(dir);
  auto out_file = dir / "stdout", err_file = dir / "stderr";
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ProgramResult r;
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_file);
  r.err = slurp(err_file);
  std::filesystem::remove_all(dir);
  return r;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string p = path;
  for (size_t start = 0; start <= p.size();) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    auto candidate = std::filesystem::path(p.substr(start, end - start)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string size = c.bytes % (1 << 20) == 0 ? std::to_string(c.bytes >> 20) + "MiB"
                                              : std::to_string(c.bytes) + "B";
  return std::string(c.algorithm) + "_P" + std::to_string(c.ranks) + "_" + size;
}

}  // namespace

class SmpiCrossCheck : public ::testing::TestWithParam<Case> {};

TEST_P(SmpiCrossCheck, IdealModelAgreesWithin3Percent) {
  const Case& c = GetParam();
  if (std::string(kTimer).empty() || ::access(kTimer, X_OK) != 0)
    GTEST_SKIP() << "SMPI program not built (" << kTimer
                 << "): smpicxx missing? (Debian package libsimgrid-dev)";
  if (!on_path("smpirun")) GTEST_SKIP() << "smpirun not on PATH (Debian package libsimgrid-dev)";
  const std::string platform = StarPlatform::path().string();
  ASSERT_TRUE(std::filesystem::exists(platform));

  CliResult s = run_sgdsim({"collective", "--algorithm", c.algorithm, "--ranks",
                            std::to_string(c.ranks), "--bytes", std::to_string(c.bytes),
                            "--platform", platform, "--network-model", "ideal", "--json"});
  if (s.exit_code == 2 && s.err.find("--algorithm") != std::string::npos)
    GTEST_SKIP() << "sgdsim has no collective '" << c.algorithm << "' yet: " << s.err;
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const double sgdsim_s = json::parse(s.out).at("time_s").get<double>();

  // SMPI_OP=noop: a do-nothing commutative MPI_Op. The simulated time is the same as with
  // MPI_SUM (computation is not simulated), but the real reduction loops over 64 x 100 MB
  // (and rdb's 6.4 GB of written temporary buffers) are skipped.
  ProgramResult m = run_program({"/bin/bash", kRunner, c.algorithm, std::to_string(c.ranks),
                                 std::to_string(c.bytes), platform, "ideal"},
                                {{"SMPI_ALLREDUCE_TIMER", kTimer}, {"SMPI_OP", "noop"}});
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  const json j = json::parse(m.out);
  const double smpi_s = j.at("time_s").get<double>();
  EXPECT_EQ(j.at("ranks").get<int>(), c.ranks);
  EXPECT_EQ(j.at("bytes").get<long long>(), c.bytes);
  EXPECT_LT(j.at("start_skew_s").get<double>(), 1e-8) << "ranks must start together";

  ASSERT_GT(smpi_s, 0);
  const double rel = std::abs(sgdsim_s - smpi_s) / smpi_s;
  RecordProperty("sgdsim_s", std::to_string(sgdsim_s));
  RecordProperty("smpi_s", std::to_string(smpi_s));
  RecordProperty("smpi_wall_s", j.at("wall_s").dump());
  EXPECT_LE(rel, 0.03) << c.algorithm << " P=" << c.ranks << " N=" << c.bytes << ": sgdsim "
                       << sgdsim_s << " s, SMPI (" << j.at("smpi_algorithm") << ") " << smpi_s
                       << " s";
}

// The large size is 16 MiB at 64 ranks for halving-doubling and recursive doubling: SMPI's
// implementations receive into plain temporary buffers, so 64 ranks x 100 MiB meant 40 GB of
// real copies (169 s of test time); 16 MiB is as bandwidth-bound (13 ms against 30 us of
// latency) at a sixth of the cost.
INSTANTIATE_TEST_SUITE_P(Ideal, SmpiCrossCheck,
                         ::testing::Values(Case{"ring", 8, 1048576}, Case{"ring", 8, 104857600},
                                           Case{"ring", 64, 1048576}, Case{"ring", 64, 104857600},
                                           Case{"recursive_halving_doubling", 8, 1048576},
                                           Case{"recursive_halving_doubling", 8, 104857600},
                                           Case{"recursive_halving_doubling", 64, 1048576},
                                           Case{"recursive_halving_doubling", 64, 16777216},
                                           Case{"recursive_doubling", 8, 1048576},
                                           Case{"recursive_doubling", 8, 104857600},
                                           Case{"recursive_doubling", 64, 1048576},
                                           Case{"recursive_doubling", 64, 16777216}),
                         case_name);

// The benchmark's SMPI baseline runs an unmodified MPI program (plain malloc'd buffers, real
// MPI_SUM): only the wall time and memory may differ from shared-malloc, no-op runs.
TEST(SmpiCrossCheckBuffers, BuffersAndOperationLeaveTheSimulatedTimeUnchanged) {
  if (std::string(kTimer).empty() || ::access(kTimer, X_OK) != 0)
    GTEST_SKIP() << "SMPI program not built (" << kTimer << ")";
  if (!on_path("smpirun")) GTEST_SKIP() << "smpirun not on PATH (Debian package libsimgrid-dev)";
  const std::string platform = StarPlatform::path().string();
  double time_s[2] = {0, 0};
  const char* allocs[2] = {"malloc", "shared"};
  const char* ops[2] = {"sum", "noop"};
  for (int k = 0; k < 2; ++k) {
    ProgramResult m = run_program(
        {"/bin/bash", kRunner, "ring", "8", "1048576", platform, "ideal"},
        {{"SMPI_ALLREDUCE_TIMER", kTimer}, {"SMPI_OP", ops[k]}, {"SMPI_ALLOC", allocs[k]}});
    ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
    const json j = json::parse(m.out);
    EXPECT_EQ(j.at("alloc").get<std::string>(), allocs[k]);
    EXPECT_EQ(j.at("op").get<std::string>(), ops[k]);
    time_s[k] = j.at("time_s").get<double>();
  }
  EXPECT_GT(time_s[0], 0);
  EXPECT_DOUBLE_EQ(time_s[0], time_s[1]);
  ProgramResult bad = run_program({"/bin/bash", kRunner, "ring", "8", "1048576", platform, "ideal"},
                                  {{"SMPI_ALLREDUCE_TIMER", kTimer}, {"SMPI_ALLOC", "mmap"}});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("SMPI_ALLOC must be shared or malloc, got 'mmap'"), std::string::npos)
      << bad.err;
}

// MPI_Allgather and MPI_Reduce_scatter under SMPI (smpi/allgather ring and rdb,
// smpi/reduce_scatter ompi_ring and ompi_basic_recursivehalving) against `sgdsim collective
// --operation` on the same star.
class SmpiOperationCrossCheck
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, int>> {};

TEST_P(SmpiOperationCrossCheck, IdealModelAgreesWithin3Percent) {
  const auto [op, algorithm, ranks] = GetParam();
  if (std::string(kTimer).empty() || ::access(kTimer, X_OK) != 0)
    GTEST_SKIP() << "SMPI program not built (" << kTimer << ")";
  if (!on_path("smpirun")) GTEST_SKIP() << "smpirun not on PATH (Debian package libsimgrid-dev)";
  const std::string platform = StarPlatform::path().string();
  // 16 MiB at 64 ranks, as above: reduce_scatter's temporary buffers are real copies.
  for (long long bytes : {1048576LL, ranks == 64 ? 16777216LL : 104857600LL}) {
    CliResult s = run_sgdsim({"collective", "--algorithm", algorithm, "--operation", op, "--ranks",
                              std::to_string(ranks), "--bytes", std::to_string(bytes), "--platform",
                              platform, "--network-model", "ideal", "--json"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const double sgdsim_s = json::parse(s.out).at("time_s").get<double>();
    ProgramResult m = run_program(
        {"/bin/bash", kRunner, algorithm, std::to_string(ranks), std::to_string(bytes), platform,
         "ideal"},
        {{"SMPI_ALLREDUCE_TIMER", kTimer}, {"SMPI_OP", "noop"}, {"SMPI_COLLECTIVE", op}});
    ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
    const json j = json::parse(m.out);
    EXPECT_EQ(j.at("collective").get<std::string>(), op);
    const double smpi_s = j.at("time_s").get<double>();
    ASSERT_GT(smpi_s, 0);
    EXPECT_LE(std::abs(sgdsim_s - smpi_s) / smpi_s, 0.03)
        << op << " " << algorithm << " P=" << ranks << " N=" << bytes << ": sgdsim " << sgdsim_s
        << " s, SMPI (" << j.at("smpi_algorithm") << ") " << smpi_s << " s";
  }
}

INSTANTIATE_TEST_SUITE_P(Ideal, SmpiOperationCrossCheck,
                         ::testing::Combine(::testing::Values("allgather", "reduce_scatter"),
                                            ::testing::Values("ring", "recursive_halving_doubling"),
                                            ::testing::Values(8, 64)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_P" +
                                  std::to_string(std::get<2>(info.param));
                         });
