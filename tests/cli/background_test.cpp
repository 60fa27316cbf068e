// Other jobs' traffic in a training run (scenario "background"): on the ideal star every link
// carries at most one flow of the training's ring and one of each other job's, so the
// training's communication slows by at most the number of flows sharing a link and at least
// a little; another job that never overlaps the training's messages changes nothing; the run
// ends when the training ends, not when the other jobs' operation under way does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

using namespace sgdsim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// What a 3-iteration run on the ideal star with `sets` wrote: its summary and iterations.csv.
struct Outputs {
  json summary;
  std::string iterations_csv;
};

Outputs run_star(std::vector<std::string> sets) {
  sets.insert(sets.end(), {"iterations=3", "warmup_iterations=0", "output.timeline=false"});
  fs::path out;
  Outputs o;
  o.summary = run_on_ideal_star(sets, &out);
  o.iterations_csv = slurp(out / "iterations.csv");
  fs::remove_all(out);
  return o;
}

/// The largest end_s of iterations.csv: when the training's last iteration ended.
double last_end_s(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header: worker,iteration,start_s,end_s,...
  double last = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string cell;
    for (int i = 0; i < 4; ++i) std::getline(row, cell, ',');
    last = std::max(last, std::stod(cell));
  }
  return last;
}

double comm_s(const Outputs& o) {
  return o.summary["comm_s_per_iter"].get<double>();
}

}  // namespace

TEST(Background, OtherJobsSlowTheTrainingsCommunicationByAtMostTheirFlowsPerLink) {
  const Outputs alone = run_star({});
  const Outputs one = run_star({"background.bytes=100MB"});
  const Outputs two = run_star({"background.bytes=100MB", "background.jobs=2"});
  // Each link carries the training's flow and one per job: a share of at least 1 / (jobs + 1).
  EXPECT_GT(comm_s(one), comm_s(alone) * 1.05);
  EXPECT_LE(comm_s(one), 2 * comm_s(alone) * (1 + 1e-9));
  EXPECT_GT(comm_s(two), comm_s(one) * 1.05);
  EXPECT_LE(comm_s(two), 3 * comm_s(alone) * (1 + 1e-9));
  EXPECT_GT(one.summary["simulated_time_s"].get<double>(),
            alone.summary["simulated_time_s"].get<double>());
}

TEST(Background, AJobThatNeverMeetsTheTrainingsMessagesChangesNothing) {
  const Outputs alone = run_star({});
  // One operation of 1 MB at 0 s (about 1 ms, during the first forward pass, which uses no
  // link), then a gap past the training's end; a second job starts after the training.
  const Outputs apart = run_star({"background.bytes=1MB", "background.gap=1000s",
                                  "background.jobs=2", "background.offset=1000s"});
  EXPECT_EQ(apart.iterations_csv, alone.iterations_csv);
  EXPECT_EQ(apart.summary["simulated_time_s"], alone.summary["simulated_time_s"]);
}

TEST(Background, TheRunEndsWithTheTrainingNotWithTheOtherJobsOperation) {
  // 10 GB at 10 Gb/s outlasts the training (3 iterations of about 0.2-0.4 s).
  const Outputs o = run_star({"background.bytes=10GB"});
  const double end_s = last_end_s(o.iterations_csv);
  EXPECT_GT(end_s, 0.5);
  // (iterations.csv prints 9 decimals)
  EXPECT_NEAR(o.summary["simulated_time_s"].get<double>(), end_s, 1e-9);
}
