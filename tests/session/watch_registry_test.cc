#include "session/watch_registry.h"

#include <gtest/gtest.h>

namespace zkraft::session {
namespace {

constexpr int32_t kNoWatcher = -121;
constexpr int32_t kBadArguments = -8;
constexpr int32_t kChildren = 1, kData = 2, kAny = 3, kPersistent = 4, kRecursive = 5;

using ET = EventType;

std::vector<Delivery> fire(WatchRegistry& r, ET type, const std::string& path) {
  std::vector<Delivery> out;
  r.trigger(WatchTrigger{type, path}, out);
  return out;
}

// The tree reports a create of P as NodeCreated(P) then NodeChildrenChanged(parent).
std::vector<Delivery> create(WatchRegistry& r, const std::string& path, const std::string& parent) {
  std::vector<Delivery> out;
  r.trigger({ET::kNodeCreated, path}, out);
  r.trigger({ET::kNodeChildrenChanged, parent}, out);
  return out;
}
std::vector<Delivery> remove_node(WatchRegistry& r, const std::string& path, const std::string& parent) {
  std::vector<Delivery> out;
  r.trigger({ET::kNodeDeleted, path}, out);
  r.trigger({ET::kNodeChildrenChanged, parent}, out);
  return out;
}

using D = Delivery;

// --- §3.2 rows --------------------------------------------------------------------------------

TEST(WatchRegistryRules, CreateFiresExistWatchOnNodeAndChildWatchOnParent) {
  WatchRegistry r;
  r.add_data_watch("/a/b", 1);   // exists on a missing node
  r.add_child_watch("/a", 2);
  r.add_child_watch("/a/b", 3);  // child watch on the new node itself: not fired by its creation
  EXPECT_EQ(create(r, "/a/b", "/a"),
            (std::vector<D>{{1, ET::kNodeCreated, "/a/b"}, {2, ET::kNodeChildrenChanged, "/a"}}));
  // One-shot: both gone, the unrelated one stays.
  EXPECT_EQ(r.modes("/a/b", 1), 0);
  EXPECT_EQ(r.modes("/a", 2), 0);
  EXPECT_EQ(r.modes("/a/b", 3), WatchRegistry::kChildStandard);
  EXPECT_TRUE(create(r, "/a/b", "/a").empty());
}

TEST(WatchRegistryRules, CreateTopLevelFiresChildWatchOnRoot) {
  WatchRegistry r;
  r.add_child_watch("/", 1);
  EXPECT_EQ(create(r, "/x", "/"), (std::vector<D>{{1, ET::kNodeChildrenChanged, "/"}}));
}

TEST(WatchRegistryRules, DeleteFiresDataAndChildWatchesOnNodeAndChildWatchOnParent) {
  WatchRegistry r;
  r.add_data_watch("/a/b", 1);
  r.add_child_watch("/a/b", 2);
  r.add_child_watch("/a", 3);
  r.add_data_watch("/a", 4);  // data watch on the parent: a delete of a child is not its business
  EXPECT_EQ(remove_node(r, "/a/b", "/a"),
            (std::vector<D>{{1, ET::kNodeDeleted, "/a/b"},
                            {2, ET::kNodeDeleted, "/a/b"},
                            {3, ET::kNodeChildrenChanged, "/a"}}));
  EXPECT_EQ(r.modes("/a/b", 1), 0);
  EXPECT_EQ(r.modes("/a/b", 2), 0);
  EXPECT_EQ(r.modes("/a", 3), 0);
  EXPECT_EQ(r.modes("/a", 4), WatchRegistry::kDataStandard);
}

TEST(WatchRegistryRules, DeleteNotifiesAWatcherWithDataAndChildWatchOnce) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_child_watch("/n", 1);
  EXPECT_EQ(fire(r, ET::kNodeDeleted, "/n"), (std::vector<D>{{1, ET::kNodeDeleted, "/n"}}));
  EXPECT_EQ(r.modes("/n", 1), 0);
  EXPECT_TRUE(r.empty());
}

TEST(WatchRegistryRules, SetDataFiresDataWatchesOnly) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_child_watch("/n", 2);
  r.add_data_watch("/n/c", 3);
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/n"), (std::vector<D>{{1, ET::kNodeDataChanged, "/n"}}));
  EXPECT_EQ(r.modes("/n", 1), 0);
  EXPECT_EQ(r.modes("/n", 2), WatchRegistry::kChildStandard);
  EXPECT_TRUE(fire(r, ET::kNodeDataChanged, "/n").empty());
}

