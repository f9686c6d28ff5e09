#pragma once
// ZkConnection: one ZooKeeper client session over a blocking TCP socket, speaking the jute wire
// protocol with zkraft's jute/ library. Made for load generation: requests are written as they
// come (pipelined, the caller keeps its own count of outstanding ones) and replies are read one at
// a time in order. In pipelined mode (set_pipelined) requests wait in a buffer until the caller
// next needs a reply that has not arrived, and replies are read in 64 KiB gulps: one send and one
// recv per burst instead of one send and two recvs per request. The load generator shares the
// servers' two cores, so its syscalls were CPU taken from the server it measures
// (docs/benchmarks.md, 2026-12-07). poll() on fd() sees neither buffer, so callers that poll stay
// in the default mode. Watches are only set and their notifications read (read_message) for the watch
// fan-out figure; no reconnect logic: a failed connection is thrown away by the caller, which
// opens a new one.
//
// Invariant: once any I/O call fails (returns false), the connection is closed and every later
// call fails too; error() says why.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/headers.h"
#include "jute/requests.h"

namespace zkraft::tools {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

class ZkConnection {
 public:
  ZkConnection() = default;
  ~ZkConnection();
  ZkConnection(const ZkConnection&) = delete;
  ZkConnection& operator=(const ZkConnection&) = delete;

  // Pipelined mode: sends are buffered until a read would block (or kPipelinedChunk wait), and
  // reads are buffered. Kept across open() and close().
  void set_pipelined(bool on) { pipelined_ = on; }

  // Connects and completes the handshake for a new session. io_timeout_ms bounds connect, every
  // read and every write (SO_SNDTIMEO/SO_RCVTIMEO). False if the server refused, timed out or
  // answered with an expired (zero) session.
  bool open(const HostPort& server, int32_t session_timeout_ms, int io_timeout_ms);

  // Writes one request frame. xid must be >= 1; op is a jute/opcodes.h code matching body.
  bool send_create(int32_t xid, const std::string& path, const std::string& data, int32_t flags);
  bool send_set_data(int32_t xid, const std::string& path, const std::string& data);
  bool send_get_data(int32_t xid, const std::string& path, bool watch = false);
  bool send_exists(int32_t xid, const std::string& path);
  bool send_get_children(int32_t xid, const std::string& path);  // getChildren (op 8), no watch
  bool send_delete(int32_t xid, const std::string& path);         // any version
  // addauth (its reply has xid -4); reconfig (op 16; incremental when new_members is empty).
  bool send_auth(const std::string& scheme, const std::string& credential);
  bool send_reconfig(int32_t xid, const std::string& joining, const std::string& leaving,
                     const std::string& new_members, int64_t from_config);

  // Reads the next reply to a request, skipping ping replies and notifications.
  bool read_reply(jute::ReplyHeader& out);
  // Reads the next reply or notification (out.xid == -1), skipping only ping replies.
  bool read_message(jute::ReplyHeader& out);

  // Sends closeSession and waits (bounded by the io timeout) for its reply or EOF.
  void close_session();
  void close();

  bool is_open() const { return fd_ >= 0; }
  int64_t session_id() const { return session_id_; }
  int fd() const { return fd_; }  // for poll(); -1 when closed
  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kPipelinedChunk = 64 * 1024;

  // Sends a request frame now, or buffers it in pipelined mode.
  bool send_frame(const std::string& frame);
  bool flush();
  bool write_all(const char* bytes, size_t n);
  bool read_exact(char* out, size_t n);
  bool recv_some(char* out, size_t n, size_t& got);
  bool fill_input();
  bool read_frame(std::string& body);
  bool fail(const std::string& why);

  int fd_ = -1;
  int64_t session_id_ = 0;
  bool pipelined_ = false;
  std::string out_;    // pipelined: request frames not yet sent
  std::string in_;     // pipelined: bytes received; [in_pos_, in_end_) not yet read
  size_t in_pos_ = 0;
  size_t in_end_ = 0;
  std::string error_;
};

// "h1:p1,h2:p2" -> list; false on a malformed entry.
bool parse_servers(const std::string& spec, std::vector<HostPort>& out);

}  // namespace zkraft::tools
