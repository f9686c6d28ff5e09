#include "consensus/conf_change.h"

#include <algorithm>

namespace zkraft::consensus {

namespace {
bool contains(const std::vector<NodeId>& v, NodeId id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}
void insert_sorted(std::vector<NodeId>& v, NodeId id) {
  v.insert(std::lower_bound(v.begin(), v.end(), id), id);
}
void erase(std::vector<NodeId>& v, NodeId id) { v.erase(std::remove(v.begin(), v.end(), id), v.end()); }
}  // namespace

std::string encode_conf_change(const ConfChange& cc) {
  std::string out;
  out.push_back(static_cast<char>(cc.type));
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>(cc.node >> s));
  return out;
}

std::optional<ConfChange> decode_conf_change(std::string_view bytes) {
  if (bytes.size() != 9) return std::nullopt;
  const auto t = static_cast<uint8_t>(bytes[0]);
  if (t < 1 || t > 4) return std::nullopt;
  ConfChange cc;
  cc.type = static_cast<ConfChangeType>(t);
  for (int i = 1; i < 9; ++i) cc.node = (cc.node << 8) | static_cast<uint8_t>(bytes[i]);
  if (cc.node == 0) return std::nullopt;
  return cc;
}

bool is_voter(const Membership& m, NodeId id) { return contains(m.voters, id); }
bool is_learner(const Membership& m, NodeId id) { return contains(m.learners, id); }

bool apply_conf_change(Membership& m, const ConfChange& cc) {
  const bool voter = is_voter(m, cc.node);
  const bool learner = is_learner(m, cc.node);
  switch (cc.type) {
    case ConfChangeType::kAddVoter:
      if (voter || learner) return false;
      insert_sorted(m.voters, cc.node);
      return true;
    case ConfChangeType::kAddLearner:
      if (voter || learner) return false;
      insert_sorted(m.learners, cc.node);
      return true;
    case ConfChangeType::kRemoveNode:
      if (voter) {
        if (m.voters.size() == 1) return false;
        erase(m.voters, cc.node);
        return true;
      }
      if (learner) {
        erase(m.learners, cc.node);
        return true;
      }
      return false;
    case ConfChangeType::kPromoteLearner:
      if (!learner) return false;
      erase(m.learners, cc.node);
      insert_sorted(m.voters, cc.node);
      return true;
  }
  return false;
}

}  // namespace zkraft::consensus