TEST(WatchRegistryRules, ChildrenChangedFiresChildWatchesOnly) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_child_watch("/n", 2);
  EXPECT_EQ(fire(r, ET::kNodeChildrenChanged, "/n"),
            (std::vector<D>{{2, ET::kNodeChildrenChanged, "/n"}}));
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataStandard);
}

TEST(WatchRegistryRules, ManyWatchersEachOnceInWatcherOrder) {
  WatchRegistry r;
  for (WatcherId w : {9, 3, 5, 1}) r.add_data_watch("/n", w);
  auto out = fire(r, ET::kNodeDataChanged, "/n");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].watcher, 1u);
  EXPECT_EQ(out[1].watcher, 3u);
  EXPECT_EQ(out[2].watcher, 5u);
  EXPECT_EQ(out[3].watcher, 9u);
  EXPECT_TRUE(r.empty());
}

// --- §3.3 persistent and recursive -------------------------------------------------------------

TEST(WatchRegistryPersistent, FiresForNodeAndItsChildListAndStays) {
  WatchRegistry r;
  r.add_persistent_watch("/p", 1, AddWatchMode::kPersistent);
  EXPECT_EQ(r.modes("/p", 1), WatchRegistry::kDataPersistent | WatchRegistry::kChildPersistent);
  EXPECT_EQ(create(r, "/p", "/"), (std::vector<D>{{1, ET::kNodeCreated, "/p"}}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/p"), (std::vector<D>{{1, ET::kNodeDataChanged, "/p"}}));
  // A child's creation: NodeChildrenChanged on /p, but not NodeCreated for /p/c.
  EXPECT_EQ(create(r, "/p/c", "/p"), (std::vector<D>{{1, ET::kNodeChildrenChanged, "/p"}}));
  EXPECT_TRUE(fire(r, ET::kNodeDataChanged, "/p/c").empty());
  EXPECT_EQ(remove_node(r, "/p/c", "/p"), (std::vector<D>{{1, ET::kNodeChildrenChanged, "/p"}}));
  // Its own deletion: one NodeDeleted (data and child tables both match), and it survives.
  EXPECT_EQ(remove_node(r, "/p", "/"), (std::vector<D>{{1, ET::kNodeDeleted, "/p"}}));
  EXPECT_EQ(r.modes("/p", 1), WatchRegistry::kDataPersistent | WatchRegistry::kChildPersistent);
  EXPECT_EQ(create(r, "/p", "/"), (std::vector<D>{{1, ET::kNodeCreated, "/p"}}));
}

TEST(WatchRegistryRecursive, FiresForNodeAndDescendantsWithChangedPathNeverChildren) {
  WatchRegistry r;
  r.add_persistent_watch("/p", 1, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(r.modes("/p", 1), WatchRegistry::kDataRecursive);
  // The LIVE sequence: create/set/delete of P/new -> 1 P/new, 3 P/new, 2 P/new.
  EXPECT_EQ(create(r, "/p/new", "/p"), (std::vector<D>{{1, ET::kNodeCreated, "/p/new"}}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/p/new"),
            (std::vector<D>{{1, ET::kNodeDataChanged, "/p/new"}}));
  EXPECT_EQ(remove_node(r, "/p/new", "/p"), (std::vector<D>{{1, ET::kNodeDeleted, "/p/new"}}));
  // Deep descendants and P itself.
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/p/a/b/c"),
            (std::vector<D>{{1, ET::kNodeDataChanged, "/p/a/b/c"}}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/p"), (std::vector<D>{{1, ET::kNodeDataChanged, "/p"}}));
  EXPECT_EQ(fire(r, ET::kNodeDeleted, "/p"), (std::vector<D>{{1, ET::kNodeDeleted, "/p"}}));
  // Never NodeChildrenChanged, on P or below.
  EXPECT_TRUE(fire(r, ET::kNodeChildrenChanged, "/p").empty());
  EXPECT_TRUE(fire(r, ET::kNodeChildrenChanged, "/p/a").empty());
  // Not for siblings or name prefixes.
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/pq").empty());
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/q/p").empty());
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/").empty());
  EXPECT_EQ(r.modes("/p", 1), WatchRegistry::kDataRecursive);
}

TEST(WatchRegistryRecursive, OnRootSeesEverything) {
  WatchRegistry r;
  r.add_persistent_watch("/", 4, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(fire(r, ET::kNodeCreated, "/x"), (std::vector<D>{{4, ET::kNodeCreated, "/x"}}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/x/y/z"),
            (std::vector<D>{{4, ET::kNodeDataChanged, "/x/y/z"}}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/"), (std::vector<D>{{4, ET::kNodeDataChanged, "/"}}));
}

TEST(WatchRegistryRecursive, NestedRecursiveWatchesOfOneWatcherGiveOneEvent) {
  WatchRegistry r;
  r.add_persistent_watch("/a", 1, AddWatchMode::kPersistentRecursive);
  r.add_persistent_watch("/a/b", 1, AddWatchMode::kPersistentRecursive);
  r.add_persistent_watch("/a/b", 2, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(fire(r, ET::kNodeCreated, "/a/b/c"),
            (std::vector<D>{{1, ET::kNodeCreated, "/a/b/c"}, {2, ET::kNodeCreated, "/a/b/c"}}));
}

TEST(WatchRegistryCoexistence, OneEventWhenSeveralKindsMatch) {
  // LIVE: getData + persistent + recursive on the same path -> a single NodeDataChanged.
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistent);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistentRecursive);
  r.add_persistent_watch("/", 1, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/n"), (std::vector<D>{{1, ET::kNodeDataChanged, "/n"}}));
  // The one-shot part went, the persistent parts stayed.
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataPersistent | WatchRegistry::kChildPersistent |
                                  WatchRegistry::kDataRecursive);
}

TEST(WatchRegistryCoexistence, StandardChildPersistentAndRecursiveOnOnePathStillGetChildEvent) {
  // 3.8 lost this NodeChildrenChanged (ZOOKEEPER-4466); 3.9 delivers it.
  WatchRegistry r;
  r.add_child_watch("/n", 1);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistent);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(create(r, "/n/c", "/n"),
            (std::vector<D>{{1, ET::kNodeCreated, "/n/c"}, {1, ET::kNodeChildrenChanged, "/n"}}));
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataPersistent | WatchRegistry::kChildPersistent |
                                  WatchRegistry::kDataRecursive);
}

TEST(WatchRegistryCoexistence, StandardWatchAddedBesidePersistentIsStillOneShot) {
  WatchRegistry r;
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistentRecursive);
  r.add_data_watch("/n", 1);
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/n").size(), 1u);
  EXPECT_EQ(r.check("/n", kData, 1), kNoWatcher);
  EXPECT_EQ(r.check("/n", kRecursive, 1), 0);
}

// --- removeWatches / checkWatches -------------------------------------------------------------

TEST(WatchRegistryRemove, ByTypeFollowsDataTreeRemoveWatch) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_child_watch("/n", 1);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistent);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistentRecursive);

  EXPECT_EQ(r.remove("/n", kData, 1), 0);
  EXPECT_EQ(r.remove("/n", kData, 1), kNoWatcher);
  EXPECT_EQ(r.remove("/n", kChildren, 1), 0);
  EXPECT_EQ(r.remove("/n", kChildren, 1), kNoWatcher);
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataPersistent | WatchRegistry::kChildPersistent |
                                  WatchRegistry::kDataRecursive);
  EXPECT_EQ(r.remove("/n", kPersistent, 1), 0);
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataRecursive);
  EXPECT_EQ(r.remove("/n", kPersistent, 1), kNoWatcher);
  EXPECT_EQ(r.remove("/n", kRecursive, 1), 0);
  EXPECT_EQ(r.remove("/n", kRecursive, 1), kNoWatcher);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.path_count(1), 0u);
  // With the recursive watch gone, descendants no longer notify.
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/n/c").empty());
}

