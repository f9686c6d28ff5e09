#include "tools/load_bench/zk_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jute/archive.h"
#include "jute/connect.h"
#include "jute/data.h"
#include "jute/frame.h"
#include "jute/opcodes.h"
#include "jute/request.h"

namespace zkraft::tools {

namespace {

std::string request_frame(int32_t xid, int32_t op, const jute::RequestBody& body) {
  jute::Writer w;
  size_t at = jute::begin_frame(w);
  jute::encode(w, jute::RequestHeader{xid, op});
  jute::encode(w, body);
  jute::end_frame(w, at);
  return w.take();
}

void set_timeout(int fd, int opt, int ms) {
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
}

}  // namespace

ZkConnection::~ZkConnection() { close(); }

bool ZkConnection::fail(const std::string& why) {
  if (error_.empty()) error_ = why;
  close();
  return false;
}

void ZkConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  out_.clear();
  in_pos_ = in_end_ = 0;
}

bool ZkConnection::open(const HostPort& server, int32_t session_timeout_ms, int io_timeout_ms) {
  close();
  error_.clear();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(server.host.c_str(), std::to_string(server.port).c_str(), &hints, &res) != 0 ||
      res == nullptr) {
    return fail("cannot resolve " + server.host);
  }
  fd_ = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  if (fd_ < 0) {
    ::freeaddrinfo(res);
    return fail(std::string("socket: ") + std::strerror(errno));
  }
  // On Linux SO_SNDTIMEO also bounds connect().
  set_timeout(fd_, SO_SNDTIMEO, io_timeout_ms);
  set_timeout(fd_, SO_RCVTIMEO, io_timeout_ms);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int rc = ::connect(fd_, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (rc != 0) return fail(std::string("connect: ") + std::strerror(errno));

  jute::ConnectRequest req;
  req.time_out = session_timeout_ms;
  req.passwd.bytes.assign(16, '\0');
  if (!send_frame(jute::record_frame(req))) return false;
  std::string body;
  if (!read_frame(body)) return false;
  jute::ConnectResponse resp;
  if (jute::decode_connect_response(body, jute::Limits{}, resp) != 0) {
    return fail("bad ConnectResponse");
  }
  if (resp.session_id == 0) return fail("session refused (expired)");
  session_id_ = resp.session_id;
  return true;
}

bool ZkConnection::send_create(int32_t xid, const std::string& path, const std::string& data,
                               int32_t flags) {
  jute::CreateRequest r;
  r.path = path;
  r.data.bytes = data;
  r.acl.push_back(jute::ACL{jute::perms::kAll, jute::Id{"world", "anyone"}});
  r.flags = flags;
  return send_frame(request_frame(xid, jute::op::kCreate, r));
}

bool ZkConnection::send_set_data(int32_t xid, const std::string& path, const std::string& data) {
  jute::SetDataRequest r;
  r.path = path;
  r.data.bytes = data;
  r.version = -1;
  return send_frame(request_frame(xid, jute::op::kSetData, r));
}

bool ZkConnection::send_auth(const std::string& scheme, const std::string& credential) {
  jute::AuthPacket a;
  a.scheme = scheme;
  a.auth.bytes = credential;
  return send_frame(request_frame(jute::xid::kAuth, jute::op::kAuth, a));
}

bool ZkConnection::send_reconfig(int32_t xid, const std::string& joining, const std::string& leaving,
                                 const std::string& new_members, int64_t from_config) {
  jute::ReconfigRequest r;
  r.joining_servers = joining;
  r.leaving_servers = leaving;
  r.new_members = new_members;
  r.cur_config_id = from_config;
  return send_frame(request_frame(xid, jute::op::kReconfig, r));
}

bool ZkConnection::send_get_data(int32_t xid, const std::string& path, bool watch) {
  jute::GetDataRequest r;
  r.path = path;
  r.watch = watch;
  return send_frame(request_frame(xid, jute::op::kGetData, r));
}

bool ZkConnection::send_exists(int32_t xid, const std::string& path) {
  jute::ExistsRequest r;
  r.path = path;
  return send_frame(request_frame(xid, jute::op::kExists, r));
}

bool ZkConnection::send_get_children(int32_t xid, const std::string& path) {
  jute::GetChildrenRequest r;
  r.path = path;
  return send_frame(request_frame(xid, jute::op::kGetChildren, r));
}

bool ZkConnection::send_delete(int32_t xid, const std::string& path) {
  jute::DeleteRequest r;
  r.path = path;
  r.version = -1;
  return send_frame(request_frame(xid, jute::op::kDelete, r));
}

