#include "server/connection.h"

#include <spdlog/spdlog.h>

#include <array>
#include <vector>

#include "server/client_io.h"
#include "server/tls_context.h"

namespace zkraft::server {

namespace asio = boost::asio;

namespace {
constexpr size_t kReadChunk = 16 * 1024;
constexpr unsigned char kTlsHandshakeRecord = 0x16;  // the first byte of every TLS ClientHello
}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, uint64_t id, ConnectionSink& sink,
                       const ConnectionLimits& limits, const Clock& clock,
                       ConnectionSecurity security)
    : socket_(std::move(socket)),
      security_(std::move(security)),
      deadline_(socket_.get_executor()),
      id_(id),
      sink_(sink),
      limits_(limits),
      clock_(clock),
      frames_(limits.max_frame) {
  decode_limits_.max_buffer = limits.max_frame;
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  if (!ec) {
    remote_address_ = ep.address().to_string();
    remote_port_ = ep.port();
  }
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start() {
  accepted_ms_ = clock_.monotonic_ms();
  if (limits_.sessionless_timeout_ms > 0) arm_deadline(accepted_ms_ + limits_.sessionless_timeout_ms);
  if (!security_.tls) {
    opened({});
  } else if (security_.detect) {
    detect_tls();
  } else {
    handshake();
  }
}

void Connection::arm_deadline(int64_t at_ms) {
  deadline_.expires_after(std::chrono::milliseconds(std::max<int64_t>(0, at_ms - clock_.monotonic_ms())));
  deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->on_deadline();
  });
}

void Connection::on_deadline() {
  if (closed_ || connect_seen_ || four_letter_word_) return;
  if (handshaking_) {
    handshaking_ = false;
    sink_.on_tls_handshake_finished(false);
    close("TLS handshake not completed in time");
    return;
  }
  if (clock_.monotonic_ms() - accepted_ms_ < limits_.sessionless_timeout_ms) {
    arm_deadline(accepted_ms_ + limits_.sessionless_timeout_ms);  // the handshake's deadline fired early
    return;
  }
  sink_.on_sessionless_timeout();
  close("no ConnectRequest within " + std::to_string(limits_.sessionless_timeout_ms) + " ms");
}

// Port unification: wait for the first byte and look at it without taking it off the socket.
void Connection::detect_tls() {
  handshaking_ = true;
  sink_.on_tls_handshake_started();
  arm_deadline(accepted_ms_ + std::min<int64_t>(security_.handshake_timeout_ms,
                                                limits_.sessionless_timeout_ms > 0
                                                    ? limits_.sessionless_timeout_ms
                                                    : security_.handshake_timeout_ms));
  socket_.async_wait(asio::socket_base::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
    if (self->closed_) return;
    unsigned char first = 0;
    size_t n = 0;
    if (!ec) n = self->socket_.receive(asio::buffer(&first, 1), asio::socket_base::message_peek, ec);
    if (ec || n == 0) {
      self->handshaking_ = false;
      self->sink_.on_tls_handshake_finished(false);
      self->close();
      return;
    }
    if (first == kTlsHandshakeRecord) {
      self->handshaking_ = false;  // handshake() counts it from here
      self->sink_.on_tls_handshake_finished(true);
      self->handshake();
      return;
    }
    // Plain: ZooKeeper's DualModeSslHandler counts this as a finished handshake too.
    self->handshaking_ = false;
    self->sink_.on_tls_handshake_finished(true);
    self->security_.tls.reset();
    if (self->limits_.sessionless_timeout_ms > 0) {
      self->arm_deadline(self->accepted_ms_ + self->limits_.sessionless_timeout_ms);
    }
    self->opened({});
  });
}