TEST(WatchRegistryRemove, AnyRemovesEverythingOnThePath) {
  WatchRegistry r;
  r.add_child_watch("/n", 1);
  r.add_persistent_watch("/n", 1, AddWatchMode::kPersistentRecursive);
  r.add_data_watch("/m", 1);
  EXPECT_EQ(r.remove("/n", kAny, 1), 0);
  EXPECT_EQ(r.modes("/n", 1), 0);
  EXPECT_EQ(r.remove("/n", kAny, 1), kNoWatcher);
  EXPECT_EQ(r.modes("/m", 1), WatchRegistry::kDataStandard);
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/n/x").empty());
}

TEST(WatchRegistryRemove, OtherWatchersAndPathsUntouched) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  r.add_data_watch("/n", 2);
  EXPECT_EQ(r.remove("/n", kData, 3), kNoWatcher);
  EXPECT_EQ(r.remove("/x", kData, 1), kNoWatcher);
  EXPECT_EQ(r.remove("/n", kData, 1), 0);
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/n"), (std::vector<D>{{2, ET::kNodeDataChanged, "/n"}}));
}

TEST(WatchRegistryRemove, UnknownTypeIsBadArguments) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  EXPECT_EQ(r.remove("/n", 0, 1), kBadArguments);
  EXPECT_EQ(r.remove("/n", 6, 1), kBadArguments);
  EXPECT_EQ(r.check("/n", -1, 1), kBadArguments);
  EXPECT_EQ(r.modes("/n", 1), WatchRegistry::kDataStandard);
}

