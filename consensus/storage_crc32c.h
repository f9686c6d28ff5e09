#pragma once
// CRC-32C (Castagnoli), the checksum on every stored log entry, hard state and snapshot.
// Software slice-by-8; the same polynomial as iSCSI/ext4/LevelDB, so standard test vectors apply
// (crc32c("123456789") == 0xE3069283).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zkraft::consensus {

// Continues a CRC: crc32c_extend(crc32c_extend(0, a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(std::string_view s) { return crc32c_extend(0, s.data(), s.size()); }

}  // namespace zkraft::consensus
