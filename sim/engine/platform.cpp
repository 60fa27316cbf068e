// Platform construction on SimGrid (platform.hpp says what it sets up). Left out: routing
// itself, which is SimGrid's.
#include "sim/engine/platform.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_set>
#include <xbt/config.hpp>

#include "sim/analytic/platform_model.hpp"
#include "sim/core/det_math.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/rng.hpp"
#include "sim/engine/probes.hpp"

namespace sg4 = simgrid::s4u;

namespace sgdsim {

namespace {

/// The generated platform's XML as a file SimGrid can load, with no name in any folder: an
/// anonymous memory file (memfd) read as /proc/self/fd/N, so a run killed or stopped by
/// --time-limit while SimGrid loads it leaves nothing in $TMPDIR. Without memfd (Linux before
/// 3.17): a file in $TMPDIR, removed by the destructor.
class GeneratedPlatformFile {
 public:
  GeneratedPlatformFile() = default;
  GeneratedPlatformFile(const GeneratedPlatformFile&) = delete;
  GeneratedPlatformFile& operator=(const GeneratedPlatformFile&) = delete;
  ~GeneratedPlatformFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!scratch_.empty()) std::filesystem::remove(scratch_, ec_);
  }
  /// Writes `xml` and returns the path to load.
  std::string open(const std::string& xml) {
    fd_ = ::memfd_create("sgdsim-platform.xml", MFD_CLOEXEC);
    size_t done = 0;
    while (fd_ >= 0 && done < xml.size()) {
      const ssize_t n = ::write(fd_, xml.data() + done, xml.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd_);
        fd_ = -1;
      } else {
        done += static_cast<size_t>(n);
      }
    }
    if (fd_ >= 0) return fmt::format("/proc/self/fd/{}", fd_);
    scratch_ =
        (std::filesystem::temp_directory_path() / fmt::format("sgdsim-platform-{}.xml", ::getpid()))
            .string();
    write_file_atomic(scratch_, xml);
    return scratch_;
  }

 private:
  int fd_ = -1;
  std::string scratch_;
  std::error_code ec_;
};

}  // namespace

Platform::Platform(const EngineConfig& c) : workers_(c.workers) {
  create_engine(c);
  load_platform(c);
  set_link_factors(c);
  pick_hosts(c);
  add_helper_hosts(c);
}

Platform::~Platform() = default;

/// The SimGrid engine with the network model's and the user's options (probed in a child:
/// SimGrid aborts on some bad values instead of throwing).
void Platform::create_engine(const EngineConfig& c) {
  const std::vector<std::string> base = {"sgdsim", "--log=xbt_cfg.thres:warning",
                                         "--log=root.fmt:[%10.6r]%e[%c/%p]%e%m%n"};
  std::vector<std::string> args = base;
  for (const auto& o : network_model_cfg(c.network_model)) args.push_back("--cfg=" + o);
  const size_t model_options = args.size();
  for (const auto& o : c.cfg) args.push_back("--cfg=" + o);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  refuse_crashing_options(c);
  // SimGrid aborts on some bad values (an unknown network/model) instead of throwing.
  auto probe_engine = [](const std::vector<std::string>& options) {
    return probe_in_child([&](ProbeProgress&) {
      std::vector<std::string> copy = options;
      std::vector<char*> child_argv;
      for (auto& a : copy) child_argv.push_back(a.data());
      child_argv.push_back(nullptr);
      int child_argc = static_cast<int>(copy.size());
      try {
        sg4::Engine e(&child_argc, child_argv.data());
      } catch (const std::exception& e) {
        throw std::runtime_error(first_line(e.what()));
      }
      return 0;
    });
  };
  // One option with the network model's, to find the one SimGrid rejects.
  auto alone = [&](const std::string& option) {
    std::vector<std::string> one(args.begin(), args.begin() + static_cast<long>(model_options));
    one.push_back("--cfg=" + option);
    return probe_engine(one);
  };
  const ProbeResult probe = probe_engine(args);
  if (!probe.ok) blame_cfg(c, probe.message, alone);
  try {
    engine_ = std::make_unique<sg4::Engine>(&argc, argv.data());
    install_interrupt_cleanup();  // SimGrid installs its own SIGINT handler: ours wins
  } catch (const std::exception& e) {
    // SimGrid appends its whole option list to the message: keep the first line.
    blame_cfg(c, first_line(e.what()), alone);
  }
  // Byte-valued options follow the payload unit (1/kByteScale byte).
  for (const char* opt : {"network/TCP-gamma", "network/weight-S"}) {
    double v = simgrid::config::get_value<double>(opt);
    if (v > 0) sg4::Engine::set_config(opt, v * kByteScale);
  }
  // SMPI's size-dependent factors switch at message sizes: scale the thresholds too.
  for (const char* opt : {"smpi/bw-factor", "smpi/lat-factor"})
    sg4::Engine::set_config(
        opt, scale_factor_thresholds(simgrid::config::get_value<std::string>(opt), kByteScale));
  tcp_gamma_bytes_ = simgrid::config::get_value<double>("network/TCP-gamma") / kByteScale;
}

