#pragma once
// Single-server membership changes, carried through the log as kConfChange entries.
//
// Decision (Raft thesis §4.1): a configuration takes effect on every node as soon as its entry is
// APPENDED to that node's log (not when committed); if the entry is later truncated away, the node
// falls back to the previous configuration. Only one change may be uncommitted at a time, and a
// leader accepts a change only after it has committed an entry of its own term.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "consensus/types.h"

namespace zkraft::consensus {

enum class ConfChangeType : uint8_t {
  kAddVoter = 1,       // add a new voter (prefer kAddLearner + kPromoteLearner to avoid stalls)
  kAddLearner = 2,     // add a non-voting member that receives the log
  kRemoveNode = 3,     // remove a voter or learner
  kPromoteLearner = 4, // make an existing learner a voter
};

struct ConfChange {
  ConfChangeType type = ConfChangeType::kAddLearner;
  NodeId node = 0;
  bool operator==(const ConfChange&) const = default;
};

std::string encode_conf_change(const ConfChange& cc);
std::optional<ConfChange> decode_conf_change(std::string_view bytes);

// Applies `cc` to `m`. Returns false (leaving `m` unchanged) when the change makes no sense for
// `m` (adding an existing member, promoting a non-learner, removing a non-member, removing the
// last voter). Voter and learner lists stay sorted.
bool apply_conf_change(Membership& m, const ConfChange& cc);

bool is_voter(const Membership& m, NodeId id);
bool is_learner(const Membership& m, NodeId id);

}  // namespace zkraft::consensus
