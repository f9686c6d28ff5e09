// libFuzzer target over what reads bytes from the network outside the client protocol: the peer
// transport's frame header and handshake (any process that reaches the peer port can send them),
// HTTP requests to the AdminServer (Beast's parser with the admin port's limits, then the routes
// and commands of admin_commands.h), and the four-letter words with their whitelist.
//
// Input layout: byte 0 picks the mode; the rest is the bytes.
// Properties besides the sanitizers: a hello or ack that decodes re-encodes to a frame whose
// payload decodes to the same value; every admin answer is a status code HTTP knows and every JSON
// answer parses as JSON with "command" and "error".

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "consensus/peer_transport_frame.h"
#include "server/admin_commands.h"
#include "server/four_letter_words.h"

namespace {

using namespace zkraft;
namespace http = boost::beast::http;

#define check(ok) check_at((ok), __LINE__)
void check_at(bool ok, int line) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_wire: property at line %d does not hold\n", line);
    abort();
  }
}

void peer_frames(std::string_view bytes) {
  namespace t = consensus::transport;
  if (bytes.size() >= t::kHeaderBytes) {
    t::FrameHeader h;
    if (t::decode_header(bytes.data(), &h) == t::HeaderError::kNone) {
      const std::string again = t::encode_header(h.type, h.length);
      t::FrameHeader h2;
      check(t::decode_header(again.data(), &h2) == t::HeaderError::kNone);
      check(h2.type == h.type && h2.length == h.length);
    }
  }
  if (auto hello = t::decode_hello(bytes)) {
    const std::string frame = t::encode_hello(*hello);
    auto again = t::decode_hello(std::string_view(frame).substr(t::kHeaderBytes));
    check(again.has_value() && *again == *hello);
  }
  if (auto ack = t::decode_hello_ack(bytes)) {
    const std::string frame = t::encode_hello_ack(*ack);
    auto again = t::decode_hello_ack(std::string_view(frame).substr(t::kHeaderBytes));
    // The encoder keeps at most 1024 bytes of the reason (a handshake frame is at most 4096).
    check(again.has_value() && again->code == ack->code &&
          again->reason == std::string_view(ack->reason).substr(0, 1024));
  }
}

server::ServerStatus sample_status() {
  server::ServerStatus s;
  s.connections.push_back(server::ConnectionStatus{});
  s.connections.back().remote = "/127.0.0.1:40000";
  s.connections.back().session_id = 0x100000000000001;
  return s;
}

void admin_request(std::string_view bytes) {
  // The admin port's limits (AdminServer::Options defaults).
  http::request_parser<http::string_body> parser;
  parser.header_limit(8192);
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (used < bytes.size() && !parser.is_done()) {
    const std::size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) break;
    if (ec) return;  // answered 400/413/431 by the server; nothing more to check here
    if (n == 0) break;
    used += n;
  }
  if (!parser.is_done()) return;
  const auto& req = parser.get();
  server::AdminRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  if (auto it = req.find(http::field::authorization); it != req.end()) {
    r.authorization = std::string(it->value());
  }
  r.remote_address = "127.0.0.1";

  server::Config config;
  int64_t trace_mask = 0;
  int64_t last_snapshot_ms = -1;
  int64_t now = 0;
  server::AdminContext ctx;
  ctx.config = &config;
  ctx.initial_configuration = "tickTime=2000\n";
  ctx.fetch_status = [](server::StatsReset) { return std::optional(sample_status()); };
  ctx.trace_mask = &trace_mask;
  ctx.authorize = [](const std::vector<jute::Id>& ids) { return std::optional(!ids.empty()); };
  ctx.snapshot = [] { return std::optional(server::AdminSnapshot{"bytes", 7}); };
  ctx.monotonic_ms = [&now] { return now += 1000; };
  ctx.last_snapshot_ms = &last_snapshot_ms;
  server::AdminReply reply = server::handle_admin_request(r, ctx);
  check(reply.status >= 100 && reply.status <= 599);
  if (reply.content_type.find("json") != std::string::npos) {
    auto json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    check(!json.is_discarded());
    if (json.is_object()) check(json.contains("command") && json.contains("error"));
  }
}

void four_letter_word(std::string_view bytes) {
  if (bytes.size() < 4) return;
  const std::string_view cmd = bytes.substr(0, 4);
  server::Config config;
  config.four_letter_words.clear();
  std::string_view rest = bytes.substr(4);
  while (!rest.empty()) {  // the whitelist as 4lw.commands.whitelist splits it
    const std::size_t comma = rest.find(',');
    config.four_letter_words.insert(std::string(rest.substr(0, comma)));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  const bool allowed = server::is_whitelisted(cmd, config);
  if (!server::is_four_letter_word(cmd)) return;
  if (!allowed) {
    (void)server::not_whitelisted_text(cmd);
    return;
  }
  (void)server::render_four_letter_word(cmd, sample_status(), config);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: peer_frames(bytes); break;
    case 1: admin_request(bytes); break;
    case 2: four_letter_word(bytes); break;
  }
  return 0;
}
