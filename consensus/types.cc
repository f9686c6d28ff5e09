#include "consensus/types.h"

#include <utility>

namespace zkraft::consensus {

namespace {

class InMemorySnapshot final : public SnapshotData {
 public:
  explicit InMemorySnapshot(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string_view bytes() const override { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

SnapshotBytes snapshot_in_memory(std::string bytes) {
  return std::make_shared<const InMemorySnapshot>(std::move(bytes));
}

}  // namespace zkraft::consensus
