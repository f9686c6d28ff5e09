#include "consensus/raft_core.h"

#include <algorithm>

#include "consensus/invariant.h"

namespace zkraft::consensus {

const char* role_name(Role r) {
  switch (r) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "pre-candidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "?";
}

const char* progress_state_name(ProgressState s) {
  switch (s) {
    case ProgressState::kProbe: return "probe";
    case ProgressState::kReplicate: return "replicate";
    case ProgressState::kSnapshot: return "snapshot";
  }
  return "?";
}

const char* raft_error_name(RaftError e) {
  switch (e) {
    case RaftError::kOk: return "ok";
    case RaftError::kNotLeader: return "not leader";
    case RaftError::kTransferInProgress: return "leadership transfer in progress";
    case RaftError::kConfChangePending: return "membership change pending";
    case RaftError::kInvalidConfChange: return "invalid membership change";
    case RaftError::kInvalidArgument: return "invalid argument";
  }
  return "?";
}

namespace {
bool is_response(MessageType t) {
  return t == MessageType::kPreVoteResponse || t == MessageType::kVoteResponse ||
         t == MessageType::kAppendResponse || t == MessageType::kHeartbeatResponse ||
         t == MessageType::kSnapshotResponse || t == MessageType::kReadIndexResponse;
}
}  // namespace

RaftCore::RaftCore(const RaftConfig& config, RecoveredState rec, RandomSource random)
    : id_(config.id),
      cfg_(config),
      random_(std::move(random)),
      log_(rec.snapshot.index, rec.snapshot.term, std::move(rec.entries)) {
  ZKRAFT_INVARIANT(cfg_.election_ticks > cfg_.heartbeat_ticks && cfg_.heartbeat_ticks > 0,
                   "the election timeout must be longer than the heartbeat interval");
  term_ = rec.hard_state.term;
  vote_ = rec.hard_state.vote;
  commit_ = std::clamp(rec.hard_state.commit, rec.snapshot.index, log_.last_index());
  applied_ = std::max(rec.applied, rec.snapshot.index);
  applied_ = std::min(applied_, commit_);
  snapshot_meta_ = rec.snapshot;
  snapshot_size_ = rec.snapshot_bytes ? rec.snapshot_bytes->size() : 0;
  if (rec.keep_snapshot_bytes) snapshot_data_ = std::move(rec.snapshot_bytes);  // else on disk only
  base_membership_ = rec.snapshot.index > 0 ? rec.snapshot.membership : cfg_.initial_membership;
  refresh_membership();
  prev_hard_state_ = hard_state();
  become_follower(term_, 0);
}

// ---------------------------------------------------------------- role transitions

void RaftCore::reset(Term term) {
  if (term_ != term) {
    term_ = term;
    vote_ = 0;
    heard_tick_.clear();  // contact counts only within one term
  }
  lead_ = 0;
  election_elapsed_ = 0;
  heartbeat_elapsed_ = 0;
  randomized_election_timeout_ =
      cfg_.election_ticks + static_cast<int>(random_() % static_cast<uint64_t>(cfg_.election_ticks));
  votes_.clear();
  lead_transferee_ = 0;
  fast_campaign_ticks_ = 0;
  reads_.clear();
  reads_waiting_for_commit_.clear();
  remote_reads_waiting_for_commit_.clear();
  progress_.clear();
}

void RaftCore::become_follower(Term term, NodeId lead) {
  reset(term);
  role_ = Role::kFollower;
  lead_ = lead;
}

// A follower restarts its election timer only when it grants a vote or hears a leader (thesis
// Figure 3.1); adopting a newer term from a vote request or a response, or losing an election,
// is neither. Restarting it there let candidates starve each other without PreVote: a refused
// request reset the timer of the voter whose log could win (sim seed 316449: ~100 rounds, no
// leader for 8 s), and a candidate that lost restarted its timer only once the refusals came
// back, so it lagged the rival it could beat by that delay every round and never reached a term
// above it (seed 303612, where the rival's configuration does not even include it).
void RaftCore::follower_keeping_timer(Term term) {
  const int elapsed = election_elapsed_;
  const int timeout = randomized_election_timeout_;
  become_follower(term, 0);
  election_elapsed_ = elapsed;
  randomized_election_timeout_ = timeout;
}

void RaftCore::become_pre_candidate() {
  // A pre-candidate changes neither term nor vote: it only asks whether it could win.
  votes_.clear();
  lead_ = 0;
  role_ = Role::kPreCandidate;
  election_elapsed_ = 0;
  // A fresh timeout, so that pre-candidates whose rounds tied do not retry in lockstep.
  randomized_election_timeout_ =
      cfg_.election_ticks + static_cast<int>(random_() % static_cast<uint64_t>(cfg_.election_ticks));
  progress_.clear();
}

void RaftCore::become_candidate() {
  reset(term_ + 1);
  vote_ = id_;
  role_ = Role::kCandidate;
}

void RaftCore::become_leader() {
  reset(term_);
  role_ = Role::kLeader;
  lead_ = id_;
  sync_progress_with_membership();
  // Conservatively forbid membership changes until the no-op below (and with it everything
  // before it) is committed: the single-server change rule needs a committed entry of this term.
  Entry noop;
  noop.term = term_;
  noop.index = log_.last_index() + 1;
  log_.append(std::move(noop));
  pending_conf_index_ = log_.last_index();
  broadcast_append();
  if (maybe_commit()) after_commit_advanced();
}

void RaftCore::campaign(CampaignKind kind) {
  Term vote_term;
  MessageType type;
  if (kind == CampaignKind::kPreElection) {
    become_pre_candidate();
    vote_term = term_ + 1;
    type = MessageType::kPreVote;
  } else {
    become_candidate();
    vote_term = term_;
    type = MessageType::kVote;
  }
  votes_[id_] = true;
  if (std::count_if(votes_.begin(), votes_.end(), [](auto& v) { return v.second; }) >=
      static_cast<long>(quorum())) {
    if (kind == CampaignKind::kPreElection) {
      campaign(CampaignKind::kElection);
    } else {
      become_leader();
    }
    return;
  }
  for (NodeId v : membership_.voters) {
    if (v == id_) continue;
    Message m;
    m.type = type;
    m.to = v;
    m.term = vote_term;
    m.index = log_.last_index();
    m.log_term = log_.last_term();
    m.context = kind == CampaignKind::kTransfer ? 1 : 0;
    send(std::move(m));
  }
}

// ---------------------------------------------------------------- ticks

void RaftCore::tick() {
  ++ticks_;
  if (role_ == Role::kLeader) {
    tick_heartbeat();
  } else {
    tick_election();
  }
}

void RaftCore::campaign_if_sole_voter() {
  if (role_ == Role::kLeader || !promotable() || membership_.voters.size() != 1) return;
  election_elapsed_ = 0;
  campaign(cfg_.pre_vote ? CampaignKind::kPreElection : CampaignKind::kElection);
}

void RaftCore::tick_election() {
  ++election_elapsed_;
  if (fast_campaign_ticks_ > 0 && --fast_campaign_ticks_ == 0 && role_ == Role::kFollower &&
      lead_ == 0 && promotable()) {
    election_elapsed_ = 0;
    campaign(cfg_.pre_vote ? CampaignKind::kPreElection : CampaignKind::kElection);
    return;
  }
  if (promotable() && election_elapsed_ >= randomized_election_timeout_) {
    election_elapsed_ = 0;
    campaign(cfg_.pre_vote ? CampaignKind::kPreElection : CampaignKind::kElection);
  }
}

void RaftCore::tick_heartbeat() {
  ++heartbeat_elapsed_;
  ++election_elapsed_;
  if (election_elapsed_ >= cfg_.election_ticks) {
    election_elapsed_ = 0;
    if (cfg_.check_quorum) {
      if (!quorum_active()) {
        become_follower(term_, 0);
        return;
      }
    }
    // A transfer that did not finish within an election timeout is abandoned.
    lead_transferee_ = 0;
  }
  if (heartbeat_elapsed_ >= cfg_.heartbeat_ticks) {
    heartbeat_elapsed_ = 0;
    broadcast_heartbeat(reads_.last_round());
  }
}

bool RaftCore::quorum_active() {
  size_t active = is_voter(membership_, id_) ? 1 : 0;
  for (auto& [id, pr] : progress_) {
    if (!pr.learner && pr.recent_active) ++active;
    pr.recent_active = false;
  }
  return active >= quorum();
}

bool RaftCore::in_lease() const {
  return cfg_.check_quorum && lead_ != 0 && election_elapsed_ < cfg_.election_ticks;
}

void RaftCore::broken_leader_connection() {
  if (role_ != Role::kFollower || !promotable()) return;
  const NodeId broken = lead_;
  // The leader is unreachable from here: stop honouring its lease, so that we can grant the
  // pre-vote of another follower that noticed the same failure.
  lead_ = 0;
  // Followers that all noticed at once would split their votes; stagger them deterministically
  // by id: the lowest-id voter campaigns now, the next one two ticks later, and so on. A
  // follower that grants someone else's (pre-)vote meanwhile drops its own attempt.
  int rank = 0;
  for (NodeId v : membership_.voters) {
    if (v != broken && v < id_) ++rank;
  }
  if (rank == 0) {
    election_elapsed_ = 0;
    campaign(cfg_.pre_vote ? CampaignKind::kPreElection : CampaignKind::kElection);
  } else {
    fast_campaign_ticks_ = 2 * rank;
  }
}

// ---------------------------------------------------------------- step

void RaftCore::step(const Message& m) {
  if (m.to != id_ || m.from == id_ || m.from == 0) return;
  const bool vote_request = m.type == MessageType::kVote || m.type == MessageType::kPreVote;

  if (m.term > term_) {
    if (vote_request) {
      // Lease: while we hear from a leader, refuse to help depose it (unless the leader itself
      // asked for the election by a transfer).
      if (m.context != 1 && in_lease()) return;
    }
    if (m.type == MessageType::kPreVote) {
      // never changes our term
    } else if (m.type == MessageType::kPreVoteResponse && !m.reject) {
      // a pre-vote granted for the term we would campaign in
    } else if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
               m.type == MessageType::kSnapshot) {
      become_follower(m.term, m.from);
    } else {
      // A newer term from anything but a leader (a vote request, a response): adopt it but keep
      // the election timer running (follower_keeping_timer).
      follower_keeping_timer(m.term);
    }
  } else if (m.term < term_) {
    if (m.type == MessageType::kHeartbeat || m.type == MessageType::kAppend) {
      // A stale leader (e.g. after a partition healed): tell it our term so it steps down (the
      // rejection of a stale term, Raft §5.1). Also without PreVote and CheckQuorum, where etcd
      // ignores it and counts on our vote requests reaching the leader: they do not when our
      // configuration, an uncommitted one still in our log, leaves the leader out (sim seed
      // 13209 with compact_step 3: a stale leader's "remove 2" kept it campaigning alone).
      Message r;
      r.type = MessageType::kAppendResponse;
      r.to = m.from;
      send(std::move(r));
    } else if (m.type == MessageType::kPreVote || m.type == MessageType::kVote) {
      // Reject with our term: a candidate behind in terms adopts it and can campaign again
      // above it (otherwise a voter far ahead in terms could ignore it for a long time).
      Message r;
      r.type = m.type == MessageType::kPreVote ? MessageType::kPreVoteResponse : MessageType::kVoteResponse;
      r.to = m.from;
      r.reject = true;
      send(std::move(r));
    }
    return;
  }
  if (m.term == term_) heard_tick_[m.from] = ticks_;