void Platform::set_workers_slowed(bool slowed) {
  for (int w = 0; w < workers_; ++w)
    if (hosts_[w]->get_pstate_count() > 1) hosts_[w]->set_pstate(slowed ? 1 : 0);
}

/// Loads the platform file or the generated XML (a first load in a child for user input).
void Platform::load_platform(const EngineConfig& c) {
  std::string file = c.platform_file;
  GeneratedPlatformFile generated;  // removed when the load ends, however it ends
  if (file.empty()) file = generated.open(c.platform_xml);
  // Declaration order: SimGrid numbers netpoints per zone, so record creation order.
  sg4::Host::on_creation_cb([this](sg4::Host& h) { created_.push_back(&h); });
  const std::string shown = c.platform_file.empty() ? "generated platform" : c.platform_file;
  // A first load in a child: SimGrid dies on some options and files instead of throwing.
  // (Not for a platform sgdsim generated, with no SimGrid option of the user's: its load
  // cannot die, and at 10^5 hosts a second load costs seconds.)
  const bool own_input = c.platform_file.empty() && c.cfg.empty();
  const ProbeResult load = own_input ? ProbeResult{} : probe_in_child([&](ProbeProgress&) {
    try {
      engine_->load_platform(file);
    } catch (const std::exception&) {  // reported by the load below
    }
    return 0;
  });
  if (!load.ok) {
    std::string given;
    for (const auto& o : c.cfg) given += (given.empty() ? "" : ", ") + o;
    throw InputError(shown, "",
                     "SimGrid failed while loading the platform" +
                         (given.empty() ? std::string() : " with --cfg/simgrid_cfg " + given) +
                         ": " + load.message);
  }
  try {
    engine_->load_platform(file);
  } catch (const std::exception& e) {
    throw InputError(c.platform_file.empty() ? "generated platform" : c.platform_file, "",
                     std::string("cannot load platform: ") + first_line(e.what()));
  }
}

/// The model's factors, the transport callbacks and each link's noisy, byte-scaled bandwidth.
void Platform::set_link_factors(const EngineConfig& c) {
  // The network model sets its factors when the platform loads.
  latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
  bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
  if (c.network_model == NetworkModel::links)
    transports_.install(*engine_, c.default_transport,
                        c.platform_file.empty() ? "generated platform" : c.platform_file);
  else if (c.private_routes && c.fidelity == Fidelity::flow && private_routes_refusal(c).empty())
    transports_.install_latency_only(*engine_, latency_factor_);
  for (auto* link : engine_->get_all_links()) {
    double factor = 1.0;
    if (c.link_noise_cv > 0) {
      // Log-normal, mean one, one draw per link keyed by its name (stable across runs).
      uint64_t h = 1469598103934665603ULL;
      for (char ch : link->get_name()) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
      Rng rng(c.seed, h);
      const double sigma2 = detmath::log1p(c.link_noise_cv * c.link_noise_cv);
      factor = detmath::exp(std::sqrt(sigma2) * rng.normal() - sigma2 / 2);
    }
    link->set_bandwidth(link->get_bandwidth() * kByteScale * factor);
  }
}

