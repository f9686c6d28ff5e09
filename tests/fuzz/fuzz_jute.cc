// libFuzzer target over everything that reads untrusted client bytes: the connect decoder, the
// frame decoder, decode_request for every op, and decode_reply for every op.
//
// Input layout: byte 0 picks the mode (connect / frames / request / reply). For request and reply,
// byte 1 picks the op: < 0x80 indexes a table of every op code (plus some unknown ones), otherwise
// the op is the next 4 bytes (big-endian), which is how the seeds made from golden frames say it.
// Besides the sanitizers, it checks properties: a decoded value re-encodes to bytes that decode
// to the same value; the frame decoder agrees with a plain reference splitter and never buffers
// more than one frame.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "jute/frame.h"
#include "jute/records.h"
#include "jute/reply.h"
#include "jute/request.h"

namespace {

using namespace zkraft::jute;

constexpr int32_t kOps[] = {
    op::kNotification, op::kCreate,        op::kDelete,          op::kExists,
    op::kGetData,      op::kSetData,       op::kGetACL,          op::kSetACL,
    op::kGetChildren,  op::kSync,          10,                   op::kPing,
    op::kGetChildren2, op::kCheck,         op::kMulti,           op::kCreate2,
    op::kReconfig,     op::kCheckWatches,  op::kRemoveWatches,   op::kCreateContainer,
    op::kDeleteContainer, op::kCreateTTL,  op::kMultiRead,       op::kAuth,
    op::kSetWatches,   op::kSasl,          op::kGetEphemerals,   op::kGetAllChildrenNumber,
    op::kSetWatches2,  op::kAddWatch,      op::kWhoAmI,          op::kCreateSession,
    op::kCloseSession, op::kError,         23,                   999};

void check(bool ok) {
  if (!ok) abort();
}

int32_t be32(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}

// Picks the op from the input; returns false if too short.
bool pick_op(std::string_view& in, int32_t& op) {
  if (in.empty()) return false;
  auto sel = static_cast<uint8_t>(in[0]);
  in.remove_prefix(1);
  if (sel < 0x80) {
    op = kOps[sel % std::size(kOps)];
    return true;
  }
  if (in.size() < 4) return false;
  op = be32(reinterpret_cast<const uint8_t*>(in.data()));
  in.remove_prefix(4);
  return true;
}

Limits small_limits() {
  Limits l;
  l.max_buffer = 4096;
  l.max_vector = 64;
  return l;
}

void fuzz_connect(std::string_view in) {
  ConnectRequest c;
  if (decode_connect_request(in, Limits{}, c) != err::kOk) return;
  Writer w;
  encode(w, c);
  ConnectRequest again;
  check(decode_connect_request(w.bytes(), Limits{}, again) == err::kOk);
  check(again == c);
  ConnectResponse r;
  Reader rr(in);
  if (decode(rr, r)) {
    Writer w2;
    encode(w2, r);
    Reader r2(w2.bytes());
    ConnectResponse back;
    check(decode(r2, back) && back == r);
  }
}

// A plain splitter over the whole input, to compare FrameDecoder against.
bool reference_frames(std::string_view s, int32_t max, std::vector<std::string>& out) {
  while (s.size() >= 4) {
    int32_t len = be32(reinterpret_cast<const uint8_t*>(s.data()));
    if (len < 0 || len > max) return false;
    if (s.size() - 4 < static_cast<size_t>(len)) return true;
    out.emplace_back(s.substr(4, static_cast<size_t>(len)));
    s.remove_prefix(4 + static_cast<size_t>(len));
  }
  return true;
}

void fuzz_frames(std::string_view in) {
  if (in.size() < 2) return;
  int32_t max = static_cast<uint8_t>(in[0]) * 16;
  size_t chunk = 1 + static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  FrameDecoder d(max);
  std::vector<std::string> got;
  bool ok = true;
  for (size_t pos = 0; pos < in.size() && ok; pos += chunk) {
    ok = d.feed(in.substr(pos, chunk), got);
    check(d.buffered() <= static_cast<size_t>(max > 4 ? max : 4));
  }
  std::vector<std::string> want;
  bool want_ok = reference_frames(in, max, want);
  check(ok == want_ok);
  check(got == want);
  for (const auto& f : got) {
    // Every frame the decoder hands out can go through the request decoder too.
    DecodedRequest req;
    (void)decode_request(f, small_limits(), req);
  }
}

void fuzz_request(std::string_view in) {
  int32_t op;
  if (!pick_op(in, op) || in.size() < 4) return;
  Writer w;
  w.write_raw(in.substr(0, 4));  // xid
  w.write_int(op);
  w.write_raw(in.substr(4));
  for (const Limits& limits : {Limits{}, small_limits()}) {
    DecodedRequest d;
    int32_t rc = decode_request(w.bytes(), limits, d);
    check(rc == err::kOk || rc == err::kMarshallingError || rc == err::kUnimplemented);
    if (rc != err::kOk) continue;
    check(d.header.type == op);
    std::string bytes = encode_request(d);
    DecodedRequest again;
    check(decode_request(bytes, limits, again) == err::kOk);
    check(again == d);
    check(encode_request(again) == bytes);
  }
}

void fuzz_reply(std::string_view in) {
  int32_t op;
  if (!pick_op(in, op)) return;
  for (const Limits& limits : {Limits{}, small_limits()}) {
    DecodedReply d;
    if (decode_reply(in, op, limits, d) != err::kOk) continue;
    std::string bytes = encode_reply(d);
    DecodedReply again;
    check(decode_reply(bytes, op, limits, again) == err::kOk);
    check(again == d);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: fuzz_connect(in); break;
    case 1: fuzz_frames(in); break;
    case 2: fuzz_request(in); break;
    case 3: fuzz_reply(in); break;
  }
  (void)classify_first_bytes(in);
  return 0;
}
