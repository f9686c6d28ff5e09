#pragma once
// The leader's outstanding ReadIndex requests (etcd's readOnly, "safe" mode).
//
// Each request records the commit index at the time it was made and a round number; the leader
// broadcasts a heartbeat carrying the newest round. A heartbeat answer for round r proves the
// follower still followed this leader after every request with round <= r was made, so it
// acknowledges all of them. Requests are released in order once a quorum acknowledged them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <vector>

#include "consensus/types.h"

namespace zkraft::consensus {

class ReadIndexQueue {
 public:
  struct Request {
    uint64_t round = 0;
    uint64_t context = 0;  // the caller's context
    NodeId from = 0;       // who asked (the leader itself or a follower)
    Index index = 0;       // commit index when asked
    std::set<NodeId> acks;
  };

  // Adds a request acknowledged by `self` (the leader); returns its round (for the heartbeat
  // context). The leader's own acknowledgement counts, like every other, only while it is a
  // voter: a leader that a committed membership change removed must not confirm reads with
  // itself plus a minority (seed 408349 of the simulation found exactly that).
  uint64_t add(uint64_t context, NodeId from, Index index, NodeId self) {
    Request r{++last_round_, context, from, index, {self}};
    pending_.push_back(std::move(r));
    return last_round_;
  }

  // `from` answered a heartbeat of round `round`. Returns the requests now confirmed by a
  // majority of `voters` (the membership now), oldest first, removing them; acknowledgements
  // of ids that are not voters (learners, removed members, a removed leader) do not count.
  std::vector<Request> ack(NodeId from, uint64_t round, const std::vector<NodeId>& voters) {
    std::vector<Request> released;
    if (round == 0) return released;
    for (auto& r : pending_) {
      if (r.round > round) break;
      r.acks.insert(from);
    }
    const size_t quorum = voters.size() / 2 + 1;
    auto voting_acks = [&voters](const Request& r) {
      return static_cast<size_t>(std::count_if(voters.begin(), voters.end(),
                                               [&r](NodeId v) { return r.acks.count(v) > 0; }));
    };
    // A later request acknowledged by a quorum confirms every earlier one too.
    size_t last_confirmed = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (voting_acks(pending_[i]) >= quorum) last_confirmed = i + 1;
    }
    for (size_t i = 0; i < last_confirmed; ++i) {
      released.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    return released;
  }

  uint64_t last_round() const { return pending_.empty() ? 0 : last_round_; }
  bool empty() const { return pending_.empty(); }
  void clear() { pending_.clear(); }

 private:
  uint64_t last_round_ = 0;
  std::deque<Request> pending_;
};

}  // namespace zkraft::consensus
