// Records what the Java client sends when its connection breaks: a ConnectRequest for the same
// session, then SetWatches (101) re-registering its watches, and SetWatches2 (105) once it also
// holds a persistent watch. tools/capture/capture_golden.py cuts the connection at the proxy each
// time this program prints "drop" (and answers with a newline on stdin once it has).
// Usage: java -cp <zookeeper jars>:. GoldenJavaReconnect 127.0.0.1:<port>
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class GoldenJavaReconnect {
  static final Semaphore connected = new Semaphore(0);

  static void dropAndWait(BufferedReader in) throws Exception {
    System.out.println("drop");
    System.out.flush();
    in.readLine();
    if (!connected.tryAcquire(30, TimeUnit.SECONDS)) throw new RuntimeException("no reconnect");
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    ZooKeeper zk = new ZooKeeper(args[0], 6000, e -> {
      if (e.getType() == Watcher.Event.EventType.None
          && e.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.release();
      }
    });
    if (!connected.tryAcquire(30, TimeUnit.SECONDS)) throw new RuntimeException("no connection");
    zk.create("/gr", "r".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    zk.create("/gr/kid", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
    zk.getData("/gr", true, null);        // data watch
    zk.exists("/gr/none", true);          // exist watch
    zk.getChildren("/gr", true);          // child watch
    dropAndWait(in);                      // reconnect: same session + SetWatches (xid -8)
    zk.addWatch("/gr/kid", AddWatchMode.PERSISTENT);
    zk.addWatch("/gr", AddWatchMode.PERSISTENT_RECURSIVE);
    dropAndWait(in);                      // reconnect: SetWatches2 with persistent watches
    zk.setData("/gr", "r2".getBytes(), -1);  // fires the data watch and the recursive one
    zk.delete("/gr/kid", -1);
    zk.delete("/gr", -1);
    zk.close();
  }
}
