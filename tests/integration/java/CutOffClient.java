// A ZooKeeper Java client that test_quorum_contact.py watches while it cuts the client's server off
// from the ensemble. Arguments: hosts, an ephemeral path to create, the session timeout in ms.
// Prints, with System.nanoTime() in ms (CLOCK_MONOTONIC, the clock Python's time.monotonic reads):
//   READY <session id hex>          once connected and the ephemeral exists
//   STATE <KeeperState> <ms>        every connection state change
//   READ_OK <ms>                    every successful exists() of the path (one every 100 ms)
// and exits when stdin closes.
import java.util.concurrent.CountDownLatch;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class CutOffClient {
  static long nowMs() {
    return System.nanoTime() / 1_000_000L;
  }

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    String hosts = args[0];
    String path = args[1];
    int timeout = Integer.parseInt(args[2]);
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(hosts, timeout, event -> {
      if (event.getType() == org.apache.zookeeper.Watcher.Event.EventType.None) {
        say("STATE " + event.getState() + " " + nowMs());
        if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
          connected.countDown();
        }
      }
    });
    connected.await();
    zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
    say("READY " + Long.toHexString(zk.getSessionId()));
    Thread reader = new Thread(() -> {
      while (true) {
        try {
          if (zk.exists(path, false) != null) say("READ_OK " + nowMs());
        } catch (Exception e) {
          // ConnectionLoss while cut off: keep trying, as an application would
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    reader.setDaemon(true);
    reader.start();
    while (System.in.read() >= 0) {
    }
    zk.close(1000);
  }
}
