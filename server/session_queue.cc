#include "server/session_queue.h"

#include "tree/invariant.h"  // the server has no invariant header of its own: tree/ is below it

namespace zkraft::server {

SessionQueue::Seq SessionQueue::push(QueuedRequest r) {
  if (std::holds_alternative<QueuedRequest::InFlight>(r.state)) ++in_flight_;
  queue_.push_back(std::move(r));
  return front_seq_ + queue_.size() - 1;
}

QueuedRequest* SessionQueue::find(Seq seq) {
  if (seq < front_seq_ || seq - front_seq_ >= queue_.size()) return nullptr;
  return &queue_[seq - front_seq_];
}

bool SessionQueue::answer(Seq seq, std::string reply, bool close_after) {
  QueuedRequest* r = find(seq);
  if (!r) return false;
  auto* in = std::get_if<QueuedRequest::InFlight>(&r->state);
  ZKRAFT_INVARIANT(in != nullptr, "a request was answered twice");
  close_after = close_after || in->close_after;
  r->state = QueuedRequest::Answered{std::move(reply), close_after};
  --in_flight_;
  return true;
}

QueuedRequest SessionQueue::pop_front() {
  ZKRAFT_INVARIANT(!queue_.empty(), "pop from an empty session queue");
  ZKRAFT_INVARIANT(!std::holds_alternative<QueuedRequest::InFlight>(queue_.front().state),
                   "a reply would leave before its outcome (reply order)");
  QueuedRequest r = std::move(queue_.front());
  queue_.pop_front();
  ++front_seq_;
  return r;
}

}  // namespace zkraft::server
