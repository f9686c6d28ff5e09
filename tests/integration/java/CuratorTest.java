import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator 5.4 recipes against one server: InterProcessMutex shared by 3 clients (mutual exclusion
 * checked with an in-process holder count and an unguarded read-modify-write znode counter),
 * LeaderLatch with 3 participants (exactly one leader; when it closes another takes over),
 * CuratorCache (a persistent recursive watch, addWatch) seeing creates, changes and deletes.
 * Usage: java CuratorTest host:port. Exits 0 only if every check passed.
 */
public final class CuratorTest {
    private static int passed = 0;
    private static final List<String> failures = new ArrayList<>();

    private static synchronized void check(boolean ok, String what) {
        if (ok) {
            passed++;
        } else {
            failures.add(what);
            System.out.println("FAILED CHECK: " + what);
        }
    }

    static CuratorFramework client(String hosts) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(hosts)
            .sessionTimeoutMs(15000)
            .connectionTimeoutMs(15000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("curator could not connect to " + hosts);
        }
        return c;
    }

    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        try {
            mutex(hosts);
            leaderLatch(hosts);
            cache(hosts);
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            failures.add("exception: " + t);
        }
        System.out.println(passed + " passed, " + failures.size() + " failed");
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    static void mutex(String hosts) throws Exception {
        final int clients = 3;
        final int rounds = 10;
        final String lockPath = "/curator/mutex";
        final String counterPath = "/curator/counter";
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            cs.add(client(hosts));
        }
        // creatingParentsIfNeeded exercises create2 and container parents
        cs.get(0).create().creatingParentContainersIfNeeded().forPath(counterPath, "0".getBytes(StandardCharsets.UTF_8));
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger maxHolders = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        List<Throwable> errors = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            final CuratorFramework c = cs.get(i);
            Thread t = new Thread(() -> {
                InterProcessMutex m = new InterProcessMutex(c, lockPath);
                try {
                    for (int r = 0; r < rounds; r++) {
                        if (!m.acquire(60, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("acquire timed out");
                        }
                        try {
                            int h = holders.incrementAndGet();
                            maxHolders.accumulateAndGet(h, Math::max);
                            entries.incrementAndGet();
                            int v = Integer.parseInt(new String(c.getData().forPath(counterPath), StandardCharsets.UTF_8));
                            Thread.sleep(2);
                            c.setData().forPath(counterPath, Integer.toString(v + 1).getBytes(StandardCharsets.UTF_8));
                            holders.decrementAndGet();
                        } finally {
                            m.release();
                        }
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(120000);
            check(!t.isAlive(), "mutex worker finished");
        }
        for (Throwable e : errors) {
            e.printStackTrace(System.out);
        }
        check(errors.isEmpty(), "no errors in mutex workers: " + errors);
        check(maxHolders.get() == 1, "at most one holder at a time, saw " + maxHolders.get());
        check(entries.get() == clients * rounds, "all rounds ran: " + entries.get());
        int counter = Integer.parseInt(new String(cs.get(0).getData().forPath(counterPath), StandardCharsets.UTF_8));
        check(counter == clients * rounds, "znode counter " + counter + " == " + clients * rounds);
        List<String> left = cs.get(0).getChildren().forPath(lockPath);
        check(left.isEmpty(), "no lock nodes left: " + left);
        for (CuratorFramework c : cs) {
            c.close();
        }
    }

    static void leaderLatch(String hosts) throws Exception {
        final String path = "/curator/latch";
        List<CuratorFramework> cs = new ArrayList<>();
        List<LeaderLatch> latches = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CuratorFramework c = client(hosts);
            cs.add(c);
            LeaderLatch l = new LeaderLatch(c, path, "p" + i);
            latches.add(l);
            l.start();
        }
        int leader = waitForSingleLeader(latches, -1);
        check(leader >= 0, "one leader elected");
        if (leader < 0) {
            return;
        }
        check(latches.get((leader + 1) % 3).getParticipants().size() == 3, "3 participants visible");
        check(latches.get((leader + 1) % 3).getLeader().getId().equals("p" + leader), "everyone sees the same leader");
        latches.get(leader).close();
        int next = waitForSingleLeader(latches, leader);
        check(next >= 0 && next != leader, "another participant took over: " + next);
        if (next >= 0) {
            cs.get(next).close(); // session closed: its latch node goes, the last one leads
            int last = 3 - leader - next;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!latches.get(last).hasLeadership() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            check(latches.get(last).hasLeadership(), "last participant leads after the session of the second closed");
        }
        for (int i = 0; i < 3; i++) {
            try {
                if (i != leader) {
                    latches.get(i).close();
                }
            } catch (Exception ignored) {
                // its client may be closed already
            }
            cs.get(i).close();
        }
    }

    static void cache(String hosts) throws Exception {
        final String root = "/curator/cache";
        CuratorFramework c = client(hosts);
        CuratorFramework writer = client(hosts);
        try {
            writer.create().creatingParentsIfNeeded().forPath(root + "/pre", "p".getBytes(StandardCharsets.UTF_8));
            BlockingQueue<String> events = new LinkedBlockingQueue<>();
            CountDownLatch initialized = new CountDownLatch(1);
            CuratorCache cache = CuratorCache.build(c, root);
            cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> events.add("create " + n.getPath() + " " + new String(n.getData(), StandardCharsets.UTF_8)))
                .forChanges((o, n) -> events.add("change " + n.getPath() + " " + new String(n.getData(), StandardCharsets.UTF_8)))
                .forDeletes(o -> events.add("delete " + o.getPath()))
                .forInitialized(initialized::countDown)
                .build());
            cache.start();
            check(initialized.await(20, TimeUnit.SECONDS), "cache initialized");
            List<String> initial = new ArrayList<>();
            events.drainTo(initial);
            check(initial.contains("create " + root + "/pre p"), "initial snapshot has /pre: " + initial);
            // one change at a time: the cache reads the data after the event, so a later write
            // made before that read would show up instead
            expectCacheEvent(events, "create " + root + "/a 1",
                             () -> writer.create().forPath(root + "/a", "1".getBytes(StandardCharsets.UTF_8)));
            expectCacheEvent(events, "create " + root + "/a/deep 2",
                             () -> writer.create().forPath(root + "/a/deep", "2".getBytes(StandardCharsets.UTF_8)));
            expectCacheEvent(events, "change " + root + "/a 3",
                             () -> writer.setData().forPath(root + "/a", "3".getBytes(StandardCharsets.UTF_8)));
            expectCacheEvent(events, "delete " + root + "/a/deep", () -> writer.delete().forPath(root + "/a/deep"));
            check(cache.get(root + "/a").isPresent() && !cache.get(root + "/a/deep").isPresent(), "cache content");
            cache.close();
        } finally {
            writer.close();
            c.close();
        }
    }

    interface Action { Object run() throws Exception; }

    static void expectCacheEvent(BlockingQueue<String> events, String want, Action action) throws Exception {
        action.run();
        String got = events.poll(15, TimeUnit.SECONDS);
        check(want.equals(got), "cache event: want <" + want + "> got <" + got + ">");
    }

    /** Waits until exactly one latch other than `excluded` has leadership, and no other has it. */
    static int waitForSingleLeader(List<LeaderLatch> latches, int excluded) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            int count = 0;
            int who = -1;
            for (int i = 0; i < latches.size(); i++) {
                if (i != excluded && latches.get(i).hasLeadership()) {
                    count++;
                    who = i;
                }
            }
            if (count > 1) {
                check(false, "more than one leader at once");
                return -1;
            }
            if (count == 1) {
                // stable for a moment: nobody else claims it
                Thread.sleep(200);
                int again = 0;
                for (int i = 0; i < latches.size(); i++) {
                    if (i != excluded && latches.get(i).hasLeadership()) {
                        again++;
                    }
                }
                check(again == 1, "exactly one leader (rechecked), saw " + again);
                return who;
            }
            Thread.sleep(20);
        }
        return -1;
    }
}
