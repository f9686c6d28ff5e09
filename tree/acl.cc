#include "tree/acl.h"

#include <algorithm>
#include <array>
#include <optional>

#include "jute/errors.h"

namespace zkraft::tree {

namespace {

// Java's Integer.parseInt for small non-negative-ish decimal numbers; nullopt on any junk.
std::optional<int32_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
    if (v > 0x80000000LL) return std::nullopt;
  }
  if (neg) v = -v;
  if (v > 0x7fffffffLL) return std::nullopt;
  return static_cast<int32_t>(v);
}

std::vector<std::string_view> split_keep_empty(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + sep.size();
  }
}

std::optional<std::vector<uint8_t>> v4_bytes(std::string_view addr) {
  auto parts = split_keep_empty(addr, ".");
  if (parts.size() != 4) return std::nullopt;
  std::vector<uint8_t> b(4);
  for (int i = 0; i < 4; ++i) {
    auto v = parse_int(parts[i]);
    if (!v || *v < 0 || *v > 255) return std::nullopt;
    b[i] = static_cast<uint8_t>(*v);
  }
  return b;
}

bool parse_v6_segments(std::vector<uint8_t>& out, size_t offset, const std::vector<std::string_view>& segs) {
  for (size_t k = 0; k < segs.size(); ++k) {
    std::string_view seg = segs[k];
    if (seg.empty() || seg.size() > 4) return false;
    uint32_t v = 0;
    for (char c : seg) {
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return false;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    out[offset + 2 * k] = static_cast<uint8_t>(v >> 8);
    out[offset + 2 * k + 1] = static_cast<uint8_t>(v);
  }
  return true;
}

std::optional<std::vector<uint8_t>> v6_bytes(std::string_view addr) {
  auto halves = split_keep_empty(addr, "::");
  std::vector<std::string_view> s1, s2;
  if (halves.size() == 1) {
    s1 = split_keep_empty(halves[0], ":");
    if (s1.size() != 8) return std::nullopt;
  } else if (halves.size() == 2) {
    if (!halves[0].empty()) s1 = split_keep_empty(halves[0], ":");
    if (!halves[1].empty()) s2 = split_keep_empty(halves[1], ":");
    if (s1.size() + s2.size() >= 8) return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::vector<uint8_t> b(16, 0);
  if (!parse_v6_segments(b, 0, s1)) return std::nullopt;
  if (!parse_v6_segments(b, 16 - 2 * s2.size(), s2)) return std::nullopt;
  return b;
}

// As IPAuthenticationProvider.addr2Bytes: any ':' means IPv6, else any '.' means IPv4.
std::optional<std::vector<uint8_t>> addr_bytes(std::string_view addr) {
  if (addr.find(':') != std::string_view::npos) return v6_bytes(addr);
  if (addr.find('.') != std::string_view::npos) return v4_bytes(addr);
  return std::nullopt;
}

void mask_bits(std::vector<uint8_t>& b, int32_t bits) {
  size_t start = static_cast<size_t>(bits / 8);
  int mask = ~((1 << (8 - bits % 8)) - 1);
  for (; start < b.size(); ++start) {
    b[start] = static_cast<uint8_t>(b[start] & mask);
    mask = 0;
  }
}

// Parses "addr[/bits]" into masked bytes and the bit count.
std::optional<std::pair<std::vector<uint8_t>, int32_t>> parse_ip_expr(std::string_view expr) {
  size_t slash = expr.find('/');
  auto bytes = addr_bytes(expr.substr(0, slash));
  if (!bytes) return std::nullopt;
  auto bits = static_cast<int32_t>(bytes->size() * 8);
  if (slash != std::string_view::npos) {
    auto v = parse_int(expr.substr(slash + 1));
    if (!v || *v < 0 || *v > bits) return std::nullopt;
    bits = *v;
  }
  return std::make_pair(std::move(*bytes), bits);
}

bool scheme_matches(std::string_view scheme, std::string_view caller_id, std::string_view acl_id) {
  if (scheme == "ip") return ip_matches(caller_id, acl_id);
  return caller_id == acl_id;  // digest and the extra schemes compare by equality
}

}  // namespace

bool AuthSchemes::known(std::string_view scheme) const {
  return scheme == "digest" || scheme == "ip" ||
         std::find(extra.begin(), extra.end(), scheme) != extra.end();
}

bool AuthSchemes::authenticated(std::string_view scheme) const {
  return scheme == "digest" || std::find(extra.begin(), extra.end(), scheme) != extra.end();
}

bool ip_matches(std::string_view addr, std::string_view acl_expr) {
  auto expr = parse_ip_expr(acl_expr);
  if (!expr) return false;
  auto remote = addr_bytes(addr);
  if (!remote || remote->size() != expr->first.size()) return false;
  mask_bits(expr->first, expr->second);
  mask_bits(*remote, expr->second);
  return *remote == expr->first;
}

bool ip_acl_valid(std::string_view acl_expr) { return parse_ip_expr(acl_expr).has_value(); }

bool digest_id_valid(std::string_view id) {
  // Java String.split(":") drops trailing empty strings; exactly two parts must remain.
  auto parts = split_keep_empty(id, ":");
  while (parts.size() > 1 && parts.back().empty()) parts.pop_back();
  return parts.size() == 2;
}

bool acl_allows(const std::vector<jute::ACL>& acl, int32_t perm, const std::vector<jute::Id>& auth,
                const AuthSchemes& schemes) {
  if (acl.empty()) return true;
  for (const auto& id : auth) {
    if (id.scheme == "super") return true;
  }
  for (const auto& a : acl) {
    if ((a.perms & perm) == 0) continue;
    if (a.id.scheme == "world" && a.id.id == "anyone") return true;
    if (!schemes.known(a.id.scheme)) continue;
    for (const auto& id : auth) {
      if (id.scheme == a.id.scheme && scheme_matches(id.scheme, id.id, a.id.id)) return true;
    }
  }
  return false;
}

int32_t fixup_acl(const std::vector<jute::ACL>& in, const std::vector<jute::Id>& auth,
                  const AuthSchemes& schemes, std::vector<jute::ACL>& out) {
  std::vector<jute::ACL> unique;
  for (const auto& a : in) {
    if (std::find(unique.begin(), unique.end(), a) == unique.end()) unique.push_back(a);
  }
  if (unique.empty()) return jute::err::kInvalidAcl;
  std::vector<jute::ACL> rv;
  for (const auto& a : unique) {
    if (a.id.scheme == "world" && a.id.id == "anyone") {
      rv.push_back(a);
    } else if (a.id.scheme == "auth") {
      bool any = false;
      for (const auto& cid : auth) {
        if (schemes.authenticated(cid.scheme)) {
          any = true;
          rv.push_back(jute::ACL{a.perms, cid});
        }
      }
      if (!any) return jute::err::kInvalidAcl;
    } else {
      bool valid = false;
      if (a.id.scheme == "digest") valid = digest_id_valid(a.id.id);
      else if (a.id.scheme == "ip") valid = ip_acl_valid(a.id.id);
      else valid = schemes.known(a.id.scheme);
      if (!valid) return jute::err::kInvalidAcl;
      rv.push_back(a);
    }
  }
  out = std::move(rv);
  return jute::err::kOk;
}

}  // namespace zkraft::tree
