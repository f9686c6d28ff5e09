import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The Java client keeps its session and its watches across a server restart (the harness kills
 * the server with SIGKILL and restarts it on the same dataDir and port while this program waits):
 * on reconnect the client resumes the session with id+password and re-registers its watches with
 * SetWatches (relative to its last zxid); changes made after the restart fire them.
 * Protocol with the driver (test_java.py): prints "READY", waits for a line "RESTARTED" on stdin.
 * Usage: java ReconnectTest host:port. Exits 0 only if every check passed.
 */
public final class ReconnectTest {
    private static int passed = 0;
    private static final List<String> failures = new ArrayList<>();

    private static void check(boolean ok, String what) {
        if (ok) {
            passed++;
        } else {
            failures.add(what);
            System.out.println("FAILED CHECK: " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        BlockingQueue<Watcher.Event.KeeperState> states = new LinkedBlockingQueue<>();
        CountDownLatch first = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(hosts, 30000, e -> {
            if (e.getType() == Watcher.Event.EventType.None) {
                states.add(e.getState());
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    first.countDown();
                }
            }
        });
        try {
            if (!first.await(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not connect");
            }
            states.clear();
            long session = zk.getSessionId();
            zk.create("/reconnect", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            zk.create("/reconnect/data", "0".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                      CreateMode.PERSISTENT);
            zk.create("/reconnect/eph", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
            // path watchers also receive connection-state events (type None): keep only node events
            Watcher w = e -> {
                if (e.getType() != Watcher.Event.EventType.None) {
                    events.add(e);
                }
            };
            zk.getData("/reconnect/data", w, null);
            zk.getChildren("/reconnect", w);
            check(zk.exists("/reconnect/absent", w) == null, "absent node is absent");

            System.out.println("READY");
            System.out.flush();
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            check("RESTARTED".equals(line), "driver said RESTARTED, got " + line);

            // Disconnected, then SyncConnected again: the same session, not Expired
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            boolean sawDisconnect = false;
            boolean reconnected = false;
            while (System.nanoTime() < deadline && !reconnected) {
                Watcher.Event.KeeperState s = states.poll(1, TimeUnit.SECONDS);
                if (s == Watcher.Event.KeeperState.Disconnected) {
                    sawDisconnect = true;
                } else if (s == Watcher.Event.KeeperState.SyncConnected && sawDisconnect) {
                    reconnected = true;
                } else if (s == Watcher.Event.KeeperState.Expired) {
                    break;
                }
            }
            check(sawDisconnect, "saw Disconnected");
            check(reconnected, "reconnected with the same session (no Expired): states left " + states);
            check(zk.getSessionId() == session, "same session id");
            check(zk.exists("/reconnect/eph", false) != null, "own ephemeral survived the restart");
            check(events.isEmpty(), "no watch fired by the restart itself: " + events);

            // another client changes everything we watch
            CountDownLatch c2 = new CountDownLatch(1);
            ZooKeeper other = new ZooKeeper(hosts, 30000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    c2.countDown();
                }
            });
            try {
                check(c2.await(20, TimeUnit.SECONDS), "second client connected");
                other.setData("/reconnect/data", "1".getBytes(StandardCharsets.UTF_8), -1);
                other.create("/reconnect/absent", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } finally {
                other.close();
            }
            Set<String> got = new HashSet<>();
            for (int i = 0; i < 3; i++) {
                WatchedEvent e = events.poll(15, TimeUnit.SECONDS);
                if (e == null) {
                    break;
                }
                got.add(e.getType() + " " + e.getPath());
            }
            Set<String> want = new HashSet<>();
            want.add("NodeDataChanged /reconnect/data");
            want.add("NodeChildrenChanged /reconnect");
            want.add("NodeCreated /reconnect/absent");
            check(got.equals(want), "watches re-registered after reconnect fired: got " + got + " want " + want);
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            failures.add("exception: " + t);
        } finally {
            zk.close();
        }
        System.out.println(passed + " passed, " + failures.size() + " failed");
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
