// The help texts and option tables of sgdsim calibrate (osu and nccl-tests), apart from the
// command so that each file stays one concept.
#include "sim/app/calibrate_help.hpp"

namespace sgdsim {

const char* const kCalibrateHelpHead =
    R"(usage: sgdsim calibrate osu LOG [--algorithm A] [--min-bytes N] [--ranks P]
                             [--check LOG[:P]]... [--json] [--time-limit T]
       sgdsim calibrate nccl-tests LOG [--algorithm A] [--inter-algorithm A] [--intra LOG]
                             [--intra-algorithm A] [--chunk-bytes N] [--channels C]
                             [--technology T] [--intra-technology T]
                             [--memory-bandwidth B] [--staged-host-bandwidth B]
                             [--nccl-buffer-size N] [--min-bytes N]
                             [--fit-max-bytes N] [--check LOG]... [--json]
                             [--time-limit T]

Fits the alpha (latency per message) and beta (seconds per byte) of a platform to an OSU MPI
allreduce latency log (osu_allreduce; lines "bytes latency_us" or "nodes,bytes latency_us",
'#' comments skipped), using the closed-form cost of collective algorithm A. Every formula is
linear in alpha and beta, so the fit is a linear least squares that minimizes the sum of
squared relative errors ((model - measured) / measured)^2 over the sizes >= N. alpha is
clamped to >= 0 (beta is then refitted alone); a log whose latency does not grow with size
is an error. Prints alpha, beta, the bandwidth 1/beta, and the scenario fields that make
sgdsim reproduce the fit: a generated star with one rank per node and network_model "ideal",
whose host-to-host route crosses two node links, so node_link.latency = alpha / 2 and
node_link.bandwidth = 1 / beta. Each --check log is then predicted with the fitted alpha and
beta (same algorithm, that log's ranks) and compared size by size.

)";

/// calibrate osu's options; "@ALGOS@" in a help text stands for the registered collectives.
const std::vector<OptionSpec> kOsuOptions = {
    {"--algorithm", "A",
     "collective whose formula is fitted (default ring), one of\n"
     "@ALGOS@"},
    {"--min-bytes", "N",
     "fit and check only sizes >= N (default 64KiB: small messages are\n"
     "dominated by MPI software overheads and eager/rendezvous switches)"},
    {"--ranks", "P", "ranks of LOG when it has no \"nodes,\" column (must agree if it has)"},
    {"--check", "LOG[:P]",
     "predict another log with the fitted alpha and beta and report the\n"
     "median |error| over sizes >= N; P = its ranks if it has no nodes column;\n"
     "repeatable"},
    {"--json", "",
     "print {\"log\",\"ranks\",\"algorithm\",\"min_bytes\",\"points\",\"alpha_s\",\n"
     "\"beta_s_per_byte\",\"bandwidth_Bps\",\"alpha_clamped\",\"median_abs_rel_error\",\n"
     "\"rms_rel_error\",\"scenario\",\"checks\":[{\"log\",\"ranks\",\"median_abs_rel_error\",\n"
     "\"max_abs_rel_error\",\"sizes_used\",\"points\":[{\"bytes\",\"measured_s\",\n"
     "\"predicted_s\",\"rel_error\"}]}]} (checks list every size of the log)"},
    {"--time-limit", "T",
     "stop after T of wall time (\"600\", \"10min\"): exit 3, nothing printed"},
};

const char* const kNcclHelpHead = R"(
sgdsim calibrate nccl-tests fits one link class to an nccl-tests all_reduce_perf log (out-of-place
times): ranks and GPUs per node come from its "# Rank N ... on HOST device D" lines. A one-node
log fits the intra-node class (NVLink, PCIe); a multi-node log fits the inter-node class, with
the intra-node class taken from --intra LOG (a one-node log, fitted first with the same
options) or, without it, one class for both. The fit minimizes the squared relative error of
the algorithm's closed form (a grid over alpha and bandwidth, then a pattern search, so
algorithms that choose between schedules by size fit too). Calibrations compose: the printed
scenario fields put the intra-node class on intra_node_link and the inter-node one on
node_link (network_model "ideal", devices_per_node from the log). Each --check log (another
scale) is predicted with the fitted classes and compared size by size.

)";

