// AdminServer over a real socket on 127.0.0.1 (port 0): answers through its handler on its own
// thread (with the handler's extra headers, given the peer's address), keeps a connection
// across requests, bounds the request (431, 413, 400), sends HEAD without a body, closes an idle
// connection, and reports a port it cannot bind.

#include <gtest/gtest.h>

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>

#include <atomic>
#include <chrono>
#include <string>

#include "server/admin_server.h"

namespace zkraft::server {
namespace {

using boost::asio::ip::tcp;

class AdminServerTest : public ::testing::Test {
 protected:
  void start(int64_t idle_ms = 5000, bool large_restore = false) {
    AdminServer::Options o;
    o.address = "127.0.0.1";
    o.port = 0;
    o.idle_timeout_ms = idle_ms;
    o.header_limit = 1024;
    o.body_limit = 100;
    if (large_restore) {
      o.post_body_limit = 1000;
      o.large_body_allowed = [](std::string_view target, bool authorized) {
        return authorized && target == "/restore";
      };
    }
    server = std::make_unique<AdminServer>(
        [this](const AdminRequest& r) {
          ++calls;
          AdminReply reply{200, "text/plain", r.method + " " + r.target};
          reply.headers = {{"last_zxid", "0x5"}, {"peer", r.remote_address},
                           {"body-bytes", std::to_string(r.body.size())}};
          return reply;
        },
        o);
    std::string error;
    ASSERT_TRUE(server->start(&error)) << error;
    ASSERT_NE(server->port(), 0);
  }

  tcp::socket connect() {
    tcp::socket s(io);
    s.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server->port()));
    return s;
  }

  // Everything the server sends until it closes, or until `until` appears.
  static std::string read_all(tcp::socket& s, const std::string& until = "") {
    std::string out;
    char buf[4096];
    for (;;) {
      boost::system::error_code ec;
      size_t n = s.read_some(boost::asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec) return out;
      if (!until.empty() && out.find(until) != std::string::npos) return out;
    }
  }

  boost::asio::io_context io;
  std::unique_ptr<AdminServer> server;
  std::atomic<int> calls{0};
};

TEST_F(AdminServerTest, AnswersAndKeepsTheConnection) {
  start();
  tcp::socket s = connect();
  boost::asio::write(s, boost::asio::buffer(std::string("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n")));
  std::string first = read_all(s, "GET /a?b=1");
  EXPECT_EQ(first.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << first;
  EXPECT_NE(first.find("Content-Type: text/plain\r\n"), std::string::npos);
  EXPECT_NE(first.find("Content-Length: 10\r\n"), std::string::npos);
  EXPECT_NE(first.find("last_zxid: 0x5\r\n"), std::string::npos) << first;
  EXPECT_NE(first.find("peer: 127.0.0.1\r\n"), std::string::npos) << first;
  boost::asio::write(s, boost::asio::buffer(std::string(
                            "HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  std::string second = read_all(s);
  EXPECT_EQ(second.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << second;
  EXPECT_NE(second.find("Content-Length: 7\r\n"), std::string::npos) << second;  // "HEAD /h"
  EXPECT_EQ(second.substr(second.find("\r\n\r\n") + 4), "");  // no body
  EXPECT_EQ(calls, 2);
}

TEST_F(AdminServerTest, BoundsTheRequest) {
  start();
  {
    tcp::socket s = connect();
    std::string big = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(big));
    std::string r = read_all(s);
    EXPECT_EQ(r.rfind("HTTP/1.1 431 ", 0), 0u) << r;
  }
  {
    tcp::socket s = connect();
    std::string body(200, 'b');
    boost::asio::write(s, boost::asio::buffer("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + body));
    std::string r = read_all(s);
    EXPECT_EQ(r.rfind("HTTP/1.1 413 ", 0), 0u) << r;
  }
  {
    tcp::socket s = connect();
    boost::asio::write(s, boost::asio::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
    std::string r = read_all(s);
    EXPECT_EQ(r.rfind("HTTP/1.1 400 ", 0), 0u) << r;
  }
  EXPECT_EQ(calls, 0);  // none of them reached the handler
}

TEST_F(AdminServerTest, OnlyAnAcceptedPostWithCredentialsMayBringALargeBody) {
  start(5000, /*large_restore=*/true);
  auto post = [this](const std::string& target, bool auth, size_t n) {
    tcp::socket s = connect();
    std::string req = "POST " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                      (auth ? "Authorization: digest a:b\r\n" : "") +
                      "Content-Length: " + std::to_string(n) + "\r\n\r\n" + std::string(n, 'b');
    boost::asio::write(s, boost::asio::buffer(req));
    return read_all(s);
  };
  std::string ok = post("/restore", true, 900);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 ", 0), 0u) << ok;
  EXPECT_NE(ok.find("body-bytes: 900\r\n"), std::string::npos) << ok;
  EXPECT_EQ(post("/restore", true, 1001).rfind("HTTP/1.1 413 ", 0), 0u);  // post_body_limit
  EXPECT_EQ(post("/restore", false, 900).rfind("HTTP/1.1 413 ", 0), 0u);  // no credentials
  EXPECT_EQ(post("/other", true, 900).rfind("HTTP/1.1 413 ", 0), 0u);     // not accepted
  EXPECT_EQ(post("/other", true, 50).rfind("HTTP/1.1 200 ", 0), 0u);      // body_limit holds
  EXPECT_EQ(calls, 2);
}

TEST_F(AdminServerTest, ClosesAnIdleConnection) {
  start(200);
  tcp::socket s = connect();
  const auto t0 = std::chrono::steady_clock::now();
  std::string r = read_all(s);  // returns when the server closes
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r, "");
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::seconds(3));
}

TEST_F(AdminServerTest, APortInUseIsAnError) {
  start();
  AdminServer::Options o;
  o.address = "127.0.0.1";
  o.port = server->port();
  AdminServer second([](const AdminRequest&) { return AdminReply{}; }, o);
  std::string error;
  EXPECT_FALSE(second.start(&error));
  EXPECT_NE(error.find("cannot bind 127.0.0.1:" + std::to_string(o.port)), std::string::npos) << error;
}

}  // namespace
}  // namespace zkraft::server
