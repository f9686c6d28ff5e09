// Drives the Apache ZooKeeper Java client through the ops that kazoo never sends (create2,
// createContainer, createTTL, addWatch, getEphemerals, getAllChildrenNumber, whoAmI, multiRead,
// checkWatches/removeWatches) so tools/capture/capture_golden.py can record real Java-client bytes.
// Usage: java -cp <zookeeper jars>:. GoldenJavaClient 127.0.0.1:<port>
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class GoldenJavaClient {
  interface Step { void run() throws Exception; }

  // Errors are part of what we record; report them and go on.
  static void attempt(String what, Step s) {
    try {
      s.run();
    } catch (KeeperException e) {
      System.out.println(what + ": " + e.code());
    } catch (Exception e) {
      System.out.println(what + ": " + e);
    }
  }

  public static void main(String[] args) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    CountDownLatch changed = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(args[0], 4000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected && e.getType() == Watcher.Event.EventType.None) {
        connected.countDown();
      }
      if (e.getType() == Watcher.Event.EventType.NodeDataChanged) changed.countDown();
    });
    if (!connected.await(20, TimeUnit.SECONDS)) throw new RuntimeException("no connection");
    Stat st = new Stat();
    byte[] d = "java-data".getBytes();
    zk.create("/gj", d, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, st);  // create2 (15)
    zk.create("/gj/cont", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);  // 19
    attempt("createTTL", () -> zk.create("/gj/ttl", d, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                                         CreateMode.PERSISTENT_WITH_TTL, st, 60000));  // 21
    zk.create("/gj/eph", d, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, st);
    zk.addWatch("/gj", AddWatchMode.PERSISTENT_RECURSIVE);  // 106
    zk.setData("/gj", "changed".getBytes(), -1);  // fires the persistent watch (xid -1)
    changed.await(10, TimeUnit.SECONDS);
    zk.getEphemerals("/gj");  // 103
    zk.getAllChildrenNumber("/gj");  // 104
    zk.whoAmI();  // 107
    attempt("multiRead", () -> zk.multi(Arrays.asList(
        Op.getData("/gj"), Op.getChildren("/gj"), Op.getData("/gj/missing"))));  // 22
    zk.multi(Arrays.asList(
        Op.create("/gj/m", d, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
        Op.setData("/gj/m", "m2".getBytes(), -1),
        Op.check("/gj/m", 1),
        Op.delete("/gj/m", -1)));  // 14, all succeed
    zk.getACL("/gj", st);  // 6
    zk.setACL("/gj", ZooDefs.Ids.OPEN_ACL_UNSAFE, -1);  // 7
    zk.exists("/gj/nope", true);  // 3 on a missing node: header-only -101 reply
    zk.getChildren("/gj", true, st);  // 12
    zk.getChildren("/gj", false);  // 8
    attempt("checkWatches", () -> zk.removeWatches("/gj", e -> {}, Watcher.WatcherType.Children, false));
    attempt("removeWatches", () -> zk.removeAllWatches("/gj", Watcher.WatcherType.Children, false));
    Thread.sleep(2500);  // idle long enough for the client to ping (every timeout/3)
    zk.delete("/gj/cont", -1);
    attempt("delete ttl", () -> zk.delete("/gj/ttl", -1));
    zk.close();  // closeSession (-11)
  }
}
