// Synchronous data-parallel SGD (BSP): each iteration's update waits for every bucket's
// allreduce; WFBP overlaps bucket collectives with the rest of backprop; MG-WFBP's and
// Horovod's fused buckets come from the workload (sim/app/setup.cpp). `scheme.compression`
// replaces each bucket's allreduce by a compressor's messages (models/learn/compressors;
// sim/schemes/common.cpp builds them).
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {

namespace {

class Sync final : public Scheme {
 public:
  explicit Sync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers) {
    check_bucket_ops(s_, w_);
  }

  std::string name() const override { return "sync"; }

  /// From iteration 1 on the fragments have the same tasks and cross edges, unless compute
  /// times are drawn (jitter, stragglers) or a Chakra trace gives each iteration its own.
  int repeats_from() const override { return v_.uniform() && !w_.chakra ? 2 : -1; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    add_synchronizing_step(f, s_, w_, chains);
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
};

}  // namespace

namespace {
std::vector<SchemeParam> sync_params() {
  return {bind_scheme_param(
              {.key = "merge",
               .type = ParamType::choice,
               .default_value = "none",
               .brief = "`sync` only: `mgwfbp` merges buckets by Shi, Wang & Chu's rule; "
                        "`horovod` fuses the gradients ready within each `cycle_time` into "
                        "allreduces of at most `fusion_bytes`, as Horovod's background loop "
                        "does (both need a generated platform and time the collectives "
                        "contention-free)",
               .choices = {"none", "mgwfbp", "horovod"}},
              &SchemeSpec::merge),
          {{.key = "cycle_time",
            .type = ParamType::time,
            .default_value = "5ms",
            .brief = "`sync` with `merge` `horovod`: Horovod's cycle (`HOROVOD_CYCLE_TIME`: "
                     "5 ms before Horovod 0.21, 1 ms from it)",
            .min = 1e-6}},
          accumulation_steps_param()};
}

/// Horovod's fusion fuses a model profile's tensors: not a Chakra trace's collectives.
void check_sync(JsonObject& scheme, Scenario& s) {
  check_accumulation(scheme, s);
  if (s.scheme.merge == "horovod" && !s.chakra_files.empty())
    scheme.fail("merge",
                "\"none\" or \"mgwfbp\" with a Chakra workload (Horovod's fusion "
                "fuses a model profile's tensors)");
}

const SchemeRegistration sync_registration{
    {"sync", sync_params(), check_sync, nullptr, nullptr, true},
    [](const SchemeContext& c) { return std::make_unique<Sync>(c); },
    [](const Scenario&) {
      return UpdateRule{AveragedUpdate{0, false}};
    }};
}  // namespace

}  // namespace sgdsim