/// The hosts of the workers (and servers): the file's first hosts, or the generated names.
void Platform::pick_hosts(const EngineConfig& c) {
  if (c.worker_hosts.empty()) {
    const std::vector<sg4::Host*> all = created_;
    const int needed = c.workers + c.extra_hosts;
    if (static_cast<int>(all.size()) < needed)
      throw InputError(
          c.scenario_file, "/workers/count",
          fmt::format(
              "expected at most {} (hosts in platform {}{}), got {}",
              static_cast<int>(all.size()) - c.extra_hosts, c.platform_file,
              c.extra_hosts > 0 ? fmt::format(", less {} dedicated servers", c.extra_hosts) : "",
              c.workers));
    hosts_.assign(all.begin(), all.begin() + needed);
  } else {
    for (const auto& name : c.worker_hosts) {
      sg4::Host* h = engine_->host_by_name_or_null(name);
      if (h == nullptr) throw std::logic_error("generated platform lacks host " + name);
      hosts_.push_back(h);
    }
  }
  if (!c.platform_file.empty()) check_routes(hosts_, c.platform_file);
  if (!c.platform_file.empty() && c.overlap_slowdown > 0)
    check_slowed_pstates({hosts_.begin(), hosts_.begin() + c.workers}, c.overlap_slowdown,
                         c.scenario_file, c.platform_file);
  for (auto* h : hosts_) {
    speed_.push_back(h->get_speed());
    slowed_speed_.push_back(h->get_pstate_count() > 1 ? h->get_pstate_speed(1) : h->get_speed());
  }
  for (int j = 0; c.rotation_symmetry && j < c.rotation_block_ranks && c.rotation_block_ranks > 1;
       ++j) {
    sg4::Host* h = engine_->host_by_name_or_null(PlatformModel::ghost_host_name(j));
    if (h == nullptr)
      throw std::logic_error("generated platform lacks ghost receiver " + std::to_string(j));
    ghosts_.push_back(h);
  }
}

/// Server CPUs (byteps summation) and the timer host (analytic collectives, start delays,
/// other jobs' gaps).
void Platform::add_helper_hosts(const EngineConfig& c) {
  if (c.group.server_reduction_Bps > 0) {
    // A parameter server sums on its CPU, not on the device its host stands for: one
    // single-core CPU per host, so concurrent sums at one server share it and leave the
    // device's compute alone.
    auto* zone = sg4::create_empty_zone("sgdsim-server-cpus");
    zone->set_parent(engine_->get_netzone_root());
    for (size_t i = 0; i < hosts_.size(); ++i) {
      cpus_.push_back(zone->create_host(fmt::format("sgdsim-cpu-{}", i), 1e9));
      cpus_.back()->seal();
    }
    zone->seal();
  }
  if (c.fidelity == Fidelity::analytic || c.start_delays || c.background.jobs > 0 ||
      (c.private_routes && c.fidelity == Fidelity::flow && private_routes_refusal(c).empty())) {
    // Analytic collectives (and collectives' start delays, other jobs' gaps) are timed
    // activities on a host of their own with a core per collective, so they never share a CPU
    // with compute.
    auto* zone = sg4::create_empty_zone("sgdsim-timers");
    zone->set_parent(engine_->get_netzone_root());
    timer_ = zone->create_host("sgdsim-timer", 1e9);
    timer_->set_core_count(1 << 20);
    timer_->seal();
    zone->seal();
  }
}

