#pragma once
// Text -> value helpers shared by every config reader (zoo.cfg, YAML, command line, server specs).
//
// Pure: no I/O, no logging. Each parse_* names the key in its one-line error message, so a
// caller can print the message as is, e.g. `config error: tickTime: not a positive integer "abc"`.

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace zkraft::server::config_values {

inline constexpr int64_t kMaxPort = 65535;
inline constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxServerId = 255;  // the top byte of a session id

// Sets *error to "config error: " + msg (if error is not null) and returns false.
bool fail(std::string* error, const std::string& msg);

std::string trim(std::string_view s);
std::string lower(std::string s);
std::optional<int64_t> to_int(std::string_view text);

// An integer in [lo, hi]; the message names `key` and quotes the text.
bool parse_int(const std::string& key, std::string_view text, int64_t lo, int64_t hi, int64_t& out,
               std::string* error);

template <typename T>
bool parse_int_into(const std::string& key, std::string_view text, int64_t lo, int64_t hi, T& out,
                    std::string* error) {
  int64_t v = 0;
  if (!parse_int(key, text, lo, hi, v, error)) return false;
  out = static_cast<T>(v);
  return true;
}

// true/yes/on/1 and false/no/off/0, any case.
bool parse_bool(const std::string& key, std::string_view text, bool& out, std::string* error);

// "srvr, ruok ,stat" -> {"srvr","ruok","stat"}; empty items dropped.
std::set<std::string> split_words(std::string_view text);

}  // namespace zkraft::server::config_values
