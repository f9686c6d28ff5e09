// ZkStateMachine's reconfig op: the new membership checked as PrepRequestProcessor checks it,
// then written to /zookeeper/config. Invariant: on any error /zookeeper/config is unchanged.
#include "server/zk_state_machine.h"

#include <algorithm>
#include <charconv>

#include "jute/errors.h"
#include "jute/responses.h"
#include "server/membership_text.h"
#include "tree/acl.h"

namespace zkraft::server {

namespace {

// Java's StringUtils.split as ZooKeeper uses it: split on `sep`, trim, drop the empty pieces.
std::vector<std::string_view> java_split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t c = s.find(sep);
    std::string_view item = s.substr(0, c);
    while (!item.empty() && static_cast<unsigned char>(item.front()) <= ' ') item.remove_prefix(1);
    while (!item.empty() && static_cast<unsigned char>(item.back()) <= ' ') item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    if (c == std::string_view::npos) break;
    s = s.substr(c + 1);
  }
  return out;
}

// Long.parseLong: an optional sign, then decimal digits only.
bool java_parse_long(std::string_view s, int64_t& v) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;  // from_chars into an unsigned takes no sign of its own
  uint64_t u = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), u);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (u > limit) return false;
  v = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  return true;
}

// Wildcard and loopback addresses, which checkAddressDuplicate leaves out. (ZooKeeper resolves
// host names first; the state machine compares them as written.)
bool special_address(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "::1" ||
         host == "localhost" || host.starts_with("127.");
}

// QuorumServer.checkAddressDuplicate: no quorum, election or client address of one server may
// be another's, wildcard and loopback addresses aside.
bool addresses_collide(const PeerConfig& a, const PeerConfig& b) {
  auto addrs = [](const PeerConfig& p) {
    std::vector<std::pair<std::string, int32_t>> v;
    for (auto [host, port] : {std::pair<std::string, int32_t>{p.host, p.peer_port},
                              {p.host, p.election_port}, {p.client_address, p.client_port}}) {
      if (port != 0 && !special_address(host)) v.emplace_back(host, port);
    }
    return v;
  };
  for (const auto& x : addrs(a)) {
    for (const auto& y : addrs(b)) {
      if (x == y) return true;
    }
  }
  return false;
}

}  // namespace

