#pragma once
// The one rule for where a run of entries may be written to the durable log. LogStorage::append
// applies it to each write; GroupCommitLog applies it to each submission before merging, so that
// a bad submission fails alone instead of failing the whole group.
//
// A run is acceptable when its indexes are consecutive and, once the entries below `first` (the
// snapshot covers them; Raft may resend them) are skipped, it starts no later than last + 1.
// Starting at or below `last` replaces the stored suffix from there (conflict truncation).

#include <algorithm>
#include <string>
#include <vector>

#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

inline Status check_append_run(const std::vector<Entry>& entries, Index first, Index last) {
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].index != entries[0].index + i) {
      return Status::invalid_argument("entries are not contiguous at position " + std::to_string(i));
    }
  }
  if (entries.empty() || entries.back().index < first) return Status::ok();
  const Index start = std::max(entries[0].index, first);
  if (start > last + 1) {
    return Status::invalid_argument("append at index " + std::to_string(start) +
                                    " leaves a gap after last index " + std::to_string(last));
  }
  return Status::ok();
}

}  // namespace zkraft::consensus
