// Times one MPI_Allreduce under SMPI (smpirun), for the sgdsim cross-check
// (tests/cli/smpi_test.cpp).
//
// usage: smpirun ... smpi_allreduce_timer BYTES [sum|noop] [shared|malloc]
//                                         [allreduce|allgather|reduce_scatter]
//
// The last argument picks the collective timed instead of MPI_Allreduce: MPI_Allgather of
// BYTES / RANKS from each rank (BYTES gathered in all), or MPI_Reduce_scatter of BYTES with
// BYTES / RANKS left on each rank (sgdsim collective --operation's sizes).
//
// "shared" (default): every rank allocates its send and receive buffers with SMPI_SHARED_MALLOC
// (64 ranks x 100 MB need no real memory: SMPI maps every block of a shared allocation onto the
// same physical pages and skips the payload copy of messages between shared buffers).
// "malloc": plain malloc, the send buffer filled with 1.0f, as an unmodified MPI program has it:
// SMPI then holds and copies every rank's real payload (8 ranks x 100 MB: 1.6 GB). Then:
//
//   MPI_Barrier; a common start instant T = max over ranks of MPI_Wtime() + 1 s (reduced to
//   rank 0 and broadcast); every rank sleeps until T (smpi_nanosleep: simulated time only);
//   t0 = MPI_Wtime(); MPI_Allreduce(MPI_FLOAT, count = BYTES / 4, op); t1 = MPI_Wtime()
//
// so all ranks enter the allreduce at the same simulated instant, as in `sgdsim collective`
// (a barrier alone lets ranks leave it a few latencies apart, which is ~1 % of a 1 MB ring).
// Rank 0 prints one JSON line: {"ranks", "bytes", "time_s", "start_skew_s", "op"}, where
// time_s = max over ranks of (t1 - t0) and start_skew_s = max t0 - min t0 (should be ~1e-9,
// the nanosleep resolution).
//
// op "sum" is MPI_SUM; "noop" is a commutative user-defined operation that does nothing: the
// simulated time is the same (the runner sets smpi/simulate-computation:no), only the wall
// time of the real reduction loops is saved.
#include <mpi.h>
#include <smpi/smpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {
void noop(void*, void*, int*, MPI_Datatype*) {}

int fail(int rank, const char* msg) {
  if (rank == 0) std::fprintf(stderr, "smpi_allreduce_timer: %s\n", msg);
  MPI_Finalize();
  return 2;
}
}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || argc > 5)
    return fail(rank,
                "usage: smpi_allreduce_timer BYTES [sum|noop] [shared|malloc] "
                "[allreduce|allgather|reduce_scatter]");
  char* end = nullptr;
  const long long bytes = std::strtoll(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0' || bytes <= 0 || bytes % 4 != 0 || bytes / 4 > 2147483647LL)
    return fail(rank, "BYTES must be a positive multiple of 4 (MPI_FLOAT), count < 2^31");
  const char* op_name = argc >= 3 ? argv[2] : "sum";
  MPI_Op op = MPI_SUM;
  if (std::strcmp(op_name, "noop") == 0) {
    MPI_Op_create(&noop, /*commute=*/1, &op);
  } else if (std::strcmp(op_name, "sum") != 0) {
    return fail(rank, "op must be sum or noop");
  }
  const char* alloc_name = argc >= 4 ? argv[3] : "shared";
  const char* collective = argc == 5 ? argv[4] : "allreduce";
  if (std::strcmp(collective, "allreduce") != 0 && std::strcmp(collective, "allgather") != 0 &&
      std::strcmp(collective, "reduce_scatter") != 0)
    return fail(rank, "collective must be allreduce, allgather or reduce_scatter");
  if (std::strcmp(collective, "allreduce") != 0 && (bytes / 4) % size != 0)
    return fail(rank, "BYTES must be a multiple of 4 x RANKS for allgather and reduce_scatter");
  const bool shared = std::strcmp(alloc_name, "shared") == 0;
  if (!shared && std::strcmp(alloc_name, "malloc") != 0)
    return fail(rank, "allocation must be shared or malloc");
  const int count = static_cast<int>(bytes / 4);

  float* send = nullptr;
  float* recv = nullptr;
  if (shared) {
    send = static_cast<float*>(SMPI_SHARED_MALLOC(static_cast<size_t>(bytes)));
    recv = static_cast<float*>(SMPI_SHARED_MALLOC(static_cast<size_t>(bytes)));
  } else {
    send = static_cast<float*>(std::malloc(static_cast<size_t>(bytes)));
    recv = static_cast<float*>(std::malloc(static_cast<size_t>(bytes)));
    if (send == nullptr || recv == nullptr) return fail(rank, "out of memory");
    for (int i = 0; i < count; ++i) send[i] = 1.0f;
  }

  // A common start instant, well after every rank has left the barrier and the broadcast.
  MPI_Barrier(MPI_COMM_WORLD);
  double now = MPI_Wtime(), latest = 0;
  MPI_Reduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Bcast(&latest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const double start = latest + 1.0;
  const double wait = start - MPI_Wtime();
  if (wait <= 0) return fail(rank, "the start instant passed before the sleep");
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(wait);
  ts.tv_nsec = static_cast<long>((wait - static_cast<double>(ts.tv_sec)) * 1e9 + 0.5);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000L;
  }
  nanosleep(&ts, nullptr);  // smpi_nanosleep (smpi_helpers.h): advances simulated time only

  const double t0 = MPI_Wtime();
  if (std::strcmp(collective, "allgather") == 0) {
    MPI_Allgather(send, count / size, MPI_FLOAT, recv, count / size, MPI_FLOAT, MPI_COMM_WORLD);
  } else if (std::strcmp(collective, "reduce_scatter") == 0) {
    int* counts = static_cast<int*>(std::malloc(sizeof(int) * static_cast<size_t>(size)));
    for (int r = 0; r < size; ++r) counts[r] = count / size;
    MPI_Reduce_scatter(send, recv, counts, MPI_FLOAT, op, MPI_COMM_WORLD);
    std::free(counts);
  } else {
    MPI_Allreduce(send, recv, count, MPI_FLOAT, op, MPI_COMM_WORLD);
  }
  const double t1 = MPI_Wtime();

  double mine[3] = {t1 - t0, t0, -t0}, all[3] = {0, 0, 0};
  MPI_Reduce(mine, all, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "{\"ranks\":%d,\"bytes\":%lld,\"time_s\":%.17g,\"start_skew_s\":%.3g,\"op\":\"%s\","
        "\"alloc\":\"%s\",\"collective\":\"%s\"}\n",
        size, bytes, all[0], all[1] + all[2], op_name, alloc_name, collective);

  if (op != MPI_SUM) MPI_Op_free(&op);
  if (shared) {
    SMPI_SHARED_FREE(send);
    SMPI_SHARED_FREE(recv);
  } else {
    std::free(send);
    std::free(recv);
  }
  MPI_Finalize();
  return 0;
}
