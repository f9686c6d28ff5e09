import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;

/**
 * The ZooKeeper Java client (3.8) with SASL DIGEST-MD5 from a JAAS file (its Client section, given
 * with -Djava.security.auth.login.config by test_sasl.py). Prints one line per observation (the
 * state events until SASL settles, then what the session may do), so the Python side can compare
 * the transcript with Apache ZooKeeper's.
 * Usage: java -Djava.security.auth.login.config=client.jaas SaslClientTest host:port path
 */
public final class SaslClientTest {
    public static void main(String[] args) throws Exception {
        String hosts = args[0];
        String path = args[1];
        BlockingQueue<Watcher.Event.KeeperState> states = new LinkedBlockingQueue<>();
        ZooKeeper zk = new ZooKeeper(hosts, 10000, (WatchedEvent e) -> {
            if (e.getType() == Watcher.Event.EventType.None) {
                states.add(e.getState());
            }
        });
        try {
            // SyncConnected, then SaslAuthenticated or AuthFailed.
            for (;;) {
                Watcher.Event.KeeperState s = states.poll(20, TimeUnit.SECONDS);
                System.out.println("state " + s);
                if (s == null || s == Watcher.Event.KeeperState.SaslAuthenticated
                        || s == Watcher.Event.KeeperState.AuthFailed) {
                    break;
                }
            }
            try {
                StringBuilder who = new StringBuilder();
                for (ClientInfo ci : zk.whoAmI()) {
                    who.append(ci.getAuthScheme()).append(':').append(ci.getUser()).append(' ');
                }
                System.out.println("whoAmI " + who.toString().trim());
                List<ACL> acl = Collections.singletonList(
                    new ACL(ZooDefs.Perms.ALL, new Id("sasl", "bob")));
                zk.create(path, "j".getBytes(StandardCharsets.UTF_8), acl, CreateMode.PERSISTENT);
                System.out.println("create " + path + " ok");
                System.out.println("getData " + new String(zk.getData(path, false, null),
                                                           StandardCharsets.UTF_8));
                zk.setData(path, "k".getBytes(StandardCharsets.UTF_8), -1);
                System.out.println("setData ok");
                System.out.println("getACL " + zk.getACL(path, null));
            } catch (KeeperException e) {
                System.out.println("error " + e.code());
            } catch (RuntimeException e) {
                // After AuthFailed the client is closed: whoAmI gives null, calls fail.
                System.out.println("error " + e.getClass().getSimpleName());
            }
        } finally {
            zk.close();
        }
    }
}
