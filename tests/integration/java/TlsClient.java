import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper Java client over TLS (ClientCnxnSocketNetty, zookeeper.client.secure and the
 * zookeeper.ssl.* properties, set by the caller): with its client certificate it is the x509
 * identity `subject`, which ACLs name. Run by tests/integration/test_tls.py:
 *   java -Dzookeeper.clientCnxnSocket=... TlsClient HOST:SECUREPORT SUBJECT
 * Prints "N passed, M failed"; exits 1 when a check failed.
 */
public class TlsClient {
    static int passed = 0, failed = 0;

    static void check(boolean ok, String what) {
        if (ok) {
            passed++;
        } else {
            failed++;
            System.out.println("FAILED: " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        String subject = args[1];
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(hosts, 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
        });
        try {
            check(connected.await(20, TimeUnit.SECONDS), "connected over TLS");
            String base = "/java-tls-" + System.nanoTime();
            List<ACL> mine = new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", subject))));
            zk.create(base, "x".getBytes(), mine, CreateMode.PERSISTENT);
            check("x".equals(new String(zk.getData(base, false, new Stat()))), "read a node only " + subject + " may read");
            List<ACL> acl = zk.getACL(base, new Stat());
            check(acl.size() == 1 && acl.get(0).getId().getScheme().equals("x509")
                  && acl.get(0).getId().getId().equals(subject), "stored ACL " + acl);
            // "auth" expands to the authenticated ids: the certificate's subject.
            zk.create(base + "-auth", new byte[0], ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
            List<ACL> auth = zk.getACL(base + "-auth", new Stat());
            check(auth.stream().anyMatch(a -> a.getId().getScheme().equals("x509") && a.getId().getId().equals(subject)),
                  "auth ACL expanded to x509:" + subject + ": " + auth);
            // A node for another subject is closed to us.
            zk.create(base + "-other", new byte[0],
                      new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", "CN=someone-else")))), CreateMode.PERSISTENT);
            try {
                zk.getData(base + "-other", false, new Stat());
                check(false, "read a node of CN=someone-else");
            } catch (KeeperException.NoAuthException e) {
                check(true, "");
            }
            System.out.println("subject " + subject + " ok");
        } catch (Exception e) {
            failed++;
            System.out.println("FAILED: " + e);
            e.printStackTrace(System.out);
        } finally {
            zk.close();
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
