#include "server/membership_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

// host[:port] where host may be [v6]. Splits at the last ':' outside brackets.
void split_host_port(std::string_view s, std::string& host, std::string& port, bool& has_port) {
  has_port = false;
  size_t colon = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == ':' && depth == 0) colon = i;
  }
  if (colon == std::string_view::npos) {
    host = std::string(s);
  } else {
    host = std::string(s.substr(0, colon));
    port = std::string(s.substr(colon + 1));
    has_port = true;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
}

// Splits on ':' outside [ ] brackets.
std::vector<std::string> split_colons(std::string_view s) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ':' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

}  // namespace

bool parse_peer_role(const std::string& key, std::string_view text, PeerRole& role,
                     std::string* error) {
  std::string t = lower(trim(text));
  if (t == "participant") {
    role = PeerRole::kParticipant;
  } else if (t == "observer") {
    role = PeerRole::kObserver;
  } else {
    return fail(error, key + ": role must be participant or observer, not \"" + std::string(text) + "\"");
  }
  return true;
}

// server.N=host:peerPort:electionPort[:participant|observer][;[clientAddr:]clientPort]
bool parse_server_entry(const std::string& key, std::string_view id_text, std::string_view value,
                        PeerConfig& peer, std::string* error) {
  if (!parse_int_into(key, id_text, 0, kMaxServerId, peer.id, error)) return false;
  std::string v = trim(value);
  std::string client_part;
  if (size_t semi = v.find(';'); semi != std::string::npos) {
    client_part = trim(std::string_view(v).substr(semi + 1));
    v = trim(std::string_view(v).substr(0, semi));
  }
  std::vector<std::string> parts = split_colons(v);
  if (parts.size() < 3 || parts.size() > 4) {
    return fail(error, key + ": expected host:peerPort:electionPort[:participant|observer], got \"" +
                           std::string(value) + "\"");
  }
  peer.host = trim(parts[0]);
  if (peer.host.size() >= 2 && peer.host.front() == '[' && peer.host.back() == ']') {
    peer.host = peer.host.substr(1, peer.host.size() - 2);
  }
  if (peer.host.empty()) return fail(error, key + ": empty host in \"" + std::string(value) + "\"");
  if (!parse_int_into(key, parts[1], 1, kMaxPort, peer.peer_port, error)) return false;
  if (!parse_int_into(key, parts[2], 1, kMaxPort, peer.election_port, error)) return false;
  if (parts.size() == 4 && !parse_peer_role(key, parts[3], peer.role, error)) return false;
  if (!client_part.empty()) {
    std::string host, port;
    bool has_port = false;
    split_host_port(client_part, host, port, has_port);
    if (!has_port) {
      port = host;  // ";2181" means port only
      host.clear();
    }
    peer.client_address = host;
    if (!parse_int_into(key, port, 1, kMaxPort, peer.client_port, error)) return false;
  }
  return true;
}

bool parse_server_spec(std::string_view spec, PeerConfig& peer, std::string* error) {
  auto eq = spec.find('=');
  std::string_view key = spec.substr(0, eq);
  if (eq == std::string_view::npos || key.substr(0, 7) != "server.") {
    if (error) *error = "not a server.N=... line: " + std::string(spec);
    return false;
  }
  std::string k(key);
  return parse_server_entry(k, key.substr(7), spec.substr(eq + 1), peer, error);
}

std::string membership_text(const std::vector<PeerConfig>& servers, int64_t version) {
  std::string text;
  for (const auto& s : servers) {
    text += fmt::format("server.{}={}:{}:{}:{}", s.id, s.host, s.peer_port, s.election_port,
                        s.role == PeerRole::kObserver ? "observer" : "participant");
    if (s.client_port != 0) {
      text += fmt::format(";{}:{}", s.client_address.empty() ? "0.0.0.0" : s.client_address,
                          s.client_port);
    }
    text += '\n';
  }
  text += fmt::format("version={:x}", version);
  return text;
}

bool parse_membership_text(std::string_view text, std::vector<PeerConfig>& servers,
                           int64_t* version) {
  servers.clear();
  if (version) *version = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    if (line.substr(0, 8) == "version=") {
      int64_t v = 0;
      auto digits = line.substr(8);
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
      if (r.ec != std::errc()) return false;
      if (version) *version = v;
      continue;
    }
    PeerConfig peer;
    if (!parse_server_spec(line, peer, nullptr)) return false;
    servers.push_back(peer);
  }
  std::sort(servers.begin(), servers.end(),
            [](const PeerConfig& a, const PeerConfig& b) { return a.id < b.id; });
  return true;
}

std::vector<PeerConfig> bootstrap_servers(const Config& config) {
  std::vector<PeerConfig> out;
  for (const auto& s : config.servers) {
    if (config.joining && s.id == config.server_id) continue;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const PeerConfig& a, const PeerConfig& b) { return a.id < b.id; });
  return out;
}

}  // namespace zkraft::server
