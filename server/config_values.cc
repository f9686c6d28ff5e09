#include "server/config_values.h"

#include <cctype>
#include <charconv>
#include <sstream>

namespace zkraft::server::config_values {

bool fail(std::string* error, const std::string& msg) {
  if (error != nullptr) *error = "config error: " + msg;
  return false;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<int64_t> to_int(std::string_view text) {
  std::string t = trim(text);
  int64_t v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (!t.empty() && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (t.empty() || ec != std::errc() || p != e) return std::nullopt;
  return v;
}

bool parse_int(const std::string& key, std::string_view text, int64_t lo, int64_t hi, int64_t& out,
               std::string* error) {
  auto v = to_int(text);
  const char* what = lo >= 1 ? "not a positive integer" : lo == 0 ? "not a non-negative integer"
                                                                   : "not an integer";
  if (!v) return fail(error, key + ": " + what + " \"" + std::string(text) + "\"");
  if (*v < lo || *v > hi) {
    return fail(error, key + ": " + std::to_string(*v) + " is out of range [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  }
  out = *v;
  return true;
}

bool parse_bool(const std::string& key, std::string_view text, bool& out, std::string* error) {
  std::string t = lower(trim(text));
  if (t == "true" || t == "yes" || t == "on" || t == "1") {
    out = true;
  } else if (t == "false" || t == "no" || t == "off" || t == "0") {
    out = false;
  } else {
    return fail(error, key + ": not a boolean (true/false/yes/no) \"" + std::string(text) + "\"");
  }
  return true;
}

std::set<std::string> split_words(std::string_view text) {
  std::set<std::string> out;
  std::string item;
  std::istringstream in{std::string(text)};
  while (std::getline(in, item, ',')) {
    std::string w = trim(item);
    if (!w.empty()) out.insert(w);
  }
  return out;
}

}  // namespace zkraft::server::config_values
