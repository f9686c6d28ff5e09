#include "consensus/storage_crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define ZKRAFT_CRC32C_X86 1
#endif

namespace zkraft::consensus {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// tables[k][b]: the CRC of byte b followed by k zero bytes, for slice-by-8.
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
  return t;
}

constexpr auto kTables = make_tables();

#ifdef ZKRAFT_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  // The instruction consumes little-endian words, as the table version assembles them; x86 is
  // little-endian, so a plain load is that word.
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}
#endif

using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

ExtendFn pick_extend() {
  return crc32c_hardware_available() ? crc32c_extend_hardware : crc32c_extend_portable;
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    // Little-endian assembly independent of host byte order.
    uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    uint32_t hi = uint32_t(p[4]) | uint32_t(p[5]) << 8 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 24;
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = kTables[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return ~c;
}

bool crc32c_hardware_available() {
#ifdef ZKRAFT_CRC32C_X86
  __builtin_cpu_init();  // may run before libgcc's own constructor has (a static's initialiser)
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t n) {
#ifdef ZKRAFT_CRC32C_X86
  return extend_sse42(crc, data, n);
#else
  return crc32c_extend_portable(crc, data, n);
#endif
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  static const ExtendFn extend = pick_extend();  // the CPU does not change while we run
  return extend(crc, data, n);
}

}  // namespace zkraft::consensus
