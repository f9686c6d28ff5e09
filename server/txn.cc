#include "server/txn.h"

namespace zkraft::server {

namespace {
constexpr int32_t kTxnFormat = 1;  // bump when the layout changes; old logs must stay readable
// format, kind, session_id, xid, op come before time_ms in every format-1 Txn.
constexpr size_t kTimeOffset = 4 + 4 + 8 + 4 + 4;
}

bool stamp_txn_time(std::string& encoded, int64_t time_ms) {
  if (encoded.size() < kTimeOffset + 8) return false;
  jute::Reader r(std::string_view(encoded).substr(0, 4));
  int32_t format = 0;
  if (!r.read_int(format) || format != kTxnFormat) return false;
  auto v = static_cast<uint64_t>(time_ms);
  for (int i = 7; i >= 0; --i, v >>= 8) encoded[kTimeOffset + static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return true;
}

std::optional<int32_t> peek_request_op(std::string_view encoded) {
  if (encoded.size() < kTimeOffset) return std::nullopt;
  jute::Reader r(encoded.substr(0, kTimeOffset));
  int32_t format = 0, kind = 0, xid = 0, op = 0;
  int64_t session = 0;
  if (!r.read_int(format) || format != kTxnFormat || !r.read_int(kind) || !r.read_long(session) ||
      !r.read_int(xid) || !r.read_int(op) || kind != static_cast<int32_t>(TxnKind::kRequest)) {
    return std::nullopt;
  }
  return op;
}

std::string encode_txn(const Txn& t) {
  jute::Writer w;
  w.write_int(kTxnFormat);
  w.write_int(static_cast<int32_t>(t.kind));
  w.write_long(t.session_id);
  w.write_int(t.xid);
  w.write_int(t.op);
  w.write_long(t.time_ms);
  w.write_long(static_cast<int64_t>(t.origin_server));
  w.write_long(static_cast<int64_t>(t.origin_request));
  w.write_count(static_cast<int32_t>(t.auth.size()));
  for (const auto& id : t.auth) jute::encode(w, id);
  w.write_buffer(jute::Buffer{t.request, false});
  w.write_int(t.timeout_ms);
  w.write_buffer(jute::Buffer{t.password, false});
  w.write_string(t.path);
  w.write_bool(t.expired);
  // Added later at the end, only when set: entries written before it still decode.
  if (!t.synced.empty()) {
    w.write_count(static_cast<int32_t>(t.synced.size()));
    for (uint64_t id : t.synced) w.write_long(static_cast<int64_t>(id));
  }
  return w.take();
}

std::optional<Txn> decode_txn(std::string_view bytes) {
  jute::Limits limits;
  limits.max_buffer = 64 << 20;  // the log is trusted input but still bounded
  jute::Reader r(bytes, limits);
  Txn t;
  int32_t format = 0, kind = 0, n = 0;
  int64_t origin_server = 0, origin_request = 0;
  if (!r.read_int(format) || format != kTxnFormat) return std::nullopt;
  r.read_int(kind);
  r.read_long(t.session_id);
  r.read_int(t.xid);
  r.read_int(t.op);
  r.read_long(t.time_ms);
  r.read_long(origin_server);
  r.read_long(origin_request);
  if (r.read_count(n, 8)) {
    t.auth.resize(static_cast<size_t>(n));
    for (auto& id : t.auth) jute::decode(r, id);
  }
  jute::Buffer request, password;
  r.read_buffer(request);
  r.read_int(t.timeout_ms);
  r.read_buffer(password);
  r.read_string(t.path);
  r.read_bool(t.expired);
  if (r.ok() && r.remaining() > 0 && r.read_count(n, 8)) {
    t.synced.resize(static_cast<size_t>(n));
    for (auto& id : t.synced) {
      int64_t v = 0;
      r.read_long(v);
      id = static_cast<uint64_t>(v);
    }
  }
  if (!r.ok() || kind < 1 || kind > static_cast<int32_t>(TxnKind::kRestore)) return std::nullopt;
  t.kind = static_cast<TxnKind>(kind);
  t.origin_server = static_cast<uint64_t>(origin_server);
  t.origin_request = static_cast<uint64_t>(origin_request);
  t.request = std::move(request.bytes);
  t.password = std::move(password.bytes);
  return t;
}

}  // namespace zkraft::server
