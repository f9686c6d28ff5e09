#pragma once
// Test helpers: client frames encoded with jute, as a client would send them (frame bodies, i.e.
// without the 4-byte length prefix the network thread strips), and the ClientMessages a network
// thread would make of them.

#include <cstdint>
#include <string>

#include "jute/archive.h"
#include "jute/connect.h"
#include "jute/constants.h"
#include "jute/data.h"
#include "jute/headers.h"
#include "jute/multi.h"
#include "jute/opcodes.h"
#include "jute/requests.h"
#include "server/client_message.h"
#include "server/txn.h"

namespace zkraft::server::testing {

inline const std::vector<jute::ACL>& open_acl() {
  static const std::vector<jute::ACL> acl{{jute::perms::kAll, {"world", "anyone"}}};
  return acl;
}

template <class T>
std::string record_bytes(const T& record) {
  jute::Writer w;
  jute::encode(w, record);
  return w.take();
}

// Request records built field by field (brace-initialised temporaries with nested Buffers make
// GCC 12 warn about maybe-uninitialized strings).
inline jute::CreateRequest create_request(std::string path, std::string data = "", int32_t flags = 0,
                                          std::vector<jute::ACL> acl = open_acl()) {
  jute::CreateRequest r;
  r.path = std::move(path);
  r.data.bytes = std::move(data);
  r.acl = std::move(acl);
  r.flags = flags;
  return r;
}
inline jute::AuthPacket auth_packet(std::string scheme, std::string auth) {
  jute::AuthPacket a;
  a.scheme = std::move(scheme);
  a.auth.bytes = std::move(auth);
  return a;
}

// ConnectRequest body. A new session unless `session` is given.
inline std::string connect_body(int32_t timeout_ms = 30000, int64_t session = 0,
                                std::string password = std::string(16, '\0'),
                                int64_t last_zxid = 0) {
  jute::ConnectRequest req;
  req.time_out = timeout_ms;
  req.session_id = session;
  req.passwd = jute::Buffer{std::move(password), false};
  req.last_zxid_seen = last_zxid;
  return record_bytes(req);
}

// RequestHeader + record body.
template <class Record>
std::string request_body(int32_t xid, int32_t op, const Record& record) {
  jute::Writer w;
  jute::encode(w, jute::RequestHeader{xid, op});
  jute::encode(w, record);
  return w.take();
}
inline std::string header_only(int32_t xid, int32_t op) {
  return record_bytes(jute::RequestHeader{xid, op});
}

// ---- ClientMessages
inline ClientMessage opened(uint64_t conn, std::string address = "127.0.0.1", uint16_t port = 40000) {
  ClientMessage m;
  m.kind = ClientMessage::Kind::kOpened;
  m.conn = conn;
  m.remote_address = std::move(address);
  m.remote_port = port;
  return m;
}
inline ClientMessage closed(uint64_t conn) {
  ClientMessage m;
  m.kind = ClientMessage::Kind::kClosed;
  m.conn = conn;
  return m;
}
inline ClientMessage four_letter_word(uint64_t conn, std::string word) {
  ClientMessage m;
  m.kind = ClientMessage::Kind::kFourLetterWord;
  m.conn = conn;
  m.word = std::move(word);
  return m;
}
inline ClientMessage connect_message(uint64_t conn, const std::string& body, int64_t received_ms = 0) {
  ClientMessage m = decode_connect_frame(conn, body, jute::Limits{});
  m.received_ms = received_ms;
  return m;
}
template <class Record>
ClientMessage request_message(uint64_t conn, int32_t xid, int32_t op, const Record& record,
                              int64_t received_ms = 0) {
  ClientMessage m = decode_request_frame(conn, request_body(xid, op, record), jute::Limits{});
  m.received_ms = received_ms;
  return m;
}
inline ClientMessage header_message(uint64_t conn, int32_t xid, int32_t op, int64_t received_ms = 0) {
  ClientMessage m = decode_request_frame(conn, header_only(xid, op), jute::Limits{});
  m.received_ms = received_ms;
  return m;
}

// ---- Txns for filling a ZkStateMachine
inline Txn create_session_txn(int64_t id, int32_t timeout_ms = 30000) {
  Txn t;
  t.kind = TxnKind::kCreateSession;
  t.session_id = id;
  t.timeout_ms = timeout_ms;
  t.password = std::string(16, 'p');
  return t;
}
template <class Record>
Txn request_txn(int64_t session, int32_t op, const Record& record, int64_t time_ms = 1000) {
  Txn t;
  t.kind = TxnKind::kRequest;
  t.session_id = session;
  t.op = op;
  t.time_ms = time_ms;
  t.request = record_bytes(record);
  return t;
}
inline Txn create_txn(int64_t session, const std::string& path, const std::string& data = "d",
                      int32_t flags = 0, std::vector<jute::ACL> acl = open_acl()) {
  return request_txn(session, jute::op::kCreate, create_request(path, data, flags, std::move(acl)));
}
inline Txn set_data_txn(int64_t session, const std::string& path, const std::string& data) {
  return request_txn(session, jute::op::kSetData, jute::SetDataRequest{path, {data, false}, -1});
}
inline Txn delete_txn(int64_t session, const std::string& path) {
  return request_txn(session, jute::op::kDelete, jute::DeleteRequest{path, -1});
}
inline Txn close_session_txn(int64_t session, bool expired = false) {
  Txn t;
  t.kind = TxnKind::kCloseSession;
  t.session_id = session;
  t.expired = expired;
  return t;
}

}  // namespace zkraft::server::testing
