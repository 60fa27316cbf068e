// Synchronous data-parallel SGD (BSP): each iteration's update waits for every bucket's
// allreduce; WFBP overlaps bucket collectives with the rest of backprop; MG-WFBP buckets come
// from the workload. `scheme.compression` replaces each bucket's allreduce by a compressor's
// messages (models/learn/compressors; sim/schemes/common.cpp builds them).
#include "sim/scenario/json_reader.hpp"
#include "sim/schemes/common.hpp"

namespace sgdsim {

namespace {

class Sync final : public Scheme {
 public:
  explicit Sync(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers) {}

  std::string name() const override { return "sync"; }

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
               .brief = "`sync` only: `mgwfbp` merges buckets by Shi, Wang & Chu's rule (needs a "
                        "generated platform)",
               .choices = {"none", "mgwfbp"}},
              &SchemeSpec::merge),
          bind_scheme_param(
              {.key = "accumulation_steps",
               .type = ParamType::integer,
               .default_value = 1,
               .brief = "`sync` only: gradient accumulation, micro-batches of `batch_size` per "
                        "optimizer step; the first N - 1 run forward and backward with no "
                        "communication (PyTorch DDP's `no_sync`, Horovod's "
                        "`backward_passes_per_step`), the last one's backward carries the "
                        "buckets' collectives as `overlap` says; throughput counts N x "
                        "`batch_size` per worker and step. Not with a `training` section or "
                        "a Chakra workload",
               .min = 1,
               .max = 1 << 16},
              &SchemeSpec::accumulation_steps)};
}

/// A Chakra workload is the traced step itself: it has no micro-batches to repeat.
void check_sync_options(JsonObject& scheme, Scenario& s) {
  if (s.scheme.accumulation_steps > 1 && !s.chakra_files.empty())
    scheme.fail("accumulation_steps",
                "1 with a Chakra workload (its traces are whole steps; trace the accumulated "
                "step instead)");
}

const SchemeRegistration sync_registration{
    {"sync", sync_params(), check_sync_options, nullptr, nullptr, true},
    [](const SchemeContext& c) { return std::make_unique<Sync>(c); },
    [](const Scenario&) {
      return UpdateRule{AveragedUpdate{0, false}};
    }};
}  // namespace

}  // namespace sgdsim
