#pragma once
/// BytePS's assignment of tensor partitions to servers (byteps/common/global.cc, operations.cc).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace sgdsim {

/// The key hashes BYTEPS_KEY_HASH_FN names ("djb2", its default, "sdbm", "naive") and
/// "round_robin" (declared key plus partition index; not a BytePS setting).
std::vector<std::string> byteps_key_hashes();

/// BytePS's hash of a partition key: djb2 and sdbm of the key's decimal digits
/// (Hash_DJB2, Hash_SDBM), naive ((key >> 16) + key % 65536) * 9973 (Hash_Naive).
uint64_t byteps_key_hash(const std::string& hash, uint64_t key);

/// The key of partition `index` of the tensor declared `declared_key`-th: declared << 16 + index
/// (operations.cc, InitTensor).
inline uint64_t byteps_partition_key(uint64_t declared_key, int index) {
  return (declared_key << 16) + static_cast<uint64_t>(index);
}

/// One partition of a tensor: who serves it and its size.
struct BytepsPart {
  int server = 0;    ///< server index, 0..servers-1
  double bytes = 0;  ///< partition size
};

/// BytePS's partition bound: partition_bytes rounded up to ranks_per_node pages of 4096 bytes
/// (global.cc: RoundUp(_partition_bytes, _local_size * _pagesize)); 0 = no partitioning.
double byteps_partition_bound(const CollectiveGroup& group);

/// The partitions of a tensor of `bytes` declared `group.tensor_key`-th: parts of the bound and
/// a remainder, each on the server its key hashes to (modulo `servers`).
std::vector<BytepsPart> byteps_partitions(const CollectiveGroup& group, double bytes, int servers);

}  // namespace sgdsim
