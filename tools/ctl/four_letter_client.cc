#include "tools/ctl/four_letter_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace zkraft::tools {

std::optional<std::string> ask_four_letter_word(const HostPort& server, const std::string& word,
                                                int timeout_ms, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(server.host.c_str(), std::to_string(server.port).c_str(), &hints, &res); rc != 0) {
    *error = server.to_string() + ": " + ::gai_strerror(rc);
    return std::nullopt;
  }
  int fd = -1;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    *error = server.to_string() + ": cannot connect: " + std::strerror(errno);
    return std::nullopt;
  }
  std::string out;
  bool ok = ::send(fd, word.data(), word.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(word.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  while (ok) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;  // the answer is complete when the server closes
    if (n < 0 || std::chrono::steady_clock::now() > deadline || out.size() > (16u << 20)) {
      ok = false;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!ok) {
    *error = server.to_string() + ": no complete answer to " + word;
    return std::nullopt;
  }
  return out;
}

}  // namespace zkraft::tools
