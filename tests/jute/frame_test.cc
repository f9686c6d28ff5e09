// FrameDecoder (split feeds, limits, sticky failure), four-letter-word detection, frame writers.

#include <gtest/gtest.h>

#include "jute/frame.h"
#include "jute/records.h"
#include "jute/reply.h"
#include "jute/request.h"
#include "test_util.h"

namespace zkraft::jute {
namespace {

using testing::from_hex;
using testing::to_hex;

std::string stream_of(const std::vector<std::string>& bodies) {
  std::string out;
  for (const auto& b : bodies) out += frame(b);
  return out;
}

TEST(Frame, FrameAddsBigEndianLength) {
  EXPECT_EQ(to_hex(frame("abc")), "00000003616263");
  EXPECT_EQ(to_hex(frame("")), "00000000");
}

TEST(Frame, BeginEndFrameFillsInTheLength) {
  Writer w;
  w.write_raw("zz");
  size_t at = begin_frame(w);
  w.write_int(7);
  w.write_bool(true);
  end_frame(w, at);
  EXPECT_EQ(to_hex(w.bytes()), "7a7a000000050000000701");
  EXPECT_EQ(to_hex(reply_frame(ReplyHeader{-2, 9, 0}, EmptyResponse{})),
            "00000010fffffffe000000000000000900000000");
}

TEST(Frame, RecordFrameWrapsOneRecord) {
  ConnectResponse r{0, 4000, 7, Buffer{std::string(16, 'p'), false}, false, true};
  std::string f = record_frame(r);
  ASSERT_EQ(f.size(), 41u);
  EXPECT_EQ(to_hex(f.substr(0, 4)), "00000025");
  ConnectResponse back;
  ASSERT_EQ(decode_connect_response(f.substr(4), Limits{}, back), err::kOk);
  EXPECT_EQ(back, r);
}

TEST(Frame, WholeStreamInOneFeed) {
  std::vector<std::string> bodies = {"hello", "", std::string(300, 'x'), "z"};
  FrameDecoder d;
  std::vector<std::string> got;
  ASSERT_TRUE(d.feed(stream_of(bodies), got));
  EXPECT_EQ(got, bodies);
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(Frame, EverySplitPointGivesTheSameFrames) {
  std::vector<std::string> bodies = {"first", "", "third-frame", std::string(1, '\0')};
  std::string s = stream_of(bodies);
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= s.size(); ++cut2) {
      FrameDecoder d;
      std::vector<std::string> got;
      ASSERT_TRUE(d.feed(std::string_view(s).substr(0, cut), got));
      ASSERT_TRUE(d.feed(std::string_view(s).substr(cut, cut2 - cut), got));
      ASSERT_TRUE(d.feed(std::string_view(s).substr(cut2), got));
      EXPECT_EQ(got, bodies) << cut << " " << cut2;
    }
  }
}

TEST(Frame, ByteAtATime) {
  std::vector<std::string> bodies = {"a", "bc", "", "def"};
  std::string s = stream_of(bodies);
  FrameDecoder d;
  std::vector<std::string> got;
  for (char c : s) ASSERT_TRUE(d.feed(std::string_view(&c, 1), got));
  EXPECT_EQ(got, bodies);
}

TEST(Frame, LengthUpToMaxFrameIsAcceptedAndOneMoreIsNot) {
  FrameDecoder ok(16);
  std::vector<std::string> got;
  EXPECT_TRUE(ok.feed(frame(std::string(16, 'a')), got));
  ASSERT_EQ(got.size(), 1u);

  FrameDecoder over(16);
  got.clear();
  EXPECT_FALSE(over.feed(from_hex("00000011"), got));
  EXPECT_TRUE(over.failed());
  EXPECT_TRUE(got.empty());
  // Sticky: even a valid frame afterwards is refused.
  EXPECT_FALSE(over.feed(frame("x"), got));
  EXPECT_TRUE(got.empty());
}

TEST(Frame, DefaultMaxIsJuteMaxBuffer) {
  FrameDecoder d;
  EXPECT_EQ(d.max_frame(), 0xfffff);
  std::vector<std::string> got;
  EXPECT_TRUE(d.feed(from_hex("000fffff"), got));  // accepted; body still to come
  FrameDecoder e;
  EXPECT_FALSE(e.feed(from_hex("00100000"), got));
}

TEST(Frame, NegativeLengthFails) {
  for (const char* hex : {"ffffffff", "80000000", "fffffffe"}) {
    FrameDecoder d;
    std::vector<std::string> got;
    EXPECT_FALSE(d.feed(from_hex(hex), got)) << hex;
    EXPECT_TRUE(d.failed());
  }
}

TEST(Frame, FramesBeforeABadLengthAreStillDelivered) {
  FrameDecoder d(8);
  std::vector<std::string> got;
  EXPECT_FALSE(d.feed(frame("ok") + from_hex("7fffffff") + frame("never"), got));
  EXPECT_EQ(got, (std::vector<std::string>{"ok"}));
}

TEST(Frame, NeverBuffersMoreThanOneFrame) {
  const int32_t max = 64;
  FrameDecoder d(max);
  std::string s;
  for (int i = 0; i < 1000; ++i) s += frame(std::string(static_cast<size_t>(i % (max + 1)), 'q'));
  std::vector<std::string> got;
  // Feed in odd-sized chunks and check the bound after each.
  for (size_t pos = 0; pos < s.size(); pos += 37) {
    ASSERT_TRUE(d.feed(std::string_view(s).substr(pos, 37), got));
    EXPECT_LE(d.buffered(), static_cast<size_t>(max));
  }
  EXPECT_EQ(got.size(), 1000u);
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(Frame, FourLetterWords) {
  for (const char* w : {"ruok", "srvr", "stat", "mntr", "conf", "cons", "crst", "srst", "envi",
                        "wchs", "wchc", "wchp", "dump", "isro", "dirs", "gtmk", "stmk", "hash"}) {
    EXPECT_TRUE(is_four_letter_word(w)) << w;
    EXPECT_EQ(classify_first_bytes(std::string(w) + "extra"), FirstBytes::kFourLetterWord);
  }
  EXPECT_TRUE(is_four_letter_word(std::string("\xff\xf4\xff\xfd", 4)));
  for (const char* w : {"xxxx", "RUOK", "ruo", "ruokk", "", "lsnp", "lead"}) {
    EXPECT_FALSE(is_four_letter_word(w)) << w;
  }
  EXPECT_EQ(classify_first_bytes("ruo"), FirstBytes::kNeedMore);
  EXPECT_EQ(classify_first_bytes(""), FirstBytes::kNeedMore);
  // A real ConnectRequest starts with its length (45 = 0x0000002d).
  EXPECT_EQ(classify_first_bytes(from_hex("0000002d00000000")), FirstBytes::kFrame);
}

}  // namespace
}  // namespace zkraft::jute
