#pragma once
/// Child processes that end with their parent: a killed sgdsim (even by SIGKILL) leaves no run
/// of its own running behind.
#include <sys/types.h>

#include <string>
#include <vector>

namespace sgdsim {

/// In a just-forked child of `parent`: asks the kernel for `sig` when the parent ends
/// (PR_SET_PDEATHSIG), and raises it at once if the parent has already ended.
/// Async-signal-safe.
void die_with_parent(pid_t parent, int sig) noexcept;

/// Starts `argv[0]` with arguments `argv`: standard input /dev/null, standard output and error
/// into `log` (created or truncated, never through a link), SIGINT, SIGTERM, SIGHUP and SIGPIPE
/// at their defaults, no signal blocked, and SIGTERM when this process ends. Throws
/// std::runtime_error naming the program if it cannot start.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log);

/// Keeps memory freed by this process for its later allocations instead of returning it to
/// the kernel (glibc only; elsewhere nothing): a simulation frees and allocates its iteration's
/// tens of MB every iteration, and memory returned is zeroed again by the kernel at its next use.
void keep_freed_memory() noexcept;

}  // namespace sgdsim