  if (vote_request) {
    handle_vote_request(m);
    return;
  }
  switch (role_) {
    case Role::kLeader: step_leader(m); break;
    case Role::kCandidate:
    case Role::kPreCandidate: step_candidate(m); break;
    case Role::kFollower: step_follower(m); break;
  }
}

void RaftCore::handle_vote_request(const Message& m) {
  const bool pre = m.type == MessageType::kPreVote;
  const bool can_vote = vote_ == m.from || (vote_ == 0 && lead_ == 0) || (pre && m.term > term_);
  Message r;
  r.type = pre ? MessageType::kPreVoteResponse : MessageType::kVoteResponse;
  r.to = m.from;
  if (can_vote && log_.is_up_to_date(m.index, m.log_term)) {
    fast_campaign_ticks_ = 0;  // someone else is already campaigning
    // A granted pre-vote answers in the term asked about, so the candidate can count it.
    r.term = m.term;
    if (!pre) {
      election_elapsed_ = 0;
      vote_ = m.from;
    }
  } else {
    r.reject = true;
  }
  send(std::move(r));
}

void RaftCore::step_follower(const Message& m) {
  switch (m.type) {
    case MessageType::kAppend:
      election_elapsed_ = 0;
      lead_ = m.from;
      handle_append(m);
      break;
    case MessageType::kHeartbeat:
      election_elapsed_ = 0;
      lead_ = m.from;
      handle_heartbeat(m);
      break;
    case MessageType::kSnapshot:
      election_elapsed_ = 0;
      lead_ = m.from;
      handle_snapshot_chunk(m);
      break;
    case MessageType::kTimeoutNow:
      if (promotable()) campaign(CampaignKind::kTransfer);
      break;
    case MessageType::kReadIndexResponse:
      if (!m.reject) read_states_.push_back(ReadState{m.context, m.index});
      break;
    case MessageType::kReadIndex: {
      Message r;
      r.type = MessageType::kReadIndexResponse;
      r.to = m.from;
      r.context = m.context;
      r.reject = true;
      send(std::move(r));
      break;
    }
    default:
      break;
  }
}

