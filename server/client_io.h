#pragma once
// ClientIo: what the state thread may ask of client connections, which live on network threads.
// Calls name a connection by id and only queue the work: nothing here runs synchronously, and a
// connection that is already gone is silently skipped. flush() hands everything queued since the
// last flush to the network threads (one hand-off per network thread), so replies produced by
// one batch of work leave together.
//
// Implemented by the network pool (server/network_pool.h) and by a recorder in the unit tests.

#include <cstdint>
#include <string>
#include <string_view>

namespace zkraft::server {

// Back-pressure by bytes. Requests are read ahead of their replies (a network thread hands them
// over before any reply exists), so the network side alone cannot bound what a client that does
// not read makes the server hold: the state thread stops answering a connection while more than
// kMaxUnwrittenBytes it sent there are not reported written, and a network thread reports what it
// wrote every kWrittenReportBytes (a ClientMessage kWritten). Reports lag by less than
// kWrittenReportBytes, so a connection whose client reads is never stuck.
inline constexpr uint64_t kMaxUnwrittenBytes = 1 << 20;
inline constexpr uint64_t kWrittenReportBytes = 256 << 10;

// The network side's TLS and handshake figures (mntr zk_outstanding_tls_handshake and friends).
struct HandshakeFigures {
  int64_t outstanding_tls_handshakes = 0;  // TLS handshakes (or unified-port detections) under way
  int64_t unsuccessful_handshakes = 0;     // failed or timed out (ZooKeeper UNSUCCESSFUL_HANDSHAKE)
  int64_t sessionless_closed = 0;          // closed without a ConnectRequest in time (slowloris)
  int64_t tls_reloads = 0;                 // key/trust store reloads that took effect
  int64_t tls_failed_reloads = 0;          // store changes that could not be loaded
};

class ClientIo {
 public:
  virtual ~ClientIo() = default;
  // Queues an already-framed reply or event.
  virtual void send(uint64_t conn, std::string framed) = 0;
  // Closes once everything sent before has been written.
  virtual void close_after_flush(uint64_t conn) = 0;
  // Closes now, dropping unsent output; `reason` is logged when not empty.
  virtual void close(uint64_t conn, std::string_view reason) = 0;
  // Flow control: stop / resume reading requests from the connection.
  virtual void set_reading(uint64_t conn, bool reading) = 0;
  virtual void flush() = 0;
  // Any thread; an implementation without a network answers zeros.
  virtual HandshakeFigures handshake_figures() const { return {}; }
};

}  // namespace zkraft::server
