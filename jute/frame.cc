#include "jute/frame.h"

#include <algorithm>
#include <array>

namespace zkraft::jute {

namespace {
int32_t load_be32(const char* b) {
  auto u = [b](int i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[i])); };
  return static_cast<int32_t>((u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3));
}
}  // namespace

bool FrameDecoder::feed(std::string_view bytes, std::vector<std::string>& frames) {
  if (failed_) return false;
  for (;;) {
    if (need_ < 0) {
      if (bytes.empty()) return true;
      size_t take = std::min(bytes.size(), size_t{4} - partial_.size());
      partial_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (partial_.size() < 4) return true;
      int32_t len = load_be32(partial_.data());
      if (len < 0 || len > max_frame_) {
        failed_ = true;
        partial_.clear();
        return false;
      }
      need_ = len;
      partial_.clear();  // the body is collected alone so a complete frame moves out without copy
    }
    size_t take = std::min(bytes.size(), static_cast<size_t>(need_) - partial_.size());
    partial_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (partial_.size() < static_cast<size_t>(need_)) return true;  // all input consumed
    frames.push_back(std::move(partial_));
    partial_.clear();
    need_ = -1;
  }
}

bool is_four_letter_word(std::string_view w) {
  if (w.size() != 4) return false;
  if (w == std::string_view("\xff\xf4\xff\xfd", 4)) return true;  // telnet interrupt + close
  return std::find(kFourLetterWords.begin(), kFourLetterWords.end(), w) != kFourLetterWords.end() ||
         std::find(kRaftFourLetterWords.begin(), kRaftFourLetterWords.end(), w) !=
             kRaftFourLetterWords.end();
}

FirstBytes classify_first_bytes(std::string_view head) {
  if (head.size() < 4) return FirstBytes::kNeedMore;
  return is_four_letter_word(head.substr(0, 4)) ? FirstBytes::kFourLetterWord : FirstBytes::kFrame;
}

std::string frame(std::string_view body) {
  Writer w;
  w.write_int(static_cast<int32_t>(body.size()));
  w.write_raw(body);
  return w.take();
}

size_t begin_frame(Writer& w) {
  size_t at = w.size();
  w.write_int(0);
  return at;
}

void end_frame(Writer& w, size_t at) {
  w.patch_int(at, static_cast<int32_t>(w.size() - at - 4));
}

}  // namespace zkraft::jute
