#pragma once
// LiveSnapshotCheck: checks that a live snapshot's bytes hold the tree as it was when the
// snapshot began (ZnodeTree::begin_live_snapshot): as many records as the tree had nodes then,
// whose node hashes sum to the tree's rolling digest then. A snapshot that failed it would make
// a restore from it lose or invent writes.
//
// Why a type of its own, and not a sum the walk keeps: hashing each record was more than half of
// the walk's time on the state thread (tree_memory_bench 1000000 100: 620-659 ms with it, 243-312
// ms without), and every write waits for that thread. The snapshot's file thread runs this
// instead, on the bytes it writes.
//
// Invariants: the records are read exactly as ZnodeTree::write_node writes them (tree/snapshot.cc);
// every piece given to add() ends at the end of a record, since the live snapshot writes whole
// records per step (the bytes before the first record, the headers, are skipped by count).

#include <cstdint>
#include <string_view>

namespace zkraft::tree {

class LiveSnapshotCheck {
 public:
  // records_start: the bytes of the stream before the first record; records and digest: the
  // tree's node count and rolling digest at the start.
  LiveSnapshotCheck(uint64_t records_start, uint64_t records, uint64_t digest)
      : skip_(records_start), records_(records), digest_(digest) {}

  // The stream's next bytes, in order. False if a record does not parse or a piece ends inside
  // one (the bytes are not a live snapshot's).
  bool add(std::string_view piece);
  // Whether the records added so far are the tree at the start.
  bool holds_the_start() const { return seen_ == records_ && sum_ == digest_; }

  uint64_t records_seen() const { return seen_; }

 private:
  uint64_t skip_;
  uint64_t records_;
  uint64_t digest_;
  uint64_t seen_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace zkraft::tree
