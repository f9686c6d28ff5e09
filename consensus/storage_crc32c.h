#pragma once
// CRC-32C (Castagnoli), the checksum on every stored log entry, hard state and snapshot.
// The same polynomial as iSCSI/ext4/LevelDB, so standard test vectors apply
// (crc32c("123456789") == 0xE3069283). crc32c_extend uses the SSE4.2 crc32 instruction when the
// CPU has it (a 170 MB snapshot is checked on every start: ~5x faster than the table), else the
// portable slice-by-8; both give the same value for every input (tested).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zkraft::consensus {

// Continues a CRC: crc32c_extend(crc32c_extend(0, a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(std::string_view s) { return crc32c_extend(0, s.data(), s.size()); }

// The two implementations behind crc32c_extend, for tests and benchmarks. The hardware one may
// only be called when crc32c_hardware_available().
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n);
bool crc32c_hardware_available();
uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t n);

}  // namespace zkraft::consensus
