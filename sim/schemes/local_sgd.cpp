// Local SGD: H local steps (no communication) between synchronizations; a synchronizing step
// is timed like a sync step (bucketed allreduce of parameter-sized buffers, overlapped as the
// scheme's overlap says). H = 1 is sync. Leaves out post-local and hierarchical variants.
#include "sim/schemes/common.hpp"
#include "sim/schemes/registry.hpp"

namespace sgdsim {

namespace {

class LocalSgd final : public Scheme {
 public:
  explicit LocalSgd(const SchemeContext& c)
      : s_(*c.scenario),
        w_(*c.workload),
        v_(c.scenario->variability, c.scenario->seed, c.scenario->workers),
        period_(c.scenario->scheme.period) {}

  std::string name() const override { return "local_sgd"; }

  Fragment build(int iteration) const override {
    Fragment f;
    f.iteration = iteration;
    auto chains = add_worker_chains(f, s_, w_, v_);
    if ((iteration + 1) % period_ == 0) {
      add_synchronizing_step(f, s_, w_, chains);
    }
    chain_iterations(f, chains);
    return f;
  }

 private:
  const Scenario& s_;
  const Workload& w_;
  ComputeVariability v_;
  int period_;
};

}  // namespace

std::unique_ptr<Scheme> make_local_sgd(const SchemeContext& context) {
  return std::make_unique<LocalSgd>(context);
}

}  // namespace sgdsim