void RaftCore::step_candidate(const Message& m) {
  switch (m.type) {
    case MessageType::kAppend:
    case MessageType::kHeartbeat:
    case MessageType::kSnapshot:
      // A leader exists in our term (or the term we only pre-campaigned for is taken).
      become_follower(m.term, m.from);
      step_follower(m);
      return;
    case MessageType::kPreVoteResponse:
    case MessageType::kVoteResponse: {
      const bool mine = (role_ == Role::kPreCandidate) == (m.type == MessageType::kPreVoteResponse);
      if (!mine) return;
      // A granted pre-vote must be for the term we would campaign in now, not an older one.
      if (role_ == Role::kPreCandidate && !m.reject && m.term != term_ + 1) return;
      if (!votes_.count(m.from)) votes_[m.from] = !m.reject;
      long granted = 0, rejected = 0;
      for (auto& [id, g] : votes_) {
        if (!is_voter(membership_, id)) continue;
        (g ? granted : rejected)++;
      }
      if (granted >= static_cast<long>(quorum())) {
        if (role_ == Role::kPreCandidate) {
          campaign(CampaignKind::kElection);
        } else {
          become_leader();
        }
      } else if (rejected >= static_cast<long>(quorum())) {
        follower_keeping_timer(term_);
      }
      return;
    }
    case MessageType::kTimeoutNow:
      return;
    default:
      return;
  }
}