/// calibrate nccl-tests' options.
const std::vector<OptionSpec> kNcclOptions = {
    {"--algorithm", "A",
     "collective whose formula is fitted (default nccl_tuner: NCCL's tuner\n"
     "latency model; it fits the bandwidth and the launch latency, with\n"
     "link alphas 0 and NCCL's per-step latencies for the technologies)"},
    {"--technology", "T",
     "nccl_tuner: technology between nodes (default rdma; tcp, rdma,\n"
     "nvlink, pcie or custom), for NCCL's per-step latency"},
    {"--intra-technology", "T", "nccl_tuner: technology inside a node (default nvlink)"},
    {"--memory-bandwidth", "B",
     "nccl_tuner: GPU memory bandwidth (the allreduce reads its input and\n"
     "writes its output once); default: the datasheet value of the log's GPU\n"
     "(A100 40 GB 1555GBps, 80 GB 2039GBps, V100 900GBps, H100 3350GBps),\n"
     "else 0 (not modelled)"},
    {"--protocols", "auto|simple",
     "nccl_tuner: LL or LL128 where NCCL's tuner picks them (auto, the default:\n"
     "LL128 on one node only) or Simple at every size"},
    {"--tree-ll", "on|off",
     "nccl_tuner, multi-node LOG: fit NCCL's tree with the LL protocol to the\n"
     "sizes where NCCL's own tuner picks it (default on; whatever --min-bytes)"},
    {"--tuner-channels", "C",
     "channels of NCCL's graph in its choices (default 8: one per HDR NIC;\n"
     "tcp: 2, NCCL's channels per socket NIC)"},
    {"--tuner-channel-bandwidth", "B",
     "one network channel's speed in them (default: NCCL's topo.h speed of\n"
     "the --technology: rdma 24GBps, tcp 12GBps)"},
    {"--tuner-intra-channel-bandwidth", "B",
     "one channel's speed inside a node in NCCL's tree graph, used on two\n"
     "nodes (default: the --intra-technology's: nvlink 21GBps, pcie 12GBps;\n"
     "0 = the network's); with it NCCL picks its tree there for large sizes,\n"
     "and nccl_tuner moves the tree's volumes (half the ring's per NIC)"},
    {"--staged-host-bandwidth", "B",
     "nccl_tuner, one GPU per node: host side of NCCL's staged network path\n"
     "(no GPUDirect RDMA), all channels; the ring then runs slice by slice\n"
     "(default: tcp 12GBps, NCCL's PCIe Gen3 x16 rate; others 0 = off)"},
    {"--nccl-buffer-size", "N",
     "nccl_tuner, with a staged host path: NCCL_BUFFSIZE (default 4MiB)"},
    {"--nccl-algo", "A",
     "auto, ring or tree (NCCL_ALGO); default: what the log's NCCL_DEBUG\n"
     "lines say (\"NCCL_ALGO set by environment to Ring\"), else auto"},
    {"--inter-algorithm", "A", "hierarchical: algorithm among node leaders (default ring)"},
    {"--intra-algorithm", "A", "hierarchical: binomial (default), chain or ring inside a node"},
    {"--chunk-bytes", "N", "pipelining chunk of the fitted formula (default 0: messages whole)"},
    {"--channels", "C", "NCCL channels of the fitted formula (default 1)"},
    {"--intra", "LOG", "one-node log that fixes the intra-node class"},
    {"--min-bytes", "N", "fit and check sizes >= N (default 64KiB)"},
    {"--fit-max-bytes", "N",
     "fit only sizes <= N (checks still use every size); pipelined formulas\n"
     "walk their schedule, so fitting 16 GB sizes takes minutes"},
    {"--check", "LOG", "predict another log; repeatable"},
    {"--launch-per-gpu", "T",
     "nccl-tests' host launch time per GPU of a thread: a log of G >= 2 GPUs\n"
     "per thread (its -g) takes at least G x T per size (default: the median of\n"
     "the calibrated log's sizes <= 4 KiB over its G, else 4.36us)"},
    {"--channel-launch", "T",
     "nccl_tuner: cost per channel NCCL gives an operation on one node (its\n"
     "getAlgoInfo rule); default: fitted from a one-node log on its sizes >= 32 KiB;\n"
     "0 = not modelled"},
    {"--json", "",
     "print {\"log\",\"ranks\",\"gpus_per_node\",\"nodes\",\"algorithm\",\n"
     "\"inter_algorithm\",\"fitted\",\"min_bytes\",\"points\",\"intra\":{\"alpha_s\",\n"
     "\"beta_s_per_byte\",\"bandwidth_Bps\"},\"inter\":{...},\"launch_latency_s\"\n"
     "(nccl_tuner; else null),\"step_latency_intra_s\",\"step_latency_inter_s\",\n"
     "\"memory_bandwidth_Bps\",\"tree_ll_latency_s\",\"tree_ll_level_bandwidth_Bps\"\n"
     "(0 = not modelled),\"tree_ll_points\",\n"
     "\"median_abs_rel_error\",\n"
     "\"gpus_per_thread\",\"launch_per_gpu_s\",\"channel_launch_s\",\"rms_rel_error\",\n"
     "\"scenario\",\n"
     "\"checks\":[{\"log\",\"ranks\",\"gpus_per_node\",\"gpus_per_thread\",\n"
     "\"median_abs_rel_error\",\"max_abs_rel_error\",\"sizes_used\",\"points\":[{\"bytes\",\n"
     "\"measured_s\",\"predicted_s\",\"rel_error\",\"chosen\" (what timed the size)}]}]}"},
    {"--time-limit", "T", ""},
};

}  // namespace sgdsim
