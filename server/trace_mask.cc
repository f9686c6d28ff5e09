#include "server/trace_mask.h"

#include <atomic>

namespace zkraft::server {

namespace {
std::atomic<int64_t> g_mask{kDefaultTraceMask};
}  // namespace

int64_t text_trace_mask() { return g_mask.load(std::memory_order_relaxed); }

void set_text_trace_mask(int64_t mask) { g_mask.store(mask, std::memory_order_relaxed); }

bool set_text_trace_mask_from(std::string_view bytes) {
  if (bytes.size() < 8) return false;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  set_text_trace_mask(static_cast<int64_t>(v));
  return true;
}

}  // namespace zkraft::server