// ---------------------------------------------------------------- Ready

void RaftCore::send(Message m) {
  m.from = id_;
  if (m.term == 0) m.term = term_;  // pre-vote requests/grants set their own term
  // A leader's appends, heartbeats and snapshot chunks do not depend on its own disk (§10.2.1:
  // it counts itself only once persisted), so they leave at once. Everything else a node says
  // (votes, acknowledgements) promises durable state and waits for the fsync.
  const bool now = role_ == Role::kLeader && !is_response(m.type);
  (now ? msgs_now_ : msgs_after_persist_).push_back(std::move(m));
}

bool RaftCore::has_ready() const {
  if (ready_outstanding_) return false;
  return append_pending_ || !msgs_now_.empty() || !msgs_after_persist_.empty() || !(hard_state() == prev_hard_state_) ||
         log_.last_index() > log_.stable_index() || pending_snapshot_.has_value() || !incoming_chunks_.empty() ||
         commit_ > applied_ || !read_states_.empty();
}

Ready RaftCore::ready() {
  ZKRAFT_INVARIANT(!ready_outstanding_, "one Ready at a time: advance() the previous one first");
  // Paired with the checks before the disk write (LogStorage::append): what this batch asks the
  // caller to persist and apply is consistent with what it persisted before.
  ZKRAFT_INVARIANT(commit_ >= prev_hard_state_.commit, "commit never goes back");
  ZKRAFT_INVARIANT(commit_ <= log_.last_index(), "commit never passes the last log entry");
  ZKRAFT_INVARIANT(applied_ <= commit_, "only committed entries are applied");
  if (append_pending_) {
    append_pending_ = false;
    if (role_ == Role::kLeader) {
      for (auto& [id, pr] : progress_) send_append(id, /*send_if_empty=*/false);
    }
  }
  Ready rd;
  if (!(hard_state() == prev_hard_state_)) {
    rd.hard_state = hard_state();
    // A new term or vote must be durable before any message; a commit index alone need not be
    // (it can be re-learned from the leader).
    rd.sync = hard_state().term != prev_hard_state_.term || hard_state().vote != prev_hard_state_.vote;
    prev_hard_state_ = hard_state();
  }
  Index apply_from = applied_ + 1;
  if (pending_snapshot_) {
    rd.snapshot = *pending_snapshot_;
    rd.snapshot_size = pending_snapshot_size_;
    apply_from = std::max(apply_from, pending_snapshot_->index + 1);
  }
  rd.snapshot_chunks = std::move(incoming_chunks_);
  incoming_chunks_.clear();
  rd.entries = log_.unstable_entries();
  rd.sync = rd.sync || rd.snapshot.has_value() || !rd.entries.empty();
  rd.persisted_index = log_.last_index();
  rd.persisted_term = log_.last_term();
  rd.messages_now = std::move(msgs_now_);
  rd.messages_after_persist = std::move(msgs_after_persist_);
  msgs_now_.clear();
  msgs_after_persist_.clear();
  apply_from = std::max(apply_from, log_.first_index());
  if (commit_ >= apply_from) rd.committed_entries.reserve(commit_ - apply_from + 1);
  for (Index i = apply_from; i <= commit_; ++i) rd.committed_entries.push_back(log_.at(i));
  rd.applied_index = std::max(applied_, commit_);
  rd.read_states = std::move(read_states_);
  read_states_.clear();
  ready_outstanding_ = true;
  return rd;
}

