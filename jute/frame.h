#pragma once
// Length-prefixed framing of the client byte stream, and four-letter-word detection.
//
// Frame rule (the same as ZooKeeper's NIOServerCnxn.readLength): a frame is a 4-byte big-endian
// length followed by that many bytes; a length < 0 or > max_frame is a protocol error and the
// connection is closed. max_frame defaults to Limits::max_buffer (jute.maxbuffer, 0xfffff) with no
// extra allowance for headers, exactly like ZooKeeper: a setData whose whole request is larger
// than jute.maxbuffer makes ZooKeeper drop the connection too, and clients rely on nothing more.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jute/archive.h"

namespace zkraft::jute {

// Splits a byte stream into frame bodies.
// Invariant: it buffers at most max(4, max_frame) bytes (a partial length prefix or a partial
// body), whatever it is fed, because every complete frame is handed out by feed() at once.
// After an error it stays failed and ignores further input.
class FrameDecoder {
 public:
  explicit FrameDecoder(int32_t max_frame = Limits{}.max_buffer) : max_frame_(max_frame) {}

  // Consumes all of `bytes`, appending each completed frame body (without its length) to
  // `frames`. Returns false (and stays failed) on a negative or oversize length; frames completed
  // before the bad length are still appended.
  bool feed(std::string_view bytes, std::vector<std::string>& frames);

  bool failed() const { return failed_; }
  // Bytes held for the frame in progress: the partial length prefix, or the body so far.
  size_t buffered() const { return partial_.size(); }
  int32_t max_frame() const { return max_frame_; }

 private:
  int32_t max_frame_;
  std::string partial_;  // the length prefix and the body received so far
  int64_t need_ = -1;    // body length of the frame in progress, -1 while reading the prefix
  bool failed_ = false;
};

// What the first bytes of a connection are, checked only on a connection's first packet.
enum class FirstBytes {
  kNeedMore,        // fewer than 4 bytes so far
  kFourLetterWord,  // a known 4lw (see is_four_letter_word); answer it and close
  kFrame,           // anything else: a length prefix (the ConnectRequest follows)
};
FirstBytes classify_first_bytes(std::string_view head);

// The four-letter words ZooKeeper 3.9.4 knows; the one list (the server's renderers use it too).
// `stmk` is followed by an 8-byte big-endian trace mask.
inline constexpr std::array<std::string_view, 18> kFourLetterWords = {
    "ruok", "srvr", "stat", "mntr", "conf", "cons", "crst", "srst", "envi",
    "wchs", "wchc", "wchp", "dump", "isro", "dirs", "gtmk", "stmk", "hash"};

// zkraft's own words for Raft operators, named as ClickHouse Keeper names them: lgif (log
// bounds), csnp (snapshot now), rqld (ask for leadership), ydld (yield leadership); and slow
// (the recent lines of the slow-request log, for zkraft-ctl slow-log).
inline constexpr std::array<std::string_view, 5> kRaftFourLetterWords = {"lgif", "csnp", "rqld", "ydld", "slow"};

// True for a word of kFourLetterWords or kRaftFourLetterWords, and for the telnet close sequence 0xfff4fffd that
// ZooKeeper also accepts on a new connection (answered with nothing).
bool is_four_letter_word(std::string_view first4);

// body -> 4-byte big-endian length + body.
std::string frame(std::string_view body);

// For writing a frame in place: begin_frame reserves the length and returns its position,
// end_frame fills it in with the number of bytes written since.
size_t begin_frame(Writer& w);
void end_frame(Writer& w, size_t at);

// One record as a complete length-prefixed frame, e.g. the ConnectResponse of a handshake.
// (Replies with a header: jute/reply.h reply_frame.)
template <class Record>
std::string record_frame(const Record& r) {
  Writer w;
  size_t at = begin_frame(w);
  encode(w, r);
  end_frame(w, at);
  return w.take();
}

}  // namespace zkraft::jute
