#include "consensus/peer_transport_frame.h"

namespace zkraft::consensus::transport {
namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_be(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string frame(FrameType type, const std::string& payload) {
  std::string out = encode_header(type, static_cast<uint32_t>(payload.size()));
  out += payload;
  return out;
}

}  // namespace

void encode_header(FrameType type, uint32_t length, char* out) {
  out[0] = static_cast<char>(kMagic0);
  out[1] = static_cast<char>(kMagic1);
  out[2] = static_cast<char>(kVersion);
  out[3] = static_cast<char>(type);
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>((length >> (24 - 8 * i)) & 0xFF);
}

std::string encode_header(FrameType type, uint32_t length) {
  std::string out(kHeaderBytes, '\0');
  encode_header(type, length, out.data());
  return out;
}

HeaderError decode_header(const char* in, FrameHeader* out) {
  if (static_cast<uint8_t>(in[0]) != kMagic0 || static_cast<uint8_t>(in[1]) != kMagic1) {
    return HeaderError::kBadMagic;
  }
  if (static_cast<uint8_t>(in[2]) != kVersion) return HeaderError::kBadVersion;
  uint8_t type = static_cast<uint8_t>(in[3]);
  if (type < 1 || type > 5) return HeaderError::kBadType;
  out->type = static_cast<FrameType>(type);
  out->length = static_cast<uint32_t>(get_be(in + 4, 4));
  return HeaderError::kNone;
}

std::string encode_hello(const Hello& h) {
  std::string p;
  put_be(p, h.from, 8);
  put_be(p, h.to, 8);
  std::string_view name = std::string_view(h.cluster).substr(0, 1024);
  put_be(p, name.size(), 2);
  p.append(name);
  if (!h.nonce.empty()) {
    std::string_view user = std::string_view(h.user).substr(0, 1024);
    put_be(p, user.size(), 2);
    p.append(user);
    p.append(h.nonce);
  }
  return frame(FrameType::kHello, p);
}

std::optional<Hello> decode_hello(std::string_view p) {
  if (p.size() < 18) return std::nullopt;
  Hello h;
  h.from = get_be(p.data(), 8);
  h.to = get_be(p.data() + 8, 8);
  size_t n = get_be(p.data() + 16, 2);
  if (p.size() < 18 + n) return std::nullopt;
  h.cluster.assign(p.data() + 18, n);
  std::string_view rest = p.substr(18 + n);
  if (rest.empty()) return h;
  if (rest.size() < 2) return std::nullopt;
  size_t u = get_be(rest.data(), 2);
  if (rest.size() != 2 + u + kNonceBytes) return std::nullopt;
  h.user.assign(rest.data() + 2, u);
  h.nonce.assign(rest.data() + 2 + u, kNonceBytes);
  return h;
}

std::string encode_hello_ack(const HelloAck& a) {
  std::string p(1, static_cast<char>(a.code));
  p.append(std::string_view(a.reason).substr(0, 1024));
  return frame(FrameType::kHelloAck, p);
}

std::optional<HelloAck> decode_hello_ack(std::string_view p) {
  if (p.empty()) return std::nullopt;
  uint8_t code = static_cast<uint8_t>(p[0]);
  if (code > 5) return std::nullopt;
  return HelloAck{static_cast<AckCode>(code), std::string(p.substr(1))};
}

std::string encode_challenge(const Challenge& c) { return frame(FrameType::kChallenge, c.nonce + c.proof); }

std::optional<Challenge> decode_challenge(std::string_view p) {
  if (p.size() != kNonceBytes + kProofBytes) return std::nullopt;
  return Challenge{std::string(p.substr(0, kNonceBytes)), std::string(p.substr(kNonceBytes))};
}

std::string encode_auth(std::string_view proof) { return frame(FrameType::kAuth, std::string(proof)); }

std::optional<std::string> decode_auth(std::string_view p) {
  if (p.size() != kProofBytes) return std::nullopt;
  return std::string(p);
}

}  // namespace zkraft::consensus::transport
