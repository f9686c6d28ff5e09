#include "server/membership_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace zkraft::server {

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
