#pragma once
// zkraft-ctl slow-log: the slow-request log of every member, read through the `slow`
// four-letter word ("<seq>\t<epoch ms>\t<line>" per line, oldest first: slow_request_log.h), and
// printed as text or JSON. Pure: no sockets (main.cc asks the servers and polls for --follow).
//
// A line the server wrote is kept whole (`line`); its figures are parsed out when it has the
// slow-request log's form ("slow request: session 0x.. xid N <op>[ <path>] took T ms: A ms to
// the state thread, B ms in consensus, C ms waiting to be sent"), else they are null in JSON.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zkraft::tools {

struct SlowRequest {
  std::string endpoint;
  uint64_t seq = 0;
  int64_t wall_ms = 0;
  std::string line;
  bool parsed = false;  // the fields below were read from `line`
  std::string session;  // "0x..."
  int64_t xid = 0;
  std::string op;
  std::string path;     // "" when the request names none
  int64_t total_ms = 0, to_state_ms = 0, consensus_ms = 0, waiting_ms = 0;
};

// The `slow` word's answer; nullopt when it is not that (e.g. "slow is not executed because it
// is not in the whitelist.").
std::optional<std::vector<SlowRequest>> parse_slow_requests(const std::string& text,
                                                            const std::string& endpoint);
// Those with seq > after (what a follower has not printed yet).
std::vector<SlowRequest> newer_than(const std::vector<SlowRequest>& all, uint64_t after);

// "<endpoint> <UTC time, ms> #<seq> <line>"
std::string slow_request_text(const SlowRequest& r);
nlohmann::json slow_request_json(const SlowRequest& r);

}  // namespace zkraft::tools
