#include "server/connection.h"

#include <spdlog/spdlog.h>

#include <array>
#include <cstring>
#include <set>

#include "jute/frame.h"

namespace zkraft::server {

namespace asio = boost::asio;

namespace {
constexpr size_t kReadChunk = 16 * 1024;

int32_t load_be32(const char* p) {
  auto b = reinterpret_cast<const uint8_t*>(p);
  return static_cast<int32_t>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
                              (uint32_t{b[2]} << 8) | uint32_t{b[3]});
}
}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, uint64_t id, FrameSink& sink,
                       const ConnectionLimits& limits)
    : socket_(std::move(socket)), id_(id), sink_(sink), limits_(limits) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  if (!ec) {
    remote_address_ = ep.address().to_string();
    remote_port_ = ep.port();
  }
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start() { read_more(); }

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
          if (ec == asio::error::eof && self->close_after_flush_) {
            self->read_eof_ = true;  // a 4lw client that half-closed: still owed its answer
            return;
          }
          self->close();
          return;
        }
        self->inbuf_.append(chunk->data(), n);
        self->parse_input();
        self->read_more();
      });
}

void Connection::parse_input() {
  size_t pos = 0;
  while (!closed_ && !close_after_flush_ && inbuf_.size() - pos >= 4) {
    if (first_packet_) {
      std::string word(inbuf_.data() + pos, 4);
      if (jute::is_four_letter_word(word)) {
        first_packet_ = false;
        inbuf_.clear();
        sink_.on_four_letter_word(shared_from_this(), word);
        return;
      }
    }
    int32_t len = load_be32(inbuf_.data() + pos);
    if (len < 0 || len > limits_.max_frame) {
      spdlog::warn("connection {} from {}:{}: frame length {} outside [0, {}]; closing", id_,
                   remote_address_, remote_port_, len, limits_.max_frame);
      close();
      return;
    }
    if (inbuf_.size() - pos - 4 < static_cast<size_t>(len)) break;
    first_packet_ = false;
    ++packets_received_;
    std::string_view frame(inbuf_.data() + pos + 4, static_cast<size_t>(len));
    pos += 4 + static_cast<size_t>(len);
    sink_.on_frame(shared_from_this(), frame);
  }
  if (closed_) return;
  inbuf_.erase(0, pos);
}

void Connection::send(std::string framed) {
  if (closed_ || dropping_) return;
  ++packets_sent_;
  out_bytes_ += framed.size();
  out_.push_back(std::move(framed));
  if (out_bytes_ > limits_.kill_outbound_bytes) {
    if (!dropping_) {
      dropping_ = true;
      spdlog::warn("connection {} from {}:{}: {} bytes unread by the client; closing", id_,
                   remote_address_, remote_port_, out_bytes_);
      // Not here: the caller may be in the middle of using this connection's client state.
      asio::post(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
    }
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
                      self->write_more();
                      self->read_more();
                    });
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
  inbuf_.clear();
  inbuf_.shrink_to_fit();
  sink_.on_closed(shared_from_this());
}

void Connection::pause_reading() { paused_ = true; }

void Connection::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  read_more();
}

}  // namespace zkraft::server