void Connection::handshake() {
  handshaking_ = true;
  sink_.on_tls_handshake_started();
  tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, *security_.tls);
  const int64_t tls_deadline = accepted_ms_ + security_.handshake_timeout_ms;
  arm_deadline(limits_.sessionless_timeout_ms > 0
                   ? std::min<int64_t>(tls_deadline, accepted_ms_ + limits_.sessionless_timeout_ms)
                   : tls_deadline);
  tls_->async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](boost::system::error_code ec) {
    if (self->closed_ || !self->handshaking_) return;
    self->handshaking_ = false;
    if (ec) {
      self->sink_.on_tls_handshake_finished(false);
      spdlog::warn("connection {} from {}:{}: TLS handshake failed: {}", self->id_, self->remote_address_,
                   self->remote_port_, ec.message());
      self->close();
      return;
    }
    self->sink_.on_tls_handshake_finished(true);
    std::string subject;
    if (X509* cert = SSL_get_peer_certificate(self->tls_->native_handle())) {
      // Only a verified certificate names anyone (verify mode none: not asked for, not trusted).
      if (SSL_get_verify_result(self->tls_->native_handle()) == X509_V_OK &&
          (SSL_get_verify_mode(self->tls_->native_handle()) & SSL_VERIFY_PEER) != 0) {
        subject = x509_subject_rfc2253(cert);
      }
      X509_free(cert);
    }
    if (self->limits_.sessionless_timeout_ms > 0) {
      self->arm_deadline(self->accepted_ms_ + self->limits_.sessionless_timeout_ms);
    } else {
      self->deadline_.cancel();
    }
    self->opened(std::move(subject));
  });
}

void Connection::opened(std::string x509_subject) {
  announced_ = true;
  ClientMessage m;
  m.kind = ClientMessage::Kind::kOpened;
  m.conn = id_;
  m.remote_address = remote_address_;
  m.remote_port = remote_port_;
  m.secure = tls_ != nullptr;
  m.x509_subject = std::move(x509_subject);
  sink_.on_message(std::move(m));
  sink_.flush();
  read_more();
}

bool Connection::want_read() const {
  return !closed_ && !paused_ && !read_eof_ && !close_after_flush_ &&
         out_bytes_ <= limits_.max_outbound_bytes;
}

void Connection::read_more() {
  if (reading_ || !want_read()) return;
  reading_ = true;
  if (!read_buf_) read_buf_ = std::make_unique_for_overwrite<char[]>(kReadChunk);
  auto on_read = [self = shared_from_this()](boost::system::error_code ec, size_t n) {
        self->reading_ = false;
        if (self->closed_) return;
        if (ec) {
          if (ec == asio::error::eof && (self->close_after_flush_ || self->four_letter_word_)) {
            self->read_eof_ = true;  // a 4lw client that half-closed: still owed its answer
            return;
          }
          self->close();
          return;
        }
        // parse_input copies the bytes out (frames, head_) before anything it calls could start
        // the next read into the same buffer.
        self->parse_input(std::string_view(self->read_buf_.get(), n));
        self->sink_.flush();
        self->read_more();
      };
  if (tls_) {
    tls_->async_read_some(asio::buffer(read_buf_.get(), kReadChunk), std::move(on_read));
  } else {
    socket_.async_read_some(asio::buffer(read_buf_.get(), kReadChunk), std::move(on_read));
  }
}

void Connection::parse_input(std::string_view bytes) {
  if (close_after_flush_ || four_letter_word_) return;  // the answer is all that is left
  if (!first_bytes_seen_) {
    // A four-letter word is recognised only as the first 4 bytes of a connection.
    head_.append(bytes);
    auto kind = jute::classify_first_bytes(head_);
    if (kind == jute::FirstBytes::kNeedMore) return;
    first_bytes_seen_ = true;
    if (kind == jute::FirstBytes::kFourLetterWord) {
      ClientMessage m;
      m.kind = ClientMessage::Kind::kFourLetterWord;
      m.conn = id_;
      m.word = head_.substr(0, 4);
      m.record = head_.substr(4);  // what came with it: stmk's 8-byte mask
      four_letter_word_ = true;  // whatever follows (stmk's mask) is not read as frames
      deadline_.cancel();
      head_.clear();
      sink_.on_message(std::move(m));
      return;
    }
    std::string first = std::move(head_);
    head_.clear();
    parse_input(first);
    return;
  }
  std::vector<std::string> frames;
  const bool ok = frames_.feed(bytes, frames);
  const int64_t now = clock_.monotonic_ms();
  for (const auto& f : frames) {
    ClientMessage m = connect_seen_ ? decode_request_frame(id_, f, decode_limits_)
                                    : decode_connect_frame(id_, f, decode_limits_);
    if (!connect_seen_) deadline_.cancel();
    connect_seen_ = true;
    m.received_ms = now;
    sink_.on_message(std::move(m));
  }
  if (!ok) {
    spdlog::warn("connection {} from {}:{}: frame length outside [0, {}]; closing", id_,
                 remote_address_, remote_port_, limits_.max_frame);
    close();
  }
}

