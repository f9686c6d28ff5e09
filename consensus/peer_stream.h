#pragma once
// PeerStream: one peer connection's byte stream, plain TCP or mutual TLS (sslQuorum), with the
// socket calls the peer transport makes, so the transport's code is the same for both. The TLS
// context is built outside consensus/ (server/tls_context.h) and handed in through
// PeerTransportOptions::tls; null means plain.
//
// A TLS stream is made afresh by reset() for every connection attempt (an SSL session cannot be
// reused after its socket closed). Writes under TLS copy up to one record's worth of the buffer
// sequence into one buffer, so a batch of small frames becomes a few records, not one record per
// frame header. One read and one write may be in flight at a time, as with a socket.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace zkraft::consensus {

class PeerStream {
 public:
  using tcp = boost::asio::ip::tcp;
  using executor_type = tcp::socket::executor_type;
  using Tls = boost::asio::ssl::stream<tcp::socket&>;

  template <class Executor>
  PeerStream(const Executor& ex, std::shared_ptr<boost::asio::ssl::context> tls)
      : sock_(ex), ctx_(std::move(tls)) {}
  PeerStream(tcp::socket sock, std::shared_ptr<boost::asio::ssl::context> tls)
      : sock_(std::move(sock)), ctx_(std::move(tls)) {
    reset({});
  }

  executor_type get_executor() { return sock_.get_executor(); }
  tcp::socket& socket() { return sock_; }
  bool secure() const { return ctx_ != nullptr; }

  // A fresh TLS session for the next connection; `verify_host` non-empty: the peer's certificate
  // must name it (the dialling side's hostname verification).
  void reset(const std::string& verify_host) {
    if (!ctx_) return;
    tls_ = std::make_unique<Tls>(sock_, *ctx_);
    if (verify_host.empty()) return;
    // An address is checked against the certificate's IP names, a name against its DNS names.
    X509_VERIFY_PARAM* param = SSL_get0_param(tls_->native_handle());
    if (X509_VERIFY_PARAM_set1_ip_asc(param, verify_host.c_str()) != 1) {
      SSL_set1_host(tls_->native_handle(), verify_host.c_str());
    }
  }

  template <class Handler>
  void async_handshake(boost::asio::ssl::stream_base::handshake_type type, Handler&& h) {
    tls_->async_handshake(type, std::forward<Handler>(h));
  }

  void close(boost::system::error_code& ec) { sock_.close(ec); }
  template <class Option>
  void set_option(const Option& o, boost::system::error_code& ec) {
    sock_.set_option(o, ec);
  }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& b, Handler&& h) {
    if (tls_) {
      tls_->async_read_some(b, std::forward<Handler>(h));
    } else {
      sock_.async_read_some(b, std::forward<Handler>(h));
    }
  }

  template <class Buffers, class Handler>
  void async_write_some(const Buffers& b, Handler&& h) {
    if (!tls_) {
      sock_.async_write_some(b, std::forward<Handler>(h));
      return;
    }
    constexpr size_t kRecord = 16 * 1024;
    wbuf_.clear();
    for (auto it = boost::asio::buffer_sequence_begin(b); it != boost::asio::buffer_sequence_end(b) &&
                                                           wbuf_.size() < kRecord;
         ++it) {
      boost::asio::const_buffer part(*it);
      const size_t n = std::min(part.size(), kRecord - wbuf_.size());
      wbuf_.append(static_cast<const char*>(part.data()), n);
    }
    tls_->async_write_some(boost::asio::buffer(wbuf_), std::forward<Handler>(h));
  }

 private:
  tcp::socket sock_;
  std::shared_ptr<boost::asio::ssl::context> ctx_;
  std::unique_ptr<Tls> tls_;  // after sock_, which it refers to
  std::string wbuf_;
};

}  // namespace zkraft::consensus