bool ZkConnection::read_reply(jute::ReplyHeader& out) {
  std::string body;
  while (true) {
    if (!read_frame(body)) return false;
    jute::Reader r(body);
    if (!jute::decode(r, out)) return fail("bad ReplyHeader");
    if (out.xid == jute::xid::kPing || out.xid == jute::xid::kNotification) continue;
    return true;
  }
}

bool ZkConnection::read_message(jute::ReplyHeader& out) {
  std::string body;
  while (true) {
    if (!read_frame(body)) return false;
    jute::Reader r(body);
    if (!jute::decode(r, out)) return fail("bad ReplyHeader");
    if (out.xid == jute::xid::kPing) continue;
    return true;
  }
}

void ZkConnection::close_session() {
  if (fd_ < 0) return;
  if (send_frame(request_frame(1 << 30, jute::op::kCloseSession, jute::EmptyRequest{}))) {
    // Drain until the closeSession reply or EOF; earlier replies may still be queued.
    jute::ReplyHeader h;
    for (int i = 0; i < 100000 && read_reply(h); ++i) {
      if (h.xid == (1 << 30)) break;
    }
  }
  close();
}

bool ZkConnection::send_frame(const std::string& frame) {
  if (!pipelined_) return write_all(frame.data(), frame.size());
  if (fd_ < 0) return fail("not connected");
  out_ += frame;
  return out_.size() < kPipelinedChunk || flush();
}

bool ZkConnection::flush() {
  if (out_.empty()) return true;
  const bool ok = write_all(out_.data(), out_.size());
  out_.clear();
  return ok;
}

bool ZkConnection::write_all(const char* bytes, size_t n) {
  if (fd_ < 0) return fail("not connected");
  size_t done = 0;
  while (done < n) {
    ssize_t sent = ::send(fd_, bytes + done, n - done, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return fail(std::string("send: ") + std::strerror(errno));
    done += static_cast<size_t>(sent);
  }
  return true;
}

bool ZkConnection::recv_some(char* out, size_t n, size_t& got) {
  if (fd_ < 0) return fail("not connected");
  while (true) {
    ssize_t r = ::recv(fd_, out, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return fail("connection closed by server");
    if (r < 0) {
      return fail(errno == EAGAIN || errno == EWOULDBLOCK ? std::string("read timeout")
                                                          : std::string("recv: ") +
                                                                std::strerror(errno));
    }
    got = static_cast<size_t>(r);
    return true;
  }
}

// Pipelined: sends what waits (the server cannot answer requests it has not seen), then adds
// at least one received byte to in_[in_pos_, in_end_). in_ only grows, so it is not cleared again.
bool ZkConnection::fill_input() {
  if (!flush()) return false;
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  if (in_.size() < in_end_ + kPipelinedChunk) in_.resize(in_end_ + kPipelinedChunk);
  size_t got = 0;
  if (!recv_some(in_.data() + in_end_, in_.size() - in_end_, got)) return false;
  in_end_ += got;
  return true;
}

bool ZkConnection::read_exact(char* out, size_t n) {
  if (pipelined_) {
    while (in_end_ - in_pos_ < n) {
      if (!fill_input()) return false;
    }
    std::memcpy(out, in_.data() + in_pos_, n);
    in_pos_ += n;
    return true;
  }
  size_t done = 0;
  while (done < n) {
    size_t got = 0;
    if (!recv_some(out + done, n - done, got)) return false;
    done += got;
  }
  return true;
}

bool ZkConnection::read_frame(std::string& body) {
  char len_bytes[4];
  if (!read_exact(len_bytes, 4)) return false;
  uint32_t len_be;
  std::memcpy(&len_be, len_bytes, 4);
  int32_t len = static_cast<int32_t>(ntohl(len_be));
  if (len < 0 || len > jute::Limits{}.max_buffer + 1024) return fail("bad frame length");
  body.resize(static_cast<size_t>(len));
  return len == 0 || read_exact(body.data(), body.size());
}

bool parse_servers(const std::string& spec, std::vector<HostPort>& out) {
  out.clear();
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    if (!item.empty()) {
      size_t colon = item.rfind(':');
      HostPort hp;
      hp.host = colon == std::string::npos ? item : item.substr(0, colon);
      int port = 2181;
      if (colon != std::string::npos) {
        try {
          port = std::stoi(item.substr(colon + 1));
        } catch (...) {
          return false;
        }
      }
      if (port <= 0 || port > 65535 || hp.host.empty()) return false;
      hp.port = static_cast<uint16_t>(port);
      out.push_back(hp);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return !out.empty();
}

}  // namespace zkraft::tools