const LinkTransports::RouteInfo& Platform::rank_route_info(int from, int to) {
  const int64_t key = (static_cast<int64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto it = rank_info_.find(key);
  if (it != rank_info_.end()) return *it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  hosts_[from]->route_to(hosts_[to], links, &latency);
  const LinkTransports::RouteInfo& r = transports_.route_info(hosts_[from], hosts_[to], links);
  rank_info_.emplace(key, &r);
  return r;
}

AlphaBeta Platform::route_cost(int from, int to) {
  if (transports_.installed()) {
    const LinkTransports::RouteInfo& r = rank_route_info(from, to);
    double bw = r.bottleneck_Bps * r.bandwidth_factor;
    if (r.rate_bound_Bps > 0) bw = std::min(bw, r.rate_bound_Bps);
    return {r.latency_s, bw > 0 ? 1.0 / bw : 0.0, 0.0};
  }
  std::vector<sg4::Link*> links;
  double latency = 0;
  hosts_[from]->route_to(hosts_[to], links, &latency);
  double bw = 1e300;
  for (auto* l : links) bw = std::min(bw, l->get_bandwidth() / kByteScale);
  latency *= latency_factor_;
  bw *= bandwidth_factor_;
  if (tcp_gamma_bytes_ > 0 && latency > 0) bw = std::min(bw, tcp_gamma_bytes_ / (2 * latency));
  return {latency, links.empty() ? 0.0 : 1.0 / bw, 0.0};
}

NetworkCost Platform::network_cost(const CollectiveGroup& g, double reduction_Bps) {
  auto worst = [](AlphaBeta& acc, const AlphaBeta& ab) {
    acc.alpha_s = std::max(acc.alpha_s, ab.alpha_s);
    acc.beta_s_per_byte = std::max(acc.beta_s_per_byte, ab.beta_s_per_byte);
  };
  NetworkCost c;
  const int p = size(), d = std::max(1, std::min(g.ranks_per_node, p));
  if (d > 1) {
    for (int r = 0; r + 1 < p; ++r)
      if (r / d == (r + 1) / d) worst(c.intra, route_cost(r, r + 1));
    const int nodes = (p + d - 1) / d;  // leaders are ranks 0, d, 2d, ...
    for (int k = 0; k < nodes && nodes > 1; ++k)
      worst(c.inter, route_cost(d * k, d * ((k + 1) % nodes)));
  } else {
    for (int r = 0; r < p && p > 1; ++r) worst(c.inter, route_cost(r, (r + 1) % p));
  }
  if (d == 1) c.intra = c.inter;
  const double gamma = reduction_Bps > 0 ? 1.0 / reduction_Bps : 0.0;
  c.inter.gamma_s_per_byte = c.intra.gamma_s_per_byte = gamma;
  return c;
}

std::string Platform::block_asymmetry(const EngineConfig& c) const {
  if (c.reduction_Bps > 0) return "reductions (collective.reduction_speed) share each host's CPU";
  if (c.link_noise_cv > 0) return "each link's bandwidth is drawn apart (variability.link_noise)";
  return "";
}

std::string Platform::private_routes_refusal(const EngineConfig& c) const {
  if (c.rotation_symmetry) return "it needs flow_symmetry \"none\"";
  if (c.network_model == NetworkModel::smpi)
    return "SMPI's factors depend on the message size (use \"links\" or \"ideal\")";
  if (simgrid::config::get_value<bool>("network/crosstraffic"))
    return "SimGrid's cross traffic loads the reverse routes (network_model \"" +
           network_model_name(c.network_model) + "\"; use \"links\" or \"ideal\")";
  if (transports_.has_connections())
    return "messages share connections (a link's \"connection\" is \"per_pair\": TCP sockets "
           "of ps-lite, gRPC, Gloo or MPI)";
  return "";
}

const LinkTransports::RouteInfo* Platform::connection_route(const sg4::Host* from,
                                                            const sg4::Host* to) {
  if (!transports_.has_connections()) return nullptr;
  const LinkTransports::RouteInfo& r = transports_.route_info(from, to);
  return r.connection_per_pair ? &r : nullptr;
}

std::unique_ptr<PrivateRoutes> Platform::private_routes() {
  auto factors = [this](const sg4::Host* src, const sg4::Host* dst,
                        const std::vector<sg4::Link*>& links) -> std::pair<double, double> {
    if (!transports_.installed()) return {latency_factor_, bandwidth_factor_};
    const LinkTransports::RouteInfo& r = transports_.route_info(src, dst, links);
    return {r.latency_factor, r.bandwidth_factor};
  };
  return std::make_unique<PrivateRoutes>(factors,
                                         simgrid::config::get_value<double>("network/TCP-gamma"),
                                         simgrid::config::get_value<double>("network/weight-S"));
}

std::string Platform::rotation_asymmetry(const EngineConfig& c) {
  if (c.reduction_Bps > 0) return "reductions (collective.reduction_speed) share each host's CPU";
  if (simgrid::config::get_value<bool>("network/crosstraffic"))
    return "SimGrid's cross traffic loads the reverse routes (network_model \"" +
           network_model_name(c.network_model) + "\"; use \"links\" or \"ideal\")";
  const int p = size();
  if (p < 2) return "it needs 2 or more workers";
  std::vector<sg4::Link*> first;  // rank 0's route, the reference
  double first_latency = 0;
  std::unordered_set<const sg4::Link*> used;
  for (int r = 0; r < p; ++r) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts_[r]->route_to(hosts_[(r + 1) % p], links, &latency);
    if (r == 0) first = links, first_latency = latency;
    const std::string route = fmt::format("the route from rank {} to rank {}", r, (r + 1) % p);
    if (links.size() != first.size() || latency != first_latency)
      return route + " differs from rank 0's to rank 1";
    for (size_t i = 0; i < links.size(); ++i) {
      if (!same_link(*links[i], *first[i]))
        return fmt::format("{} crosses link \"{}\", unlike rank 0's (\"{}\")", route,
                           links[i]->get_name(), first[i]->get_name());
      // A FATPIPE link gives every flow its bandwidth: sharing one is no coupling.
      if (links[i]->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE &&
          !used.insert(links[i]).second)
        return fmt::format("{} shares link \"{}\" with another rank's", route,
                           links[i]->get_name());
    }
  }
  return "";
}

bool Platform::same_link(const sg4::Link& a, const sg4::Link& b) const {
  if (a.get_bandwidth() != b.get_bandwidth() || a.get_latency() != b.get_latency() ||
      a.get_sharing_policy() != b.get_sharing_policy())
    return false;
  return transports_.same_transport(a, b);
}

}  // namespace sgdsim
