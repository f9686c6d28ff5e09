#pragma once
// The peer transport's wire format. Every frame is an 8-byte header followed by its payload:
//
//   magic (2 bytes, 0x5A 0x52 "ZR") | version (1) | type (1) | payload length (4, big-endian)
//
// A connection starts with one kHello from the dialer and one kHelloAck from the acceptor; then
// the dialer sends kMessage frames only. With peer authentication (peer_transport_auth.h) the hello
// carries a user and a nonce and two frames come between: kChallenge from the acceptor, kAuth from
// the dialer. A hello without them is byte-for-byte the old one (connections are one-way: each server dials every peer
// for its own outbound traffic). Payloads of kMessage are opaque bytes (the Raft core's encoding).
// A frame with a bad magic, unknown version or type, or a length above the receiver's limit ends
// the connection.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "consensus/peer_transport_auth.h"
#include "consensus/types.h"

namespace zkraft::consensus::transport {

inline constexpr uint8_t kMagic0 = 0x5A;
inline constexpr uint8_t kMagic1 = 0x52;
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 8;
// Hello and ack frames are tiny; a larger one is refused before its payload is read.
inline constexpr uint32_t kMaxHandshakeBytes = 4096;

enum class FrameType : uint8_t { kHello = 1, kHelloAck = 2, kMessage = 3, kChallenge = 4, kAuth = 5 };

struct FrameHeader {
  FrameType type = FrameType::kMessage;
  uint32_t length = 0;
};

// Writes the 8-byte header into out[0..8).
void encode_header(FrameType type, uint32_t length, char* out);
std::string encode_header(FrameType type, uint32_t length);

enum class HeaderError { kNone, kBadMagic, kBadVersion, kBadType };
// Parses 8 bytes. Length limits are the caller's (they depend on the frame type and options).
HeaderError decode_header(const char* in, FrameHeader* out);

struct Hello {
  NodeId from = 0;
  NodeId to = 0;
  std::string cluster;
  // Authentication (both empty: the dialer does not authenticate). nonce is kNonceBytes long.
  std::string user = {};
  std::string nonce = {};
  bool operator==(const Hello&) const = default;
};
std::string encode_hello(const Hello& h);  // a whole frame: header + payload
std::optional<Hello> decode_hello(std::string_view payload);

enum class AckCode : uint8_t {
  kOk = 0,
  kUnknownId = 1,     // the dialer's id is not a configured peer
  kWrongTarget = 2,   // the dialer meant another server id
  kWrongCluster = 3,  // cluster names differ
  kAuthRequired = 4,  // the acceptor requires authentication and the hello had none
  kAuthFailed = 5,    // unknown user or a wrong proof
};
struct HelloAck {
  AckCode code = AckCode::kOk;
  std::string reason;
};
std::string encode_hello_ack(const HelloAck& a);  // a whole frame
std::optional<HelloAck> decode_hello_ack(std::string_view payload);

// The acceptor's answer to an authenticating hello: its nonce and its proof (kProofBytes).
struct Challenge {
  std::string nonce;
  std::string proof;
  bool operator==(const Challenge&) const = default;
};
std::string encode_challenge(const Challenge& c);  // a whole frame
std::optional<Challenge> decode_challenge(std::string_view payload);

// The dialer's proof.
std::string encode_auth(std::string_view proof);  // a whole frame
std::optional<std::string> decode_auth(std::string_view payload);

}  // namespace zkraft::consensus::transport
