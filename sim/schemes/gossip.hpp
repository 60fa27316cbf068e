#pragma once
/// Mixing matrices of decentralized SGD (dpsgd): the named topologies and the matrix files,
/// shared by the scheme's graph, its update rule and the tests.
#include <string>
#include <vector>

#include "sim/schemes/update_rule.hpp"

namespace sgdsim {

/// The named topologies `scheme.topology` accepts besides a file.
std::vector<std::string> gossip_topology_names();

/// W of a named topology on `workers` workers (uniform weights 1/(d+1) over a worker and its
/// d distinct neighbours; `complete`: 1/n); throws std::out_of_range for another name.
MixingRows topology_mixing(const std::string& topology, int workers);

/// Reads a mixing-matrix file (a JSON array of `workers` rows of `workers` numbers) and checks
/// it: square, non-negative, every row and column summing to 1 within 1e-9; a problem is an
/// InputError naming the file and the JSON pointer of the bad row or entry.
MixingRows read_mixing_file(const std::string& path, int workers);

}  // namespace sgdsim
