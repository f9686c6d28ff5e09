#include "tree/quota_stats.h"

#include <vector>

namespace zkraft::tree {

namespace {

std::optional<int64_t> parse_long(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    if (s.size() == 1) return std::nullopt;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    uint64_t next = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (next / 10 != v || next > (neg ? 0x8000000000000000ULL : 0x7fffffffffffffffULL)) return std::nullopt;
    v = next;
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

// Java String.split(regex) without limit: trailing empty strings are dropped.
std::vector<std::string_view> split_drop_trailing(std::string_view s, auto is_sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || is_sep(s[i])) {
      parts.push_back(s.substr(start, i - start));
      // A run of separators counts as one for "[,;]+"; "=" splits at every one.
      start = i + 1;
    }
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

}  // namespace

std::optional<std::map<std::string, int64_t>> parse_quota_stats(std::string_view text) {
  std::map<std::string, int64_t> out;
  if (text.empty()) return out;
  // "[,;]+": split on runs of ',' / ';'. Interior empty pieces cannot occur with a '+' regex, so
  // drop them (a leading one stays and makes Java fail, as below).
  auto raw = split_drop_trailing(text, [](char c) { return c == ',' || c == ';'; });
  std::vector<std::string_view> pairs;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].empty() && i != 0) continue;
    pairs.push_back(raw[i]);
  }
  for (std::string_view pair : pairs) {
    auto kv = split_drop_trailing(pair, [](char c) { return c == '='; });
    if (kv.size() < 2) return std::nullopt;  // Java: ArrayIndexOutOfBounds on kv[1]
    auto v = kv[1].empty() ? std::optional<int64_t>(-1) : parse_long(kv[1]);
    if (!v) return std::nullopt;
    out[std::string(kv[0])] = *v;
  }
  return out;
}

std::string format_quota_stats(const std::map<std::string, int64_t>& stats) {
  auto get = [&](const char* k) {
    auto it = stats.find(k);
    return it == stats.end() ? int64_t{-1} : it->second;
  };
  std::string out = "count=" + std::to_string(get("count")) + ",bytes=" + std::to_string(get("bytes"));
  bool extra = false;
  for (const auto& [k, v] : stats) {
    if (k == "count" || k == "bytes") continue;
    if (!extra) out += "=";
    extra = true;
    out += ";" + k + "=" + std::to_string(v);
  }
  return out;
}

}  // namespace zkraft::tree
