import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Stat;

/**
 * The plain ZooKeeper Java client (3.8) against one server: CRUD (create with a Stat goes out as
 * create2), one-shot watches, multi (success and an atomic failure with per-op codes), and the
 * 3.6+ API (getEphemerals, getAllChildrenNumber, whoAmI, read-only multi, addWatch recursive,
 * removeAllWatches).
 * Usage: java ZkClientTest host:port. Exits 0 only if every check passed.
 */
public final class ZkClientTest {
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

    private static void checkEq(Object expected, Object got, String what) {
        check(expected == null ? got == null : expected.equals(got),
              what + ": expected <" + expected + "> got <" + got + ">");
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int code(Runnable r) {
        try {
            r.run();
            return 0;
        } catch (RuntimeException e) {
            if (e.getCause() instanceof KeeperException) {
                return ((KeeperException) e.getCause()).code().intValue();
            }
            throw e;
        }
    }

    interface ZkCall { void run() throws Exception; }

    private static Runnable wrap(ZkCall c) {
        return () -> {
            try {
                c.run();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    static ZooKeeper connect(String hosts) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(hosts, 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("could not connect to " + hosts);
        }
        return zk;
    }

    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        ZooKeeper zk = connect(hosts);
        try {
            crud(zk);
            watches(zk, hosts);
            multi(zk);
            newerApi(zk);
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            failures.add("exception: " + t);
        } finally {
            zk.close();
        }
        System.out.println(passed + " passed, " + failures.size() + " failed");
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    static void crud(ZooKeeper zk) throws Exception {
        String root = "/java-crud";
        Stat st = new Stat();
        String created = zk.create(root, b("r"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, st);
        checkEq(root, created, "create2 path");
        checkEq(0, st.getVersion(), "create2 stat version");
        checkEq(1, st.getDataLength(), "create2 stat dataLength");
        check(st.getCzxid() > 0 && st.getCzxid() == st.getMzxid() && st.getCzxid() == st.getPzxid(),
              "create2 stat zxids czxid==mzxid==pzxid>0: " + st);
        check(st.getCtime() > 1500000000000L && st.getCtime() == st.getMtime(), "create2 stat times " + st);

        Stat got = new Stat();
        checkEq("r", new String(zk.getData(root, false, got), StandardCharsets.UTF_8), "getData");
        checkEq(st, got, "getData stat equals create2 stat");

        Stat set = zk.setData(root, b("rr"), 0);
        checkEq(1, set.getVersion(), "setData version");
        check(set.getMzxid() > st.getMzxid(), "setData moves mzxid");
        checkEq(KeeperException.Code.BADVERSION.intValue(),
                code(wrap(() -> zk.setData(root, b("x"), 0))), "setData bad version");

        String seq = zk.create(root + "/s-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                               CreateMode.PERSISTENT_SEQUENTIAL);
        checkEq(root + "/s-0000000000", seq, "sequential name");
        String eph = zk.create(root + "/e", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        Stat es = zk.exists(eph, false);
        checkEq(zk.getSessionId(), es.getEphemeralOwner(), "ephemeralOwner is our session");
        checkEq(null, zk.getData(eph, false, null), "null data stays null");
        List<String> kids = zk.getChildren(root, false);
        Collections.sort(kids);
        checkEq(Arrays.asList("e", "s-0000000000"), kids, "getChildren");
        Stat ps = new Stat();
        zk.getChildren(root, false, ps);
        checkEq(2, ps.getNumChildren(), "getChildren2 numChildren");
        checkEq(2, ps.getCversion(), "getChildren2 cversion");

        checkEq(KeeperException.Code.NODEEXISTS.intValue(),
                code(wrap(() -> zk.create(root, null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT))),
                "create existing");
        checkEq(KeeperException.Code.NONODE.intValue(),
                code(wrap(() -> zk.getData(root + "/missing", false, null))), "getData missing");
        checkEq(KeeperException.Code.NOTEMPTY.intValue(), code(wrap(() -> zk.delete(root, -1))), "delete non-empty");
        checkEq(KeeperException.Code.NOCHILDRENFOREPHEMERALS.intValue(),
                code(wrap(() -> zk.create(eph + "/c", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT))),
                "child of ephemeral");
        zk.delete(seq, 0);
        zk.delete(eph, -1);
        zk.delete(root, 1);
        checkEq(null, zk.exists(root, false), "deleted");
    }

    static void watches(ZooKeeper zk, String hosts) throws Exception {
        String p = "/java-watch";
        BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
        Watcher w = events::add;
        checkEq(null, zk.exists(p, w), "exists on missing node");
        ZooKeeper other = connect(hosts);
        try {
            other.create(p, b("0"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            WatchedEvent e = events.poll(15, TimeUnit.SECONDS);
            check(e != null && e.getType() == Watcher.Event.EventType.NodeCreated && p.equals(e.getPath()),
                  "NodeCreated event, got " + e);
            zk.getData(p, w, null);
            other.setData(p, b("1"), -1);
            e = events.poll(15, TimeUnit.SECONDS);
            check(e != null && e.getType() == Watcher.Event.EventType.NodeDataChanged, "NodeDataChanged, got " + e);
            zk.getChildren(p, w);
            other.create(p + "/k", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            e = events.poll(15, TimeUnit.SECONDS);
            check(e != null && e.getType() == Watcher.Event.EventType.NodeChildrenChanged,
                  "NodeChildrenChanged, got " + e);
            zk.exists(p + "/k", w);
            other.close(); // its ephemeral goes: NodeDeleted
            e = events.poll(15, TimeUnit.SECONDS);
            check(e != null && e.getType() == Watcher.Event.EventType.NodeDeleted && (p + "/k").equals(e.getPath()),
                  "NodeDeleted on session close, got " + e);
            zk.sync(p, null, null);
            zk.exists(p, false);
            check(events.isEmpty(), "no extra events: " + events);
        } finally {
            other.close();
        }
        zk.delete(p, -1);
    }

    static void newerApi(ZooKeeper zk) throws Exception {
        String p = "/java-new";
        zk.create(p, b("n"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(p + "/a", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        zk.create(p + "/b", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create(p + "/b/c", b("c"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        checkEq(Arrays.asList(p + "/a"), zk.getEphemerals(p), "getEphemerals(prefix)");
        check(zk.getEphemerals().contains(p + "/a"), "getEphemerals() has our ephemeral");
        checkEq(3, zk.getAllChildrenNumber(p), "getAllChildrenNumber");
        boolean ip = false;
        for (ClientInfo ci : zk.whoAmI()) {
            ip |= "ip".equals(ci.getAuthScheme()) && "127.0.0.1".equals(ci.getUser());
        }
        check(ip, "whoAmI reports ip 127.0.0.1");

        List<OpResult> rs = zk.multi(Arrays.asList(Op.getData(p), Op.getChildren(p), Op.getData(p + "/missing")));
        checkEq(3, rs.size(), "read multi size");
        check(rs.get(0) instanceof OpResult.GetDataResult
              && "n".equals(new String(((OpResult.GetDataResult) rs.get(0)).getData(), StandardCharsets.UTF_8)),
              "read multi getData: " + rs.get(0));
        if (rs.get(1) instanceof OpResult.GetChildrenResult) {
            List<String> kids = new ArrayList<>(((OpResult.GetChildrenResult) rs.get(1)).getChildren());
            Collections.sort(kids);
            checkEq(Arrays.asList("a", "b"), kids, "read multi getChildren");
        } else {
            check(false, "read multi getChildren result type: " + rs.get(1));
        }
        check(rs.get(2) instanceof OpResult.ErrorResult
              && ((OpResult.ErrorResult) rs.get(2)).getErr() == KeeperException.Code.NONODE.intValue(),
              "read multi missing node is an ErrorResult(-101): " + rs.get(2));

        BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
        Watcher w = e -> {
            if (e.getType() != Watcher.Event.EventType.None) {
                events.add(e);
            }
        };
        zk.addWatch(p + "/b", w, AddWatchMode.PERSISTENT_RECURSIVE);
        zk.create(p + "/b/d", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.setData(p + "/b/c", b("c2"), -1);
        zk.delete(p + "/b/d", -1);
        String[] want = {"NodeCreated " + p + "/b/d", "NodeDataChanged " + p + "/b/c", "NodeDeleted " + p + "/b/d"};
        for (String wnt : want) {
            WatchedEvent e = events.poll(15, TimeUnit.SECONDS);
            checkEq(wnt, e == null ? null : e.getType() + " " + e.getPath(), "recursive watch event");
        }
        zk.removeAllWatches(p + "/b", Watcher.WatcherType.Any, false);
        zk.setData(p + "/b/c", b("c3"), -1);
        zk.sync(p, null, null);
        zk.exists(p, false);
        // the client tells the watcher it was removed (PersistentWatchRemoved, a client-side
        // event); after that, no node event may arrive
        WatchedEvent left = events.poll(500, TimeUnit.MILLISECONDS);
        while (left != null && left.getType().name().endsWith("WatchRemoved")) {
            left = events.poll(500, TimeUnit.MILLISECONDS);
        }
        check(left == null, "no node events after removeAllWatches, got " + left);
        checkEq(KeeperException.Code.NOWATCHER.intValue(),
                code(wrap(() -> zk.removeAllWatches(p + "/b", Watcher.WatcherType.Any, false))),
                "removeAllWatches with none left");
        zk.delete(p + "/b/c", -1);
        zk.delete(p + "/b", -1);
        zk.delete(p + "/a", -1);
        zk.delete(p, -1);
    }

    static void multi(ZooKeeper zk) throws Exception {
        String p = "/java-multi";
        List<OpResult> ok = zk.multi(Arrays.asList(
            Op.create(p, b("m"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
            Op.create(p + "/a", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
            Op.setData(p, b("mm"), 0),
            Op.check(p + "/a", 0)));
        checkEq(4, ok.size(), "multi ok size");
        check(ok.get(0) instanceof OpResult.CreateResult, "multi result 0 create: " + ok.get(0));
        checkEq(p, ((OpResult.CreateResult) ok.get(0)).getPath(), "multi create path");
        check(ok.get(2) instanceof OpResult.SetDataResult, "multi result 2 setData");
        checkEq(1, ((OpResult.SetDataResult) ok.get(2)).getStat().getVersion(), "multi setData version");
        check(ok.get(3) instanceof OpResult.CheckResult, "multi result 3 check");
        Stat a = zk.exists(p + "/a", false);
        Stat root = zk.exists(p, false);
        checkEq(a.getCzxid(), root.getMzxid(), "multi ops share one zxid");

        try {
            zk.multi(Arrays.asList(
                Op.create(p + "/b", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                Op.delete(p + "/missing", -1),
                Op.setData(p, b("x"), -1)));
            check(false, "failing multi must throw");
        } catch (KeeperException e) {
            checkEq(KeeperException.Code.NONODE, e.code(), "failing multi code");
            List<OpResult> rs = e.getResults();
            checkEq(3, rs == null ? -1 : rs.size(), "failing multi results size");
            if (rs != null && rs.size() == 3) {
                int[] codes = new int[3];
                for (int i = 0; i < 3; i++) {
                    check(rs.get(i) instanceof OpResult.ErrorResult, "result " + i + " is ErrorResult");
                    codes[i] = rs.get(i) instanceof OpResult.ErrorResult ? ((OpResult.ErrorResult) rs.get(i)).getErr() : 999;
                }
                checkEq("[0, -101, -2]", Arrays.toString(codes), "per-op codes");
            }
        }
        checkEq(null, zk.exists(p + "/b", false), "failed multi rolled back");
        checkEq("mm", new String(zk.getData(p, false, null), StandardCharsets.UTF_8), "failed multi left data");
        zk.multi(Arrays.asList(Op.delete(p + "/a", 0), Op.delete(p, 1)));
        checkEq(null, zk.exists(p, false), "multi delete");
    }
}
