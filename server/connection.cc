#include "server/connection.h"

#include <spdlog/spdlog.h>

#include <array>
#include <vector>

#include "server/client_io.h"

namespace zkraft::server {

namespace asio = boost::asio;

namespace {
constexpr size_t kReadChunk = 16 * 1024;
}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, uint64_t id, ConnectionSink& sink,
                       const ConnectionLimits& limits, const Clock& clock)
    : socket_(std::move(socket)),
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
  ClientMessage m;
  m.kind = ClientMessage::Kind::kOpened;
  m.conn = id_;
  m.remote_address = remote_address_;
  m.remote_port = remote_port_;
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
  auto chunk = std::make_shared<std::array<char, kReadChunk>>();
  socket_.async_read_some(
      asio::buffer(*chunk), [self = shared_from_this(), chunk](boost::system::error_code ec, size_t n) {
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
        self->parse_input(std::string_view(chunk->data(), n));
        self->sink_.flush();
        self->read_more();
      });
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
  asio::async_write(socket_, bufs,
                    [self = shared_from_this(), count, bytes](boost::system::error_code ec, size_t) {
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