void Connection::send(std::string framed) {
  if (closed_ || dropping_) return;
  out_bytes_ += framed.size();
  out_.push_back(std::move(framed));
  if (out_bytes_ > limits_.kill_outbound_bytes) {
    dropping_ = true;
    spdlog::warn("connection {} from {}:{}: {} bytes unread by the client; closing", id_,
                 remote_address_, remote_port_, out_bytes_);
    // Not here: the caller may be in the middle of a batch for this connection.
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
    return;
  }
  write_more();
}

void Connection::write_more() {
  if (writing_ || closed_) return;
  if (out_.empty()) {
    if (close_after_flush_) {
      boost::system::error_code ec;
      socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
      close();
    }
    return;
  }
  writing_ = true;
  // Gather what is queued into one write: many small replies become one syscall.
  std::vector<asio::const_buffer> bufs;
  size_t count = 0, bytes = 0;
  for (const auto& s : out_) {
    bufs.emplace_back(asio::buffer(s));
    bytes += s.size();
    if (++count >= 64 || bytes >= (256 << 10)) break;
  }
  auto on_written = [self = shared_from_this(), count, bytes](boost::system::error_code ec, size_t) {
                      self->writing_ = false;
                      if (self->closed_) return;
                      if (ec) {
                        self->close();
                        return;
                      }
                      for (size_t i = 0; i < count; ++i) self->out_.pop_front();
                      self->out_bytes_ -= bytes;
                      self->report_written(bytes);
                      self->write_more();
                      self->read_more();
                    };
  if (!tls_) {
    asio::async_write(socket_, bufs, std::move(on_written));
    return;
  }
  // An SSL stream encrypts one buffer per record: many small replies become one record.
  if (count == 1) {
    asio::async_write(*tls_, asio::buffer(out_.front()), std::move(on_written));
    return;
  }
  auto joined = std::make_shared<std::string>();
  joined->reserve(bytes);
  for (size_t i = 0; i < count; ++i) joined->append(out_[i]);
  asio::async_write(*tls_, asio::buffer(*joined),
                    [joined, on_written = std::move(on_written)](boost::system::error_code ec, size_t n) mutable {
                      on_written(ec, n);
                    });
}

void Connection::report_written(size_t bytes) {
  unreported_written_ += bytes;
  if (unreported_written_ < kWrittenReportBytes) return;
  ClientMessage m;
  m.kind = ClientMessage::Kind::kWritten;
  m.conn = id_;
  m.written_bytes = unreported_written_;
  unreported_written_ = 0;
  sink_.on_message(std::move(m));
  sink_.flush();
}

void Connection::close_after_flush() {
  if (closed_) return;
  close_after_flush_ = true;
  write_more();
}

void Connection::close(std::string_view reason) {
  if (closed_) return;
  if (!reason.empty()) {
    spdlog::info("connection {} from {}:{} closed: {}", id_, remote_address_, remote_port_, reason);
  }
  closed_ = true;
  if (handshaking_) {
    handshaking_ = false;
    sink_.on_tls_handshake_finished(false);
  }
  deadline_.cancel();
  boost::system::error_code ec;
  socket_.close(ec);
  out_.clear();
  out_bytes_ = 0;
  frames_ = jute::FrameDecoder(limits_.max_frame);
  sink_.on_closed(*this);
}

void Connection::set_reading(bool reading) {
  if (paused_ == !reading) return;
  paused_ = !reading;
  if (reading) read_more();
}

}  // namespace zkraft::server
