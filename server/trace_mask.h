#pragma once
// The text trace mask: one per process, as ZooKeeper's static ZooTrace.textTraceMask, so the
// four-letter words gtmk/stmk and the AdminServer's get_trace_mask/set_trace_mask read and set
// the same value from any thread. zkraft writes no trace log by it; it is kept for the tools
// (and rigs) that set it and read it back. Starts at ZooTrace's default, 306.

#include <cstdint>
#include <string_view>

namespace zkraft::server {

inline constexpr int64_t kDefaultTraceMask = 306;

int64_t text_trace_mask();
void set_text_trace_mask(int64_t mask);

// stmk's argument: the 8-byte big-endian long that follows the word on the connection
// (NIOServerCnxn reads it with getLong); false (nothing set) when fewer than 8 bytes came.
bool set_text_trace_mask_from(std::string_view bytes_after_word);

}  // namespace zkraft::server
