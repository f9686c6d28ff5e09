// RequestPipeline, the per-session queue's drain and flow control: replies leave a connection in
// request order (the head waits for its commit; reads run when they reach the head), a client
// that does not read stops getting answers, and a connection stops being read while it or the
// server has too many requests outstanding. Invariant: outstanding_ counts the entries of every
// client's queue.
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "jute/opcodes.h"
#include "server/slow_request_log.h"

namespace zkraft::server {

namespace op = jute::op;

void RequestPipeline::enqueue(Client& c, QueuedRequest p) {
  c.queue.push(std::move(p));
  ++outstanding_;
  pump(c);
}

void RequestPipeline::submit(Client& c, QueuedRequest p, Txn txn, bool close_after) {
  const Waiter w{c.conn, c.queue.front_seq() + c.queue.size()};
  uint64_t rid = writes_.submit(std::move(txn), w);
  if (rid == 0) {
    // No leader to take the write: the client sees ConnectionLoss and retries elsewhere.
    p.state = QueuedRequest::Answered{{}, true};
    enqueue(c, std::move(p));
    return;
  }
  p.state = QueuedRequest::InFlight{rid, close_after, {}};
  c.queue.push(std::move(p));
  ++outstanding_;
  update_flow_control(c);
}

void RequestPipeline::pump(Client& c) {
  // A client that does not read what it is sent gets no more answers until it does (its queue
  // then fills and flow control stops reading from it).
  while (!c.queue.empty() && !c.closing && c.unwritten_bytes < kMaxUnwrittenBytes) {
    QueuedRequest& head = c.queue.front();
    ReadResult r;
    if (auto* read = std::get_if<QueuedRequest::Read>(&head.state)) {
      r = reads_.execute(ReadCaller{c.conn, c.session_id, &c.auth}, head.xid, head.op, read->body);
    } else if (auto* done = std::get_if<QueuedRequest::Answered>(&head.state)) {
      r = ReadResult{std::move(done->reply), done->close_after};
    } else {
      break;  // in flight: everything behind it waits
    }
    QueuedRequest p = c.queue.pop_front();
    --outstanding_;
    const int64_t now = clock_.monotonic_ms();
    const int64_t latency = now - p.received_ms;
    if (!p.is_connect && p.op != op::kPing) {
      stats_.latency.record(latency);
      c.stats.latency.record(latency);
      if (auto line = slow_request_line(p, c.session_id, now, config_.slow_request_threshold_ms)) {
        ++stats_.slow_requests;
        spdlog::warn("{}", *line);
        remember_slow_request(stats_, *line, clock_.wall_ms());
        stats_.last_slow_request = std::move(*line);
      }
      // ServerStats.updateLatency: a request with a txn header is an update, the rest reads.
      if (latency >= 0) {
        (jute::op_is_write(p.op) ? stats_.update_latency_ms : stats_.read_latency_ms)
            .record(static_cast<uint64_t>(latency));
      }
    }
    c.stats.last_op = p.is_connect ? op::kCreateSession : p.op;
    c.stats.last_cxid = p.xid;
    c.stats.last_zxid = sm_.last_zxid();
    c.stats.last_response_ms = clock_.wall_ms();
    ++stats_.packets_sent;
    if (!r.reply.empty()) send(c, std::move(r.reply));
    if (r.close_after) {
      c.closing = true;
      io_.close_after_flush(c.conn);
      return;
    }
  }
  if (!c.closing) update_flow_control(c);
}

void RequestPipeline::update_flow_control(Client& c) {
  // A connection with nothing queued keeps reading whatever the global count: nothing of its own
  // would ever look at it again to resume it (ZooKeeper's shouldThrottle also spares a connection
  // with no outstanding requests).
  const bool reading = c.queue.empty() || !over_flow_limits(c.queue.size(), outstanding_, flow_);
  if (reading == c.reading) return;
  c.reading = reading;
  io_.set_reading(c.conn, reading);
}

void RequestPipeline::send(Client& c, std::string framed) {
  ++c.packets_sent;
  c.unwritten_bytes += framed.size();
  const auto limit = static_cast<uint64_t>(config_.max_client_send_queue_bytes);
  if (limit > 0 && c.unwritten_bytes > limit && !c.closing) {
    // Replies stop at kMaxUnwrittenBytes, watch events do not: a client that reads nothing while
    // its watches fire would otherwise make the server hold its output for ever. Closed (not
    // forgotten: callers may be iterating over it), the network thread reports kClosed later.
    ++stats_.slow_consumers_closed;
    c.closing = true;
    io_.close(c.conn, "slow consumer: " + std::to_string(c.unwritten_bytes) +
                          " bytes unsent (max_client_send_queue_bytes " + std::to_string(limit) + ")");
    return;
  }
  io_.send(c.conn, std::move(framed));
}

}  // namespace zkraft::server