TEST(WatchRegistryCheck, ByTypeFollowsDataTreeContainsWatcher) {
  WatchRegistry r;
  EXPECT_EQ(r.check("/n", kAny, 1), kNoWatcher);
  r.add_data_watch("/n", 1);
  EXPECT_EQ(r.check("/n", kData, 1), 0);
  EXPECT_EQ(r.check("/n", kChildren, 1), kNoWatcher);
  EXPECT_EQ(r.check("/n", kAny, 1), 0);
  EXPECT_EQ(r.check("/n", kPersistent, 1), kNoWatcher);
  EXPECT_EQ(r.check("/n", kData, 2), kNoWatcher);
  r.add_persistent_watch("/p", 1, AddWatchMode::kPersistent);
  EXPECT_EQ(r.check("/p", kPersistent, 1), 0);
  EXPECT_EQ(r.check("/p", kData, 1), kNoWatcher);      // persistent is not a standard watch
  EXPECT_EQ(r.check("/p", kChildren, 1), kNoWatcher);
  EXPECT_EQ(r.check("/p", kRecursive, 1), kNoWatcher);
  EXPECT_EQ(r.check("/p", kAny, 1), 0);
  r.add_persistent_watch("/r", 1, AddWatchMode::kPersistentRecursive);
  EXPECT_EQ(r.check("/r", kRecursive, 1), 0);
  EXPECT_EQ(r.check("/r", kPersistent, 1), kNoWatcher);
}

TEST(WatchRegistry, RemoveWatcherDropsAllItsWatches) {
  WatchRegistry r;
  r.add_data_watch("/a", 1);
  r.add_child_watch("/b", 1);
  r.add_persistent_watch("/", 1, AddWatchMode::kPersistentRecursive);
  r.add_data_watch("/a", 2);
  r.remove_watcher(1);
  r.remove_watcher(1);  // idempotent
  EXPECT_EQ(r.path_count(1), 0u);
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/a"), (std::vector<D>{{2, ET::kNodeDataChanged, "/a"}}));
  EXPECT_TRUE(fire(r, ET::kNodeChildrenChanged, "/b").empty());
  EXPECT_TRUE(fire(r, ET::kNodeCreated, "/z").empty());
  EXPECT_TRUE(r.empty());
}

TEST(WatchRegistry, AddingTheSameWatchTwiceIsOneWatch) {
  WatchRegistry r;
  r.add_data_watch("/a", 1);
  r.add_data_watch("/a", 1);
  EXPECT_EQ(r.summary(), (WatchSummary{1, 1, 1}));
  EXPECT_EQ(fire(r, ET::kNodeDataChanged, "/a").size(), 1u);
  EXPECT_TRUE(fire(r, ET::kNodeDataChanged, "/a").empty());
}