void RaftCore::advance(const Ready& rd) {
  ZKRAFT_INVARIANT(ready_outstanding_, "advance() without an outstanding Ready");
  ZKRAFT_INVARIANT(rd.applied_index <= commit_, "only committed entries are applied");
  ready_outstanding_ = false;
  if (rd.snapshot) {
    // Stored, and so on disk only, as after drop_snapshot_bytes: sending it to a follower reads
    // it back.
    snapshot_meta_ = *rd.snapshot;
    snapshot_data_.reset();
    snapshot_size_ = rd.snapshot_size;
    snapshot_bytes_wanted_ = false;
    if (pending_snapshot_ && pending_snapshot_->index == rd.snapshot->index) {
      pending_snapshot_.reset();
      pending_snapshot_size_ = 0;
      snapshot_unpersisted_ = false;
    }
  }
  log_.stable_to(rd.persisted_index, rd.persisted_term);
  applied_ = std::max(applied_, rd.applied_index);
  evict_log_memory();
  if (role_ == Role::kLeader && maybe_commit()) {
    after_commit_advanced();
    if (role_ == Role::kLeader) broadcast_append();
  }
}

void RaftCore::evict_log_memory() {
  if (cfg_.max_log_memory_bytes == 0) return;
  log_.evict_to_fit(applied_, cfg_.max_log_memory_bytes);
}

uint64_t RaftCore::quorum_contact_age_ticks() const {
  auto age_of = [this](NodeId id) {
    if (id == id_) return uint64_t{0};
    auto it = heard_tick_.find(id);
    return it == heard_tick_.end() ? kNoQuorumContact : ticks_ - it->second;
  };
  if (role_ == Role::kLeader) {
    std::vector<uint64_t> ages;
    for (NodeId v : membership_.voters) ages.push_back(age_of(v));
    if (ages.size() < quorum()) return kNoQuorumContact;
    std::nth_element(ages.begin(), ages.begin() + static_cast<long>(quorum() - 1), ages.end());
    return ages[quorum() - 1];
  }
  if (role_ == Role::kFollower && lead_ != 0) return age_of(lead_);
  return kNoQuorumContact;
}

RaftStatus RaftCore::status() const {
  RaftStatus s;
  s.id = id_;
  s.role = role_;
  s.term = term_;
  s.vote = vote_;
  s.leader = lead_;
  s.commit = commit_;
  s.applied = applied_;
  s.first_index = log_.first_index();
  s.last_index = log_.last_index();
  s.first_term = log_.term(s.first_index).value_or(0);
  s.last_term = log_.last_term();
  s.snapshot_index = snapshot_meta_.index;
  s.evicted_index = log_.evicted();
  s.log_memory_bytes = log_.memory_bytes();
  s.membership = membership_;
  s.transferee = lead_transferee_;
  s.quorum_contact_age_ticks = quorum_contact_age_ticks();
  for (auto& [id, pr] : progress_) {
    s.peers.push_back(PeerStatus{id, pr.match, pr.next, pr.state, pr.learner, pr.recent_active});
  }
  return s;
}

}  // namespace zkraft::consensus
