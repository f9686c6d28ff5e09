#pragma once
// What zkraft-ctl knows of one member, parsed from its four-letter-word answers (srvr, lgif), and
// how it prints the members as text or JSON. Pure: no sockets (main.cc asks the servers).
//
// A member whose lgif is not whitelisted still shows its mode; its log figures stay empty.
// Lag is the leader's last log index minus the member's applied index; it is known only when
// the leader answered lgif.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zkraft::tools {

struct MemberView {
  std::string endpoint;
  bool reachable = false;
  std::string error;       // why not reachable
  bool serving = false;    // srvr gave a Mode line
  std::string mode;        // leader, follower, observer, standalone, read-only
  std::optional<std::string> zxid;
  std::map<std::string, uint64_t> log;  // lgif: first_log_idx, ..., last_snapshot_idx
};

// Fills mode/serving/zxid from srvr's answer.
void parse_srvr(const std::string& srvr, MemberView& m);
// "name<TAB>value" lines; nullopt if the text is not lgif's (e.g. "lgif is not executed ...").
std::optional<std::map<std::string, uint64_t>> parse_lgif(const std::string& text);

// The member that leads (or the standalone one), if any answered so.
const MemberView* find_leader(const std::vector<MemberView>& members);
std::optional<int64_t> lag_of(const MemberView& m, const MemberView* leader);

std::string members_table(const std::vector<MemberView>& members);
nlohmann::json members_json(const std::vector<MemberView>& members);

}  // namespace zkraft::tools