// --- limits -----------------------------------------------------------------------------------

TEST(WatchRegistry, PerWatcherPathLimit) {
  WatchRegistry r(2);
  EXPECT_TRUE(r.add_data_watch("/a", 1));
  EXPECT_TRUE(r.add_child_watch("/b", 1));
  EXPECT_FALSE(r.add_data_watch("/c", 1));  // a third path: refused
  EXPECT_EQ(r.modes("/c", 1), 0);
  EXPECT_TRUE(r.add_child_watch("/a", 1));  // more modes on a watched path: fine
  EXPECT_TRUE(r.add_persistent_watch("/b", 1, AddWatchMode::kPersistentRecursive));
  EXPECT_TRUE(r.add_data_watch("/c", 2));   // other watchers have their own budget
  EXPECT_EQ(r.path_count(1), 2u);
  fire(r, ET::kNodeDataChanged, "/a");      // one-shot data watch fired, child watch remains
  EXPECT_FALSE(r.add_data_watch("/c", 1));
  fire(r, ET::kNodeChildrenChanged, "/a");  // /a entirely gone now
  EXPECT_TRUE(r.add_data_watch("/c", 1));
}

TEST(WatchRegistry, UnlimitedByDefault) {
  WatchRegistry r;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(r.add_data_watch("/n" + std::to_string(i), 1));
  EXPECT_EQ(r.path_count(1), 1000u);
}

// --- wchs / wchc / wchp / mntr figures --------------------------------------------------------

TEST(WatchRegistryReport, SummaryCountsTheDataTableLikeZooKeeper) {
  WatchRegistry r;
  r.add_data_watch("/a", 1);
  r.add_data_watch("/b", 1);
  r.add_data_watch("/a", 2);
  r.add_child_watch("/c", 3);  // child-only watches are not in wchs (DataTree.dumpWatchesSummary)
  r.add_persistent_watch("/p", 3, AddWatchMode::kPersistent);
  EXPECT_EQ(r.summary(), (WatchSummary{3, 3, 4}));
  // zk_watch_count: data pairs (4) + child pairs (/c:3, /p:3) = 6
  EXPECT_EQ(r.watch_count(), 6u);
}

TEST(WatchRegistryReport, DumpsAreSortedAndDataTableOnly) {
  WatchRegistry r;
  r.add_data_watch("/z", 7);
  r.add_data_watch("/a", 7);
  r.add_data_watch("/a", 2);
  r.add_child_watch("/only-children", 2);
  r.add_persistent_watch("/r", 2, AddWatchMode::kPersistentRecursive);
  using ByW = std::vector<std::pair<WatcherId, std::vector<std::string>>>;
  using ByP = std::vector<std::pair<std::string, std::vector<WatcherId>>>;
  EXPECT_EQ(r.dump_by_watcher(), (ByW{{2, {"/a", "/r"}}, {7, {"/a", "/z"}}}));
  EXPECT_EQ(r.dump_by_path(), (ByP{{"/a", {2, 7}}, {"/r", {2}}, {"/z", {7}}}));
}

TEST(WatchRegistryReport, EmptyRegistry) {
  WatchRegistry r;
  EXPECT_EQ(r.summary(), (WatchSummary{0, 0, 0}));
  EXPECT_EQ(r.watch_count(), 0u);
  EXPECT_TRUE(r.dump_by_watcher().empty());
  EXPECT_TRUE(r.dump_by_path().empty());
}

}  // namespace
}  // namespace zkraft::session

namespace zkraft::session {
namespace {

TEST(WatchRegistry, DeliveryCarriesTheTriggerAcl) {
  WatchRegistry r;
  r.add_data_watch("/n", 1);
  auto acl = std::make_shared<const std::vector<jute::ACL>>(
      std::vector<jute::ACL>{jute::ACL{jute::perms::kRead, jute::Id{"world", "anyone"}}});
  WatchTrigger t{EventType::kNodeDataChanged, "/n", acl};
  std::vector<Delivery> out;
  r.trigger(t, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].acl, acl);
}

}  // namespace
}  // namespace zkraft::session
