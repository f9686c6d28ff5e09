#include "session/session_password.h"

namespace zkraft::session {

namespace {
// java.util.Random's 48-bit linear congruential generator.
class JavaRandom {
 public:
  explicit JavaRandom(int64_t seed) : seed_((static_cast<uint64_t>(seed) ^ kMultiplier) & kMask) {}
  int32_t next_int() {
    seed_ = (seed_ * kMultiplier + kAddend) & kMask;
    return static_cast<int32_t>(static_cast<uint32_t>(seed_ >> 16));
  }

 private:
  static constexpr uint64_t kMultiplier = 0x5DEECE66Dull;
  static constexpr uint64_t kAddend = 0xBull;
  static constexpr uint64_t kMask = (1ull << 48) - 1;
  uint64_t seed_;
};
}  // namespace

SessionPassword make_password(int64_t session_id, uint64_t secret) {
  JavaRandom rnd(session_id ^ static_cast<int64_t>(secret));
  SessionPassword p{};
  // Random.nextBytes: each nextInt() supplies up to 4 bytes, least significant first.
  for (size_t i = 0; i < p.size();) {
    uint32_t r = static_cast<uint32_t>(rnd.next_int());
    for (int n = 0; n < 4 && i < p.size(); ++n, r >>= 8) p[i++] = static_cast<uint8_t>(r);
  }
  return p;
}

std::string to_bytes(const SessionPassword& p) {
  return std::string(reinterpret_cast<const char*>(p.data()), p.size());
}

bool from_bytes(std::string_view bytes, SessionPassword& out) {
  if (bytes.size() != out.size()) return false;
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(bytes[i]);
  return true;
}

}  // namespace zkraft::session