// The checks and their order are PrepRequestProcessor's (OpCode.reconfig, 3.8 and 3.9), so a
// caller without WRITE on /zookeeper/config who sends a wrong version or bad members learns that
// first: reconfigEnabled (ReconfigDisabled) -> the session (SessionExpired) -> standalone
// (Unimplemented) -> [reconfig in progress] -> fromConfig version (BadVersion) -> the members
// (BadArguments; an id that is not a number is MarshallingError, as Long.parseLong's exception
// is in ZooKeeper) -> at least 2 voters, standaloneEnabled's rule (BadArguments) -> a majority of
// the new voters in sync with the leader (NewConfigNoQuorum) -> WRITE on /zookeeper/config
// (NoAuth).
// Who is in sync is the leader's view of the moment, not replicated state: the leader stamps it
// into the entry when it proposes it (Txn::synced), so every server decides alike; an entry
// without it (from before the field) skips that check. [reconfig in progress] is not a state
// zkraft has: the committed config is the target the leader walks Raft's membership to, one
// change at a time, and a later reconfig re-targets that walk.
void ZkStateMachine::apply_reconfig(const tree::TxnContext& ctx, const Txn& txn,
                                    const jute::ReconfigRequest& req, ApplyOutcome& out) {
  namespace err = jute::err;
  if (!options_.reconfig_enabled) {
    out.err = err::kReconfigDisabled;  // ZooKeeper's default: reconfigEnabled=false
    return;
  }
  if (!sessions_.contains(txn.session_id)) {
    out.err = err::kSessionExpired;
    return;
  }
  const std::string path = "/zookeeper/config";
  const std::vector<jute::Id> super{{"super", ""}};
  jute::Buffer data;
  jute::Stat stat;
  std::vector<PeerConfig> members;
  int64_t version = 0;
  if (tree_.get_data(path, super, data, stat) != err::kOk || data.bytes.empty() ||
      !parse_membership_text(data.bytes, members, &version)) {
    out.err = err::kUnimplemented;  // standalone: nothing to reconfigure
    return;
  }
  if (req.cur_config_id != -1 && req.cur_config_id != version) {
    out.err = err::kBadVersion;
    return;
  }
  auto upsert = [&](const PeerConfig& p) {
    std::erase_if(members, [&](const PeerConfig& m) { return m.id == p.id; });
    members.push_back(p);
  };
  if (!req.new_members.empty()) {
    // Non-incremental: the new members replace the old ones (commas or newlines between them).
    members.clear();
    std::string specs = req.new_members;
    std::replace(specs.begin(), specs.end(), '\n', ',');
    for (auto spec : java_split(specs, ',')) {
      PeerConfig p;
      if (!parse_server_spec(spec, p, nullptr)) {
        out.err = err::kBadArguments;
        return;
      }
      upsert(p);
    }
  } else {
    // Incremental: the leaving servers go first, then each joiner is added or replaced.
    for (auto id_text : java_split(req.leaving_servers, ',')) {
      int64_t id = 0;
      if (!java_parse_long(id_text, id)) {
        out.err = err::kMarshallingError;
        return;
      }
      std::erase_if(members, [&](const PeerConfig& m) { return m.id == id; });
    }
    for (auto joiner : java_split(req.joining_servers, ',')) {
      auto parts = java_split(joiner, '=');
      if (parts.size() != 2) {
        out.err = err::kBadArguments;  // "Wrong format of server string"
        return;
      }
      std::string_view id_text = parts[0].substr(parts[0].rfind('.') + 1);
      int64_t id = 0;
      if (!java_parse_long(id_text, id)) {
        out.err = err::kMarshallingError;
        return;
      }
      PeerConfig p;
      if (!parse_server_entry("server." + std::string(id_text), id_text, parts[1], p, nullptr) ||
          p.client_port == 0) {
        out.err = err::kBadArguments;  // a joiner names its three addresses
        return;
      }
      for (const auto& m : members) {
        if (m.id != p.id && addresses_collide(p, m)) {
          out.err = err::kBadArguments;
          return;
        }
      }
      upsert(p);
    }
  }
  std::sort(members.begin(), members.end(),
            [](const PeerConfig& a, const PeerConfig& b) { return a.id < b.id; });
  size_t voters = std::count_if(members.begin(), members.end(),
                                [](const PeerConfig& m) { return m.role == PeerRole::kParticipant; });
  if (voters < 2) {
    // standaloneEnabled (ZooKeeper's default, and zkraft's only mode): at least 2 followers.
    out.err = err::kBadArguments;
    return;
  }
  if (!txn.synced.empty()) {
    // Leader.isQuorumSynced: the synced servers among the new voters make a majority of them.
    size_t synced = std::count_if(members.begin(), members.end(), [&](const PeerConfig& m) {
      return m.role == PeerRole::kParticipant &&
             std::find(txn.synced.begin(), txn.synced.end(), static_cast<uint64_t>(m.id)) != txn.synced.end();
    });
    if (synced <= voters / 2) {
      out.err = err::kNewConfigNoQuorum;
      return;
    }
  }
  std::vector<jute::ACL> acl;
  if (tree_.get_acl(path, super, acl, stat) != err::kOk) {
    out.err = err::kSystemError;
    return;
  }
  if (!tree::acl_allows(acl, jute::perms::kWrite, txn.auth, tree_.schemes())) {
    out.err = err::kNoAuth;
    return;
  }
  std::string text = membership_text(members, ctx.zxid);
  tree::TxnContext as_super = ctx;
  as_super.auth = &super;
  jute::Buffer new_data{text, false};
  out.err = tree_.set_data(as_super, path, new_data, -1, stat, out.triggers);
  if (out.err == err::kOk) {
    if (want_reply_) {
      jute::Writer w;
      jute::encode(w, jute::GetDataResponse{new_data, stat});
      out.reply = w.take();
    }
    out.membership_changed = true;
  }
}

}  // namespace zkraft::server
