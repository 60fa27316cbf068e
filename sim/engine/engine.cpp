#include "sim/engine/engine.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <xbt/config.hpp>

#include "sim/analytic/scheduler.hpp"
#include "sim/core/det_math.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/files.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"

XBT_LOG_NEW_CATEGORY(sgdsim, "sgdsim: distributed SGD training simulator");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(sgdsim_engine, sgdsim,
                                "sgdsim engine: SimGrid execution of task DAGs");

namespace sg4 = simgrid::s4u;

namespace sgdsim {

std::vector<std::string> network_model_cfg(NetworkModel model) {
  // SimGrid 3.32's lazy bandwidth-sharing update misallocates rates when flows of different
  // fan-in share links (a parameter-server push came out 10 % slow), and its default time
  // precision (1e-9 s) blurs microsecond collectives: sgdsim trades some speed for exactness.
  std::vector<std::string> cfg = {"network/optim:Full", "surf/precision:1e-12"};
  // "links" starts from the ideal model: the link technologies add every per-message cost.
  if (model == NetworkModel::ideal || model == NetworkModel::links)
    cfg.insert(cfg.end(), {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0"});
  if (model == NetworkModel::smpi) cfg.push_back("network/model:SMPI");
  return cfg;
}

std::string scale_factor_thresholds(const std::string& spec, double scale) {
  std::string out;
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(';', start);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(start, end - start);
    size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("malformed factor list: " + spec);
    double threshold = std::stod(item.substr(0, colon));
    if (!out.empty()) out += ';';
    out += fmt::format("{}", threshold * scale);
    out += item.substr(colon);
    start = end + 1;
  }
  return out;
}

namespace {

/// A link's transport: its `technology` property (else `fallback`), then any of the
/// properties overhead, efficiency and window overriding its defaults. (A per-stream limit is a
/// FATPIPE link on the route: SimGrid 3.32 cannot bound one host-to-host message's rate.)
TransportParams link_transport(const sg4::Link& route_link, const TransportParams& fallback,
                               const std::string& file) {
  // A SPLITDUPLEX link "x" routes as "x_UP" and "x_DOWN"; its properties stay on "x".
  const sg4::Link* declared = &route_link;
  for (const std::string suffix : {"_UP", "_DOWN"}) {
    const std::string& n = route_link.get_name();
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      try {
        if (auto* l = sg4::Engine::get_instance()->split_duplex_link_by_name(
                n.substr(0, n.size() - suffix.size())))
          declared = l;
      } catch (const std::exception&) {  // a plain link whose name ends in _UP
      }
  }
  const sg4::Link& link = *declared;
  auto fail = [&](const std::string& prop, const char* got, const std::string& expected) {
    throw InputError(file, "",
                     fmt::format("link \"{}\", property \"{}\": expected {}, got \"{}\"",
                                 link.get_name(), prop, expected, got));
  };
  const LinkProperties read =
      read_link_properties([&](const char* key) { return link.get_property(key); }, fallback);
  if (read.problem)
    fail(read.problem->property, read.problem->value.c_str(), read.problem->expected);
  const TransportParams& t = read.transport;
  if (t.overhead_s > 0 && link.get_latency() <= 0)
    throw InputError(
        file, "",
        fmt::format("link \"{}\" has latency 0 but its transport ({}) costs {} per "
                    "message: give the link a latency > 0 (the per-message cost is "
                    "applied as a factor of the route latency)",
                    link.get_name(), t.technology, units::format_time_s(t.overhead_s)));
  return t;
}

/// The first line of a SimGrid message (some append lists of every netpoint or option).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// The SimGrid message in what a dying child wrote: its first log line, without SimGrid's
/// "[time] [category/priority]" prefix (a backtrace follows it).
std::string simgrid_message(const std::string& text) {
  std::string fallback;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t tag = line.find("] [");
    if (tag != std::string::npos) {
      const size_t close = line.find("] ", tag + 3);
      if (close != std::string::npos) return line.substr(close + 2);
    }
    if (fallback.empty()) fallback = line;
  }
  return fallback;
}

/// How a probe in a child process ended: ok, or where it was and SimGrid's message.
struct ProbeResult {
  bool ok = true;
  std::string step;     ///< what the probe last wrote into its progress buffer
  std::string message;  ///< SimGrid's message, or how the child died
};

/// Progress a probe shares with its parent: written before each step, read after a crash.
struct ProbeProgress {
  char step[1024] = {};
  /// Records the step about to run (no system call: it runs once per host pair).
  void set(const std::string& text) {
    const size_t n = std::min(text.size(), sizeof step - 1);
    std::memcpy(step, text.data(), n);
    step[n] = '\0';
  }
};

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

/// Runs `probe` in a child process with stderr captured. SimGrid 3.32 does not throw on every
/// bad input: it aborts or segfaults on some (an unknown network/model, a missing zoneRoute),
/// so only a disposable process may ask. `probe` returns 0 when all is well.
ProbeResult probe_in_child(const std::function<int(ProbeProgress&)>& probe) {
  void* shared = ::mmap(nullptr, sizeof(ProbeProgress), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error("cannot check the platform: mmap failed");
  auto* progress = new (shared) ProbeProgress();
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot check the platform: pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot check the platform: fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    // The parent's handlers would delete the parent's temporary files.
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // disposable: gone with its parent
    ::dup2(fds[1], 2);                   // SimGrid's dying words go to the parent
    int rc = 5;
    try {
      rc = probe(*progress);
    } catch (const std::exception& e) {
      const std::string msg = std::string("[ ] [probe/error] ") + e.what() + "\n";
      rc = ::write(2, msg.data(), msg.size()) < 0 ? 4 : 3;
    }
    ::_exit(rc);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (text.size() < (1 << 16)) text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProbeResult r;
  r.step = progress->step;
  ::munmap(shared, sizeof(ProbeProgress));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return r;
  r.ok = false;
  r.message = simgrid_message(text);
  if (r.message.empty())
    r.message = WIFSIGNALED(status) ? fmt::format("SimGrid died of signal {}", WTERMSIG(status))
                                    : "SimGrid failed";
  return r;
}

/// Routes every ordered pair of `hosts` in a child process and throws InputError naming the
/// first pair without a usable route (a missing zoneRoute segfaults SimGrid 3.32, "Bad
/// gateways"; a missing route in a Full zone aborts or, in release builds, comes back empty).
void check_routes(const std::vector<sg4::Host*>& hosts, const std::string& file) {
  if (hosts.size() < 2) return;
  const ProbeResult r = probe_in_child([&](ProbeProgress& progress) {
    for (auto* a : hosts)
      for (auto* b : hosts) {
        if (a == b) continue;
        progress.set(a->get_name() + " " + b->get_name());
        std::vector<sg4::Link*> links;
        double latency = 0;
        a->route_to(b, links, &latency);
        if (links.empty()) throw std::runtime_error("SimGrid finds no link on this route");
      }
    return 0;
  });
  if (r.ok) return;
  std::istringstream words(r.step);
  std::string from = "?", to = "?";
  words >> from >> to;
  throw InputError(file, "",
                   fmt::format("no usable route from host \"{}\" to host \"{}\" (every pair of "
                               "the run's hosts needs one): {}",
                               from, to, r.message));
}

/// "SimGrid rejected the options (a, b): why".
std::string cfg_rejected(const std::vector<std::string>& cfg, const std::string& why) {
  std::string given;
  for (const auto& o : cfg) given += (given.empty() ? "" : ", ") + o;
  return "SimGrid rejected the options (" + given + "): " + why;
}

/// Where option `i` of the configuration comes from: {file, pointer} or {"--cfg", ""}.
std::pair<std::string, std::string> cfg_origin(const EngineConfig& c, size_t i) {
  if (i < c.cfg_origin.size()) return c.cfg_origin[i];
  return {"--cfg", ""};
}

/// The error for options SimGrid rejected with `why`: when `fails_alone` (run in a child per
/// option) finds the one that fails by itself, it names that option and where it came from
/// (--cfg, or the scenario's /simgrid_cfg/N); else every option.
[[noreturn]] void blame_cfg(const EngineConfig& c, const std::string& why,
                            const std::function<ProbeResult(const std::string&)>& fails_alone) {
  for (size_t i = 0; i < c.cfg.size(); ++i) {
    const ProbeResult alone =
        c.cfg.size() == 1 ? ProbeResult{false, "", why} : fails_alone(c.cfg[i]);
    if (alone.ok) continue;
    const auto [file, pointer] = cfg_origin(c, i);
    throw InputError(file, pointer, cfg_rejected({c.cfg[i]}, alone.message));
  }
  throw InputError("--cfg", "", cfg_rejected(c.cfg, why));
}

/// Refuses SimGrid options that crash SimGrid 3.32 on sgdsim's platforms: Paje tracing of
/// uncategorized resource use aborts on generated platforms and <cluster> files.
void refuse_crashing_options(const EngineConfig& c) {
  const std::vector<std::string>& cfg = c.cfg;
  for (size_t i = 0; i < cfg.size(); ++i) {
    const std::string& o = cfg[i];
    const std::string name = o.substr(0, o.find(':'));
    const std::string value = o.substr(o.find(':') + 1);
    if (name == "maxmin/precision" || name == "surf/precision") {
      // SimGrid 3.32 hangs on surf/precision <= 0 and crashes on maxmin/precision < 0 or >= 1.
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(x > 0) || !(x < limits::kMaxSimGridPrecision))
        throw InputError(cfg_origin(c, i).first, cfg_origin(c, i).second,
                         fmt::format("\"{}\" is refused: expected a precision > 0 and < {:g} "
                                     "(the limit on SimGrid's precisions: SimGrid 3.32 hangs or "
                                     "crashes past it; sgdsim runs with surf/precision:1e-12 and "
                                     "SimGrid's maxmin/precision:1e-05)",
                                     o, limits::kMaxSimGridPrecision));
    }
    if (name == "tracing/uncategorized" && value != "no" && value != "0" && value != "false")
      throw InputError(
          cfg_origin(c, i).first, cfg_origin(c, i).second,
          "\"" + o +
              "\" is refused: SimGrid 3.32's Paje tracing of uncategorized "
              "resource use aborts on generated platforms and <cluster> files (\"container with "
              "name star_link_0_DOWN not found\"); use sgdsim's timeline.json "
              "(output.timeline) instead");
  }
}

/// A SimGrid engine set up with the platform, the network model and the byte scale.
class Platform {
 public:
  explicit Platform(const EngineConfig& c) : workers_(c.workers) {
    create_engine(c);
    load_platform(c);
    set_link_factors(c);
    pick_hosts(c);
    add_helper_hosts(c);
  }

 private:
  /// The SimGrid engine with the network model's and the user's options (probed in a child:
  /// SimGrid aborts on some bad values instead of throwing).
  void create_engine(const EngineConfig& c) {
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

  /// Loads the platform file or the generated XML (a first load in a child for user input).
  void load_platform(const EngineConfig& c) {
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
  void set_link_factors(const EngineConfig& c) {
    // The network model sets its factors when the platform loads.
    latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
    bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
    if (c.network_model == NetworkModel::links)
      install_transport(c, c.platform_file.empty() ? "generated platform" : c.platform_file);
    for (auto* link : engine_->get_all_links()) {
      double factor = 1.0;
      if (c.link_noise_cv > 0) {
        // Log-normal, mean one, one draw per link keyed by its name (stable across runs).
        uint64_t h = 1469598103934665603ULL;
        for (char ch : link->get_name())
          h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
        Rng rng(c.seed, h);
        const double sigma2 = detmath::log1p(c.link_noise_cv * c.link_noise_cv);
        factor = detmath::exp(std::sqrt(sigma2) * rng.normal() - sigma2 / 2);
      }
      link->set_bandwidth(link->get_bandwidth() * kByteScale * factor);
    }
  }

  /// The hosts of the workers (and servers): the file's first hosts, or the generated names.
  void pick_hosts(const EngineConfig& c) {
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
    for (auto* h : hosts_) speed_.push_back(h->get_speed());
  }

  /// Server CPUs (byteps summation) and the timer host (analytic collectives, start delays).
  void add_helper_hosts(const EngineConfig& c) {
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
    if (c.fidelity == Fidelity::analytic || c.start_delays) {
      // Analytic collectives (and collectives' start delays) are timed activities on a host of
      // their own with a core per collective, so they never share a CPU with compute.
      auto* zone = sg4::create_empty_zone("sgdsim-timers");
      zone->set_parent(engine_->get_netzone_root());
      timer_ = zone->create_host("sgdsim-timer", 1e9);
      timer_->set_core_count(1 << 20);
      timer_->seal();
      zone->seal();
    }
  }

 public:
  /// What a message between two hosts pays under network_model "links" (cached per pair).
  struct RouteInfo {
    double latency_factor = 1;    ///< (route latency + overhead) / route latency
    double bandwidth_factor = 1;  ///< the bottleneck link's efficiency
    double rate_bound_Bps = 0;    ///< stream / window limit in real bytes per second; 0 = none
    double latency_s = 0;         ///< route latency with the overhead
    double bottleneck_Bps = 0;    ///< smallest link bandwidth, real bytes per second
  };

  /// The transport of the route between two hosts, computed once per pair.
  const RouteInfo& route_info(const sg4::Host* src, const sg4::Host* dst,
                              const std::vector<sg4::Link*>& links) {
    auto [it, fresh] = route_info_.try_emplace({src, dst});
    if (!fresh) return it->second;
    std::vector<const TransportParams*> transports;
    std::vector<double> bandwidths;
    double latency = 0;
    for (const auto* l : links) {
      transports.push_back(&link_transport_.at(l));
      bandwidths.push_back(l->get_bandwidth() / kByteScale);
      latency += l->get_latency();
    }
    const RouteTransport t = combine_route(transports, bandwidths, latency);
    RouteInfo& r = it->second;
    r.latency_factor = latency > 0 ? (latency + t.overhead_s) / latency : 1.0;
    r.bandwidth_factor = t.efficiency;
    r.rate_bound_Bps = t.rate_bound_Bps;
    r.latency_s = latency + t.overhead_s;
    r.bottleneck_Bps =
        bandwidths.empty() ? 0 : *std::min_element(bandwidths.begin(), bandwidths.end());
    return r;
  }

  /// The same for two ranks (hosts_ indices), routing once per pair.
  const RouteInfo& rank_route_info(int from, int to) {
    const int64_t key = (static_cast<int64_t>(from) << 32) | static_cast<uint32_t>(to);
    auto it = rank_info_.find(key);
    if (it != rank_info_.end()) return *it->second;
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts_[from]->route_to(hosts_[to], links, &latency);
    const RouteInfo& r = route_info(hosts_[from], hosts_[to], links);
    rank_info_.emplace(key, &r);
    return r;
  }

  /// True when link technologies set each message's costs (network_model "links").
  bool per_link_transport() const { return !link_transport_.empty(); }

  /// Contention-free cost of the route between two workers, with the model's factors.
  AlphaBeta route_cost(int from, int to) {
    if (per_link_transport()) {
      const RouteInfo& r = rank_route_info(from, to);
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

  /// Worst-case alpha-beta between neighbouring ranks on different nodes (inter) and on the
  /// same node (intra): exact for a ring on a contention-free platform.
  NetworkCost network_cost(const CollectiveGroup& g, double reduction_Bps) {
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

  /// Why the run's messages would not be the same seen from every rank (empty if they are):
  /// the routes r -> r+1 must cross links of their own (FATPIPE links may be shared) with the
  /// same properties in the same order, and nothing may couple the ranks' messages to other
  /// resources (cross traffic on the reverse route, reductions on the receiver's CPU).
  std::string rotation_asymmetry(const EngineConfig& c) {
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

  /// The CPU of host `index` that runs parameter-server sums (when they are modelled).
  sg4::Host* cpu(int index) const { return cpus_[index]; }

  /// The host that runs analytic collectives.
  sg4::Host* timer() const { return timer_; }

  sg4::Engine& engine() { return *engine_; }
  sg4::Host* host(int index) const { return hosts_[index]; }
  double speed(int index) const { return speed_[index]; }
  /// Number of hosts the run uses (workers, then dedicated servers).
  int hosts() const { return static_cast<int>(hosts_.size()); }
  /// Number of ranks (workers); dedicated servers come after them.
  int size() const { return workers_; }

 private:
  /// network_model "links": reads every link's transport and lets SimGrid ask for each
  /// message's latency and bandwidth factors (SimGrid 3.32's NetworkModelIntf callbacks).
  void install_transport(const EngineConfig& c, const std::string& file) {
    double window_bytes = 0;
    for (auto* link : engine_->get_all_links()) {
      // SimGrid's loopback carries a host's messages to itself (sgdsim sends none).
      const TransportParams t = link->get_name() == "__loopback__"
                                    ? TransportParams{}
                                    : link_transport(*link, c.default_transport, file);
      if (t.window_bytes > 0)
        window_bytes = window_bytes > 0 ? std::min(window_bytes, t.window_bytes) : t.window_bytes;
      link_transport_.emplace(link, t);
    }
    // SimGrid 3.32 bounds a host-to-host message only through TCP-gamma (window / 2 x route
    // latency), one value for the whole platform: the smallest window of any link.
    if (window_bytes > 0 && simgrid::config::is_default("network/TCP-gamma") == false &&
        simgrid::config::get_value<double>("network/TCP-gamma") == 0)
      sg4::Engine::set_config("network/TCP-gamma", window_bytes * kByteScale);
    for (const char* opt : {"network/latency-factor", "network/bandwidth-factor"})
      if (!simgrid::config::is_default(opt))
        throw InputError("--cfg", "",
                         std::string("network_model \"links\" sets every message's factors from "
                                     "its links' technologies: drop --cfg ") +
                             opt + " or use network_model \"default\"");
    auto* model = engine_->get_netzone_root()->get_network_model();
    model->set_lat_factor_cb([this](double, const sg4::Host* src, const sg4::Host* dst,
                                    const std::vector<sg4::Link*>& links,
                                    const std::unordered_set<sg4::NetZone*>&) {
      return route_info(src, dst, links).latency_factor;
    });
    model->set_bw_factor_cb([this](double, const sg4::Host* src, const sg4::Host* dst,
                                   const std::vector<sg4::Link*>& links,
                                   const std::unordered_set<sg4::NetZone*>&) {
      return route_info(src, dst, links).bandwidth_factor;
    });
  }

  /// Links that share flows the same way: bandwidth, latency, sharing policy and transport.
  bool same_link(const sg4::Link& a, const sg4::Link& b) const {
    if (a.get_bandwidth() != b.get_bandwidth() || a.get_latency() != b.get_latency() ||
        a.get_sharing_policy() != b.get_sharing_policy())
      return false;
    if (!per_link_transport()) return true;
    const TransportParams &ta = link_transport_.at(&a), &tb = link_transport_.at(&b);
    return ta.overhead_s == tb.overhead_s && ta.efficiency == tb.efficiency &&
           ta.window_bytes == tb.window_bytes;
  }

  struct PairHash {
    size_t operator()(const std::pair<const sg4::Host*, const sg4::Host*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<const sg4::Link*, TransportParams> link_transport_;
  std::unordered_map<int64_t, const RouteInfo*> rank_info_;  // into route_info_ (stable)
  std::unordered_map<std::pair<const sg4::Host*, const sg4::Host*>, RouteInfo, PairHash>
      route_info_;
  std::unique_ptr<sg4::Engine> engine_;
  std::vector<sg4::Host*> hosts_;
  std::vector<double> speed_;
  int workers_;
  sg4::Host* timer_ = nullptr;
  std::vector<sg4::Host*> created_;  // every host, in creation (declaration) order
  std::vector<sg4::Host*> cpus_;     // parameter-server CPUs, one per host (byteps sums)
  double latency_factor_ = 1, bandwidth_factor_ = 1, tcp_gamma_bytes_ = 0;
};

/// Executes a lazily built sequence of fragments just in time on SimGrid.
class Runner {
 public:
  Runner(const EngineConfig& config, Platform& platform, const Scheme* scheme, int iterations,
         const Collective& collective, TaskObserver* observer)
      : config_(config),
        group_(config.group),
        platform_(platform),
        scheme_(scheme),
        iterations_(iterations),
        collective_(collective),
        observer_(observer) {
    group_.ranks = platform.size();
    groups_ = scheme != nullptr ? scheme->groups() : 1;
    live_.resize(static_cast<size_t>(groups_));
    base_.assign(static_cast<size_t>(groups_), 0);
    built_.assign(static_cast<size_t>(groups_), 0);
    if (config.fidelity == Fidelity::analytic)
      cost_ = platform.network_cost(group_, config.reduction_Bps);
    rotation_ = config.rotation_symmetry && config.fidelity == Fidelity::flow;
    if (rotation_)
      if (const std::string why = platform.rotation_asymmetry(config); !why.empty())
        throw InputError(
            config.scenario_file, "/flow_symmetry",
            "\"rotation\" needs a platform that looks the same from every rank: " + why);
    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_completion(a); });
  }

  /// Runs the training DAG to the end.
  EngineResult run_training() {
    for (int g = 0; g < groups_; ++g) ensure_built(g);
    drain();
    platform_.engine().run();
    check_symmetry();
    for (int g = 0; g < groups_; ++g)
      if (!live_[g].empty())
        throw std::logic_error(fmt::format("simulation stalled in iteration {}", base_[g]));
    return {sg4::Engine::get_clock(), activities_};
  }

  /// Runs one collective of `bytes` on all workers.
  EngineResult run_collective(double bytes) {
    Task t{TaskKind::comm, -1, 0, 0, 0, bytes};
    t.op = group_.op;
    Fragment f;
    f.graph.add_task(t);
    add_fragment(std::move(f));
    drain();
    platform_.engine().run();
    check_symmetry();
    if (!live_[0].empty()) throw std::logic_error("collective did not finish");
    return {sg4::Engine::get_clock(), activities_};
  }

 private:
  struct Live {
    Fragment f;
    std::vector<uint32_t> pending;
    std::vector<double> start;
    std::vector<uint8_t> done;
    std::vector<uint32_t> succ_off, succ;
    std::map<uint32_t, std::vector<std::pair<int, uint32_t>>> cross_out;  // task -> (iter, task)
    uint32_t remaining = 0;
  };
  struct CollectiveRun {
    const Schedule* schedule = nullptr;
    std::vector<uint32_t> pending;
    uint32_t remaining = 0;
    int iteration = 0;
    uint32_t task = 0;
  };
  struct Queue {
    bool busy = false;
    std::deque<std::pair<int, uint32_t>> waiting;
  };
  static constexpr uint32_t kStartDelay = UINT32_MAX;  // Slot::step of a collective's start delay
  struct Slot {
    sg4::ActivityPtr activity;
    int iteration = 0;
    uint32_t task = 0;
    int collective = -1;  // index into collectives_, -1 for a compute task
    uint32_t step = 0;
    bool reduction = false;  // the receiver's reduction after step `step`
  };

  /// flow_symmetry "rotation" met a message it cannot stand for by rank 0's: the run stopped
  /// starting tasks, and this reports it.
  void check_symmetry() const {
    if (!symmetry_error_.empty())
      throw InputError(
          config_.scenario_file, "/flow_symmetry",
          "\"rotation\" cannot simulate this run exactly: " + symmetry_error_ + "; use \"none\"");
  }

  /// Records why the run is not rotation-symmetric; nothing starts after it.
  void fail_symmetry(const std::string& why) {
    if (symmetry_error_.empty()) symmetry_error_ = why;
  }

  // Fragments are keyed by fid = iteration * groups + group: a scheme whose workers never wait
  // for each other (async) builds one fragment per worker, so a fast worker's iterations do not
  // keep a slow worker's future tasks alive.
  Live& live(int fid) {
    auto& d = live_[static_cast<size_t>(fid % groups_)];
    return d[static_cast<size_t>(fid / groups_ - base_[fid % groups_])];
  }

  void ensure_built(int fid) {
    const int g = fid % groups_, iteration = fid / groups_;
    if (observer_ != nullptr && observer_->should_stop()) return;
    while (built_[g] <= iteration && built_[g] < iterations_)
      add_fragment(scheme_->build_group(built_[g], g), g);
  }

  void add_fragment(Fragment f, int group = 0) {
    Live l;
    const uint32_t n = f.graph.num_tasks();
    l.pending = f.graph.in_degrees();
    l.start.assign(n, 0.0);
    l.done.assign(n, 0);
    l.remaining = n;
    l.succ_off.assign(n + 1, 0);
    for (uint32_t t = 0; t < n; ++t) {
      auto s = f.graph.successors(t);
      l.succ.insert(l.succ.end(), s.begin(), s.end());
      l.succ_off[t + 1] = static_cast<uint32_t>(l.succ.size());
    }
    const int me = f.iteration * groups_ + group;
    for (const auto& c : f.cross) {
      const int src = f.iteration - c.lag;
      if (src < base_[group] || src < 0) continue;  // retired: already done
      Live& s = live(src * groups_ + group);
      if (s.done[c.from]) continue;
      ++l.pending[c.to];
      s.cross_out[c.from].emplace_back(me, c.to);
    }
    built_[group] = f.iteration + 1;
    l.f = std::move(f);
    live_[group].push_back(std::move(l));
    Live& added = live_[group].back();
    for (uint32_t t = 0; t < n; ++t)
      if (added.pending[t] == 0) ready_.emplace_back(me, t);
  }

  uint32_t new_slot() {
    if (!free_slots_.empty()) {
      uint32_t s = free_slots_.back();
      free_slots_.pop_back();
      return s;
    }
    slots_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  void start_task(int iteration, uint32_t t) {
    Live& l = live(iteration);
    const Task& task = l.f.graph.task(t);
    if (task.queue >= 0) {
      if (queues_.size() <= static_cast<size_t>(task.queue)) queues_.resize(task.queue + 1);
      Queue& q = queues_[task.queue];
      if (q.busy) {
        q.waiting.emplace_back(iteration, t);
        return;
      }
      q.busy = true;
    }
    start_now(iteration, t);
  }

  void start_now(int iteration, uint32_t t) {
    Live& l = live(iteration);
    const Task& task = l.f.graph.task(t);
    if (!symmetry_error_.empty()) return;
    l.start[t] = sg4::Engine::get_clock();
    if (observer_ != nullptr) observer_->task_started(task, l.start[t]);
    ensure_built(iteration + groups_);
    if (task.kind == TaskKind::comm && task.src >= 0) {  // point to point
      if (rotation_) {
        fail_symmetry(
            "its point-to-point messages (parameter servers, Chakra sends) do not "
            "rotate with the ranks");
        return;
      }
      if (task.src == task.dst || task.bytes <= 0) {
        finished_.emplace_back(iteration, t);
        return;
      }
      if (config_.fidelity == Fidelity::analytic) {
        // Contention-free, like analytic collectives: one timed activity per message. (Flows
        // of thousands of concurrent pushes also strain SimGrid 3.32's LMM precision.)
        const AlphaBeta& ab = p2p_cost(task.src, task.dst);
        const double duration = ab.alpha_s + task.bytes * ab.beta_s_per_byte;
        start_exec(platform_.timer(), duration * platform_.timer()->get_speed(),
                   Slot{nullptr, iteration, t, -1, 0, false});
        return;
      }
      uint32_t s = new_slot();
      auto comm = sg4::Comm::sendto_init(platform_.host(task.src), platform_.host(task.dst));
      comm->set_payload_size(static_cast<uint64_t>(std::llround(task.bytes * kByteScale)));
      comm->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
      slots_[s] = Slot{comm, iteration, t, -1, 0, false};
      ++activities_;
      comm->start();
      return;
    }
    if (task.kind == TaskKind::comm && config_.fidelity != Fidelity::analytic) {
      start_collective(iteration, t, task);
      return;
    }
    const bool analytic = task.kind == TaskKind::comm;
    const double duration = analytic ? analytic_s(task) : task.duration_s;
    if (duration <= 0) {
      finished_.emplace_back(iteration, t);
      return;
    }
    const int where = task.kind == TaskKind::apply ? task.dst : task.worker;
    sg4::Host* host = analytic ? platform_.timer() : platform_.host(where);
    start_exec(host, duration * host->get_speed(), Slot{nullptr, iteration, t, -1, 0, false});
  }

  void start_exec(sg4::Host* host, double flops, Slot slot) {
    uint32_t s = new_slot();
    auto exec = sg4::Exec::init();
    exec->set_flops_amount(flops);
    exec->set_host(host);
    exec->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
    slot.activity = exec;
    slots_[s] = slot;
    ++activities_;
    exec->start();
  }

  const AlphaBeta& p2p_cost(int src, int dst) {
    auto key = (static_cast<int64_t>(src) << 32) | static_cast<uint32_t>(dst);
    auto it = p2p_costs_.find(key);
    if (it == p2p_costs_.end()) it = p2p_costs_.emplace(key, platform_.route_cost(src, dst)).first;
    return it->second;
  }

  /// The cache key of a tensor's collective: its size, and its index where the collective
  /// depends on it (byteps hashes the tensor's key; the bucket index stands for the key), its
  /// operation and its subgroups.
  using TensorKey = std::tuple<double, int, CollectiveOp, int>;
  TensorKey tensor_of(const Task& task) const {
    return {task.bytes, collective_.per_tensor() ? task.index : 0, task.op, task.subgroup};
  }
  CollectiveGroup group_for(const TensorKey& key) const {
    CollectiveGroup g = group_;
    g.tensor_key = std::get<1>(key);
    g.op = std::get<2>(key);
    return g;
  }

  double analytic_s(const Task& task) {
    const auto key = tensor_of(task);
    auto it = analytic_.find(key);
    if (it == analytic_.end())
      it = analytic_
               .emplace(key, subgroup_formula_s(collective_, group_for(key), task.bytes, cost_,
                                                task.subgroup))
               .first;
    return it->second;
  }

  const Schedule& schedule_for(const Task& task) {
    const auto key = tensor_of(task);
    auto it = schedules_.find(key);
    if (it != schedules_.end()) return it->second;
    Schedule full = subgroup_schedule(collective_, group_for(key), task.bytes, task.subgroup);
    if (!rotation_) return schedules_.emplace(key, std::move(full)).first->second;
    std::string why;
    std::optional<Schedule> reduced = rotation_reduced(full, &why);
    if (!reduced)
      fail_symmetry(fmt::format("the {} schedule of {} bytes is not the same from every rank ({})",
                                collective_.name(), task.bytes, why));
    return schedules_.emplace(key, reduced ? std::move(*reduced) : Schedule{}).first->second;
  }

  void start_collective(int iteration, uint32_t t, const Task& task) {
    const Schedule& sched = schedule_for(task);
    if (!symmetry_error_.empty()) return;
    if (sched.steps.empty()) {
      finished_.emplace_back(iteration, t);
      return;
    }
    int c;
    if (!free_collectives_.empty()) {
      c = free_collectives_.back();
      free_collectives_.pop_back();
    } else {
      collectives_.emplace_back();
      c = static_cast<int>(collectives_.size() - 1);
    }
    CollectiveRun& run = collectives_[c];
    run.schedule = &sched;
    run.pending = sched.pred_count;
    run.remaining = static_cast<uint32_t>(sched.steps.size());
    run.iteration = iteration;
    run.task = t;
    if (sched.start_delay_s > 0) {
      // The collective's latency, paid once before its messages (nccl_tuner).
      start_exec(platform_.timer(), sched.start_delay_s * platform_.timer()->get_speed(),
                 Slot{nullptr, iteration, t, c, kStartDelay, false});
      return;
    }
    start_roots(c);
  }

  void start_roots(int c) {
    const Schedule& sched = *collectives_[c].schedule;
    for (uint32_t k = 0; k < sched.steps.size(); ++k)
      if (sched.pred_count[k] == 0) start_step(c, k);
  }

  void start_step(int c, uint32_t k) {
    const CommStep& step = collectives_[c].schedule->steps[k];
    uint32_t s = new_slot();
    auto comm = sg4::Comm::sendto_init(platform_.host(step.src), platform_.host(step.dst));
    comm->set_payload_size(static_cast<uint64_t>(std::llround(step.bytes * kByteScale)));
    comm->set_data(reinterpret_cast<void*>(static_cast<uintptr_t>(s)));
    slots_[s] = Slot{comm, collectives_[c].iteration, collectives_[c].task, c, k, false};
    ++activities_;
    comm->start();
  }

  void on_completion(sg4::Activity const& a) {
    graveyard_.clear();
    auto s = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a.get_data<void>()));
    Slot slot = slots_[s];
    graveyard_.push_back(std::move(slots_[s].activity));
    free_slots_.push_back(s);
    if (slot.collective < 0) {
      finished_.emplace_back(slot.iteration, slot.task);
    } else {
      if (slot.step == kStartDelay) {
        start_roots(slot.collective);
        drain();
        return;
      }
      CollectiveRun& run = collectives_[slot.collective];
      const Schedule& sched = *run.schedule;
      const CommStep& step = sched.steps[slot.step];
      const double server_Bps = group_.server_reduction_Bps;
      if (!slot.reduction && step.server_reduce && server_Bps > 0 && step.reduce_bytes > 0) {
        // A server's sum runs on its CPU at the server summation throughput.
        sg4::Host* cpu = platform_.cpu(step.dst);
        start_exec(cpu, step.reduce_bytes / server_Bps * cpu->get_speed(),
                   Slot{nullptr, slot.iteration, slot.task, slot.collective, slot.step, true});
        drain();
        return;
      }
      if (!slot.reduction && !step.server_reduce && config_.reduction_Bps > 0 &&
          step.reduce_bytes > 0) {
        // The receiver reduces what arrived before anything that depends on it proceeds.
        const double flops = step.reduce_bytes / config_.reduction_Bps * platform_.speed(step.dst);
        start_exec(platform_.host(step.dst), flops,
                   Slot{nullptr, slot.iteration, slot.task, slot.collective, slot.step, true});
        drain();
        return;
      }
      for (uint32_t i = sched.succ_offsets[slot.step]; i < sched.succ_offsets[slot.step + 1]; ++i)
        if (--run.pending[sched.succ[i]] == 0) start_step(slot.collective, sched.succ[i]);
      if (--run.remaining == 0) {
        finished_.emplace_back(run.iteration, run.task);
        free_collectives_.push_back(slot.collective);
      }
    }
    drain();
  }

  /// Completes finished tasks and starts ready ones until neither is left.
  void drain() {
    while (!finished_.empty() || !ready_.empty()) {
      if (!ready_.empty()) {
        auto [i, t] = ready_.front();
        ready_.pop_front();
        start_task(i, t);
        continue;
      }
      auto [i, t] = finished_.front();
      finished_.pop_front();
      complete(i, t);
    }
  }

  void complete(int iteration, uint32_t t) {
    Live& l = live(iteration);
    const double now = sg4::Engine::get_clock();
    l.done[t] = 1;
    const Task& task = l.f.graph.task(t);
    if (observer_ != nullptr) observer_->task_done(task, l.start[t], now);
    if (task.queue >= 0) {
      Queue& q = queues_[task.queue];
      q.busy = false;
      if (!q.waiting.empty()) {
        auto [wi, wt] = q.waiting.front();
        q.waiting.pop_front();
        q.busy = true;
        start_now(wi, wt);
      }
    }
    for (uint32_t i = l.succ_off[t]; i < l.succ_off[t + 1]; ++i)
      if (--l.pending[l.succ[i]] == 0) ready_.emplace_back(iteration, l.succ[i]);
    if (auto it = l.cross_out.find(t); it != l.cross_out.end()) {
      for (auto [iter, task] : it->second)
        if (--live(iter).pending[task] == 0) ready_.emplace_back(iter, task);
      l.cross_out.erase(it);
    }
    --l.remaining;
    auto& d = live_[static_cast<size_t>(iteration % groups_)];
    while (!d.empty() && d.front().remaining == 0) {
      d.pop_front();
      ++base_[iteration % groups_];
    }
  }

  const EngineConfig& config_;
  CollectiveGroup group_;
  NetworkCost cost_;
  std::map<TensorKey, double> analytic_;
  std::map<int64_t, AlphaBeta> p2p_costs_;  // analytic point-to-point cost per (src, dst)
  Platform& platform_;
  const Scheme* scheme_;
  int iterations_;
  const Collective& collective_;
  TaskObserver* observer_;
  int groups_ = 1;
  std::vector<std::deque<Live>> live_;  // per group, oldest iteration first
  std::vector<int> base_, built_;       // per group: oldest live and next unbuilt iteration
  std::deque<std::pair<int, uint32_t>> ready_, finished_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::vector<CollectiveRun> collectives_;
  std::vector<Queue> queues_;
  std::vector<int> free_collectives_;
  std::map<TensorKey, Schedule> schedules_;  // rank 0's messages only when rotation_
  bool rotation_ = false;                    // flow_symmetry "rotation"
  std::string symmetry_error_;               // why rotation_ cannot go on (the run stops)
  uint64_t activities_ = 0;
};

}  // namespace

EngineResult run_training(const EngineConfig& config, const Scheme& scheme, int iterations,
                          const Collective& collective, TaskObserver& observer) {
  Platform platform(config);
  if (config.fidelity == Fidelity::analytic && !config.analytic_on_simgrid) {
    // SimGrid only routes: the costs are those the SimGrid runner would time its activities
    // with, the execution is sim/analytic's (no activity list to scan per completion).
    AnalyticCosts costs;
    costs.group = config.group;
    costs.group.ranks = platform.size();
    costs.network = platform.network_cost(costs.group, config.reduction_Bps);
    costs.route = [&platform](int src, int dst) { return platform.route_cost(src, dst); };
    for (int h = 0; h < platform.hosts(); ++h) costs.host_speed_flops.push_back(platform.speed(h));
    XBT_VERB("analytic run of %d iterations of %s on %d workers", iterations, scheme.name().c_str(),
             platform.size());
    return run_analytic(scheme, iterations, collective, costs, observer);
  }
  Runner runner(config, platform, &scheme, iterations, collective, &observer);
  XBT_VERB("simulating %d iterations of %s on %d workers", iterations, scheme.name().c_str(),
           platform.size());
  return runner.run_training();
}

EngineResult run_single_collective(const EngineConfig& config, const Collective& collective,
                                   double bytes) {
  Platform platform(config);
  Runner runner(config, platform, nullptr, 1, collective, nullptr);
  return runner.run_collective(bytes);
}

}  // namespace sgdsim
