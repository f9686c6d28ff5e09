// PathIndex: the tree's open-addressing path index, checked against a std::map model.
#include "tree/path_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace zkraft::tree {
namespace {

Znode node_with_version(int32_t v) {
  Znode n;
  n.version = v;
  return n;
}

// Random inserts, erases and lookups over a pool of `keys` paths; after every `check_every` steps
// each path of the pool is looked up and must be there exactly when the model has it, at the address it was
// inserted at (entries never move: child lists point at them).
void run_against_model(size_t keys, int steps, uint32_t seed, int check_every = 1) {
  SCOPED_TRACE(testing::Message() << "keys " << keys << ", seed " << seed);
  std::mt19937 rng(seed);
  std::vector<std::string> pool;
  for (size_t i = 0; i < keys; ++i) pool.push_back("/k/" + std::to_string(i * 7919 % 100003));
  PathIndex index;
  std::map<std::string, std::pair<ZnodeEntry*, int32_t>> model;
  for (int step = 0; step < steps; ++step) {
    const std::string& path = pool[rng() % pool.size()];
    auto it = model.find(path);
    if (rng() % 2 == 0) {
      auto [e, inserted] = index.emplace(path, node_with_version(step));
      ASSERT_EQ(inserted, it == model.end()) << path;
      if (inserted) {
        ASSERT_EQ(e->first.view(), path);
        model[path] = {e, step};
      } else {
        ASSERT_EQ(e, it->second.first) << "emplace of a present path returns its entry";
        ASSERT_EQ(e->second.version, it->second.second) << "and leaves it as it was";
      }
    } else if (it != model.end()) {
      index.erase(it->second.first);
      model.erase(it);
    }
    ASSERT_EQ(index.size(), model.size());
    ASSERT_LE(index.size(), index.capacity() / 4 * 3);
    if (step % check_every != 0 && step != steps - 1) continue;
    for (const std::string& p : pool) {
      auto m = model.find(p);
      ZnodeEntry* e = index.find(p);
      if (m == model.end()) {
        ASSERT_EQ(e, nullptr) << p << " was erased or never inserted";
      } else {
        ASSERT_EQ(e, m->second.first) << p;
        ASSERT_EQ(e->second.version, m->second.second) << p;
      }
    }
  }
}

// Up to 12 entries in the smallest table (16 slots): runs of occupied slots are long, wrap
// around the end and are shifted back by most erases.
TEST(PathIndex, MatchesAModelInTheSmallestTable) {
  for (uint32_t seed = 1; seed <= 20; ++seed) run_against_model(12, 400, seed);
}

TEST(PathIndex, MatchesAModelThroughGrowth) {
  run_against_model(3000, 20000, 7, /*check_every=*/97);
}

// Growth is spread over the writes after it (path_index.h): while entries are still being moved
// out of the old table, lookups, inserts of present paths and erases must find them in either
// table, and the move must end.
TEST(PathIndex, EntriesStayReachableWhileAGrowthMovesThem) {
  PathIndex index;
  std::map<std::string, ZnodeEntry*> model;
  int next = 0;
  auto add = [&] {
    const std::string p = "/g/" + std::to_string(next++);
    auto [e, inserted] = index.emplace(p, node_with_version(next));
    ASSERT_TRUE(inserted);
    model[p] = e;
  };
  auto check_all = [&] {
    ASSERT_EQ(index.size(), model.size());
    for (const auto& [p, e] : model) {
      ASSERT_EQ(index.find(p), e) << p;
      ASSERT_FALSE(index.emplace(p, Znode()).second) << p;
    }
  };
  for (int growth = 0; growth < 6; ++growth) {
    while (!index.growing()) add();
    const size_t capacity = index.capacity();
    check_all();  // the first writes of the move: most entries are still in the old table
    // Odd growths: erase every third entry, many of them still in the old table (each erase
    // moves some, so those moves end during the erases). Even growths: only inserts, so the
    // bound on the writes a move takes is checked.
    int i = 0;
    for (auto it = model.begin(); growth % 2 == 1 && it != model.end();) {
      if (i++ % 3 == 0) {
        index.erase(it->second);
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    check_all();
    int writes = 0;
    while (index.growing()) {
      add();
      ASSERT_LE(++writes, static_cast<int>(capacity / 10)) << "the move ends within capacity / 10 writes";
    }
    if (growth % 2 == 0) EXPECT_GT(writes, 0) << "the move went on after the growth's own write";
    EXPECT_EQ(index.capacity(), capacity) << "no second growth while the first was moving";
    check_all();
  }
}

TEST(PathIndex, EntriesKeepTheirAddressesWhenTheTableGrows) {
  PathIndex index;
  std::vector<ZnodeEntry*> entries;
  for (int i = 0; i < 10000; ++i) {
    auto [e, inserted] = index.emplace("/n" + std::to_string(i), node_with_version(i));
    ASSERT_TRUE(inserted);
    entries.push_back(e);
  }
  EXPECT_GE(index.capacity(), 10000u * 4 / 3);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(index.find("/n" + std::to_string(i)), entries[i]);
    ASSERT_EQ(entries[i]->second.version, i);
  }
}

TEST(PathIndex, ReserveMakesRoomOnceAndFindTakesAKnownHash) {
  PathIndex index;
  EXPECT_EQ(index.capacity(), 0u);
  EXPECT_EQ(index.find("/a"), nullptr) << "an index that never had a table";
  index.reserve(1000);
  const size_t capacity = index.capacity();
  EXPECT_GE(capacity / 4 * 3, 1000u);
  for (int i = 0; i < 1000; ++i) {
    const std::string p = "/r/" + std::to_string(i);
    const uint64_t h = PathIndex::hash(p);
    index.prefetch(h);
    ASSERT_TRUE(index.emplace(p, h, Znode()).second);
    ASSERT_EQ(index.find(p, h), index.find(p));
  }
  EXPECT_EQ(index.capacity(), capacity) << "no growth after reserve";
}

TEST(PathIndex, MoveTakesTheEntriesAndLeavesAnEmptyIndex) {
  PathIndex a;
  ZnodeEntry* e = a.emplace("/x", node_with_version(3)).first;
  PathIndex b(std::move(a));
  EXPECT_EQ(b.find("/x"), e);
  EXPECT_EQ(a.size(), 0u);          // NOLINT: the moved-from index is empty and usable
  EXPECT_EQ(a.find("/x"), nullptr);  // NOLINT
  a.emplace("/y", Znode());          // NOLINT
  EXPECT_EQ(a.size(), 1u);           // NOLINT
  b = std::move(a);
  EXPECT_EQ(b.find("/x"), nullptr) << "assignment destroyed b's own entries";
  EXPECT_NE(b.find("/y"), nullptr);
}

}  // namespace
}  // namespace zkraft::tree
