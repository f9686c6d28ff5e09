#pragma once
// ClientMessage: what a network thread hands the state thread for each thing a client
// connection does. Frames are decoded here, on the network thread, once:
//  - the first frame of a connection as a ConnectRequest;
//  - a read (and ping, auth, sync, watch management) as header + record, which the state thread
//    executes without decoding again;
//  - a write (anything that goes through the log) as its header only: the record bytes travel
//    in the log entry and are decoded once, where they are applied.

#include <cstdint>
#include <string>
#include <string_view>

#include "jute/archive.h"
#include "jute/connect.h"
#include "jute/request.h"

namespace zkraft::server {

struct ClientMessage {
  enum class Kind {
    kOpened,          // a new connection (remote address below)
    kConnect,         // its first frame: `connect` (or a malformed one: rc != kOk)
    kRequest,         // a later frame: `request` (body decoded unless `logged`)
    kFourLetterWord,  // the connection's first 4 bytes spell a 4lw: `word`
    kClosed,          // the connection is gone
    kWritten,         // `written_bytes` more were written to the socket (client_io.h)
  };
  Kind kind = Kind::kRequest;
  uint64_t conn = 0;
  int64_t received_ms = 0;   // monotonic, when the network thread read it
  int32_t rc = 0;            // jute error code of the decode (kOk, kMarshallingError, kUnimplemented)
  jute::ConnectRequest connect;
  jute::DecodedRequest request;
  bool logged = false;       // a write: `record` holds the record bytes after the header
  std::string record;
  std::string word;          // kFourLetterWord
  uint64_t written_bytes = 0;  // kWritten
  std::string remote_address;  // kOpened: "127.0.0.1"
  uint16_t remote_port = 0;
  bool secure = false;        // kOpened: over TLS
  std::string x509_subject;   // kOpened: the verified client certificate's subject (RFC 2253), "" = none
};

// Decodes a connection's first frame into a kConnect message.
ClientMessage decode_connect_frame(uint64_t conn, std::string_view frame, const jute::Limits& limits);
// Decodes a later frame into a kRequest message (see the header comment for what is decoded).
ClientMessage decode_request_frame(uint64_t conn, std::string_view frame, const jute::Limits& limits);

}  // namespace zkraft::server
