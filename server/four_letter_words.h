#pragma once
// Four-letter words: the text answers ZooKeeper gives to `echo ruok | nc host 2181`, rendered
// byte for byte in ZooKeeper 3.9's formats from a ServerStatus (protocol ref §6, §9).
//
// Pure functions: no I/O, no clocks. The caller detects a 4lw (is_four_letter_word on a new
// connection's first 4 bytes), performs any side effect the word asks for (crst/srst reset stats,
// stmk sets the trace mask) and writes the returned text, then closes the connection.

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/config.h"
#include "server/server_status.h"

namespace zkraft::server {

// True for the words ZooKeeper 3.9.4 knows: conf cons crst dirs dump envi gtmk hash isro mntr
// ruok srst srvr stat stmk wchc wchp wchs. Anything else on a new connection is a frame length.
bool is_four_letter_word(std::string_view cmd);
// zkraft's Raft words (lgif csnp rqld ydld, and slow: the recent slow requests;
// jute::kRaftFourLetterWords), also known words above.
// csnp, rqld and ydld act on consensus: the caller does that and writes the text; lgif renders
// from the status like the others.
bool is_raft_four_letter_word(std::string_view cmd);

// ZooKeeper's whitelist rule: srvr is always allowed (zkServer.sh needs it); "*" allows every
// known word; otherwise the word must be listed.
bool is_whitelisted(std::string_view cmd, const Config& config);

// "<cmd> is not executed because it is not in the whitelist.\n"
std::string not_whitelisted_text(std::string_view cmd);

// The full answer for `cmd`: the not-whitelisted text if the whitelist forbids it, the
// not-serving text where ZooKeeper gives it, else the command's output. Unknown words give "".
std::string render_four_letter_word(std::string_view cmd, const ServerStatus& status,
                                    const Config& config);

// One mntr figure: the 4lw prints "zk_<key>\t<value>", the admin command monitor "<key>": value.
// Integers, doubles (printed as Java does) and text, as ZooKeeper's gauges have them.
struct MonitorValue {
  using Value = std::variant<int64_t, double, std::string>;
  std::string key;
  Value value;
};
std::vector<MonitorValue> monitor_values(const ServerStatus& status);

// Java's Double.toString for the values mntr and srvr print (1.3415, 0.0, 1.0E-4).
std::string java_double(double v);
// Java's Date.toString in UTC ("Mon Nov 30 06:43:35 UTC 2026"), as `dump` prints deadlines.
std::string java_date_utc(int64_t epoch_ms);

}  // namespace zkraft::server
