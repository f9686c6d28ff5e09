#!/usr/bin/python3
"""Kazoo (python3-kazoo 2.8) against one server: Lock, Election, Counter, Semaphore and TreeCache
recipes, session resume with id+password, digest ACLs, four-letter words, Stat fields.

    ZK_TARGET=zookeeper /usr/bin/python3 tests/integration/test_kazoo_recipes.py
    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_kazoo_recipes.py
"""

import logging
import os
import queue
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from kazoo_case import WAIT, KazooCase  # noqa: E402
import zkwire  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import BadVersionError, InvalidACLError, NoAuthError  # noqa: E402
from kazoo.security import ACL, CREATOR_ALL_ACL, Id, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, make_digest_acl  # noqa: E402
from kazoo.protocol.states import KazooState  # noqa: E402
from kazoo.recipe.election import Election  # noqa: E402
from kazoo.recipe.lock import Lock  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


class KazooRecipeSuite(KazooCase):
    server_name = "kazoo_recipes"

    # -- recipes ----------------------------------------------------------------------------------

    def test_lock_mutual_exclusion(self):
        lock_path = self.root + "/lock"
        counter = self.zk.create(self.root + "/counter", b"0")
        state = {"holders": 0, "max_holders": 0, "entries": 0}
        mu = threading.Lock()
        errors = []
        n_clients, rounds = 4, 5

        def worker(i):
            try:
                c = self.client()
                lock = Lock(c, lock_path, identifier="worker-%d" % i)
                for _ in range(rounds):
                    with lock:
                        with mu:
                            state["holders"] += 1
                            state["max_holders"] = max(state["max_holders"], state["holders"])
                            state["entries"] += 1
                        # unguarded read-modify-write on a znode: only safe under the lock
                        v = int(c.get(counter)[0])
                        time.sleep(0.005)
                        c.set(counter, str(v + 1).encode())
                        with mu:
                            state["holders"] -= 1
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertFalse(any(t.is_alive() for t in threads), "lock workers hung")
        self.assertEqual(errors, [])
        self.assertEqual(state["max_holders"], 1)
        self.assertEqual(state["entries"], n_clients * rounds)
        self.assertEqual(int(self.zk.get(counter)[0]), n_clients * rounds)
        self.assertEqual(self.zk.get_children(lock_path), [])

    def test_election(self):
        path = self.root + "/election"
        leaders = queue.Queue()
        release = {i: threading.Event() for i in range(3)}
        state = {"active": 0, "max_active": 0}
        stepped_down = set()
        mu = threading.Lock()
        clients = [self.client() for _ in range(3)]
        elections = [Election(clients[i], path, identifier="p%d" % i) for i in range(3)]

        def lead(i):
            with mu:
                state["active"] += 1
                state["max_active"] = max(state["max_active"], state["active"])
            leaders.put(i)
            release[i].wait(WAIT * 4)
            with mu:
                if i not in stepped_down:
                    state["active"] -= 1

        def run(i):
            try:
                elections[i].run(lead, i)
            except Exception:
                pass  # the first leader's client is stopped under it; its run() then raises

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(3)]
        for t in threads:
            t.start()
        order = []
        first = leaders.get(timeout=WAIT)
        order.append(first)
        self.assertTrue(harness.wait_until(lambda: len(elections[0].contenders()) == 3, WAIT))
        self.assertEqual(sorted(elections[0].contenders()), ["p0", "p1", "p2"])
        self.assertEqual(elections[0].contenders()[0], "p%d" % first)
        self.assertTrue(leaders.empty())
        # first leader steps down by closing its session; another takes over. It stops counting
        # as active before the close: its leader function may still be running when the next one
        # starts (leadership is the session's znode, not the function)
        with mu:
            stepped_down.add(first)
            state["active"] -= 1
        clients[first].stop()
        release[first].set()
        second = leaders.get(timeout=WAIT)
        self.assertNotEqual(second, first)
        order.append(second)
        release[second].set()  # returning from the leader function also hands over leadership
        third = leaders.get(timeout=WAIT)
        self.assertNotIn(third, order)
        release[third].set()
        for t in threads:
            t.join(timeout=WAIT)
        self.assertEqual(state["max_active"], 1)

    def test_counter_and_semaphore_recipes(self):
        # Counter: compare-and-set on the node version; concurrent increments must not be lost
        path = self.root + "/counter"
        errors = []

        def bump(c):
            try:
                counter = c.Counter(path)
                for _ in range(10):
                    counter += 1
            except Exception as e:
                errors.append(repr(e))

        clients = [self.client() for _ in range(4)]
        threads = [threading.Thread(target=bump, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(self.zk.Counter(path).value, 40)
        # Semaphore with 2 leases shared by 4 clients: never more than 2 holders
        state = {"in": 0, "max": 0}
        mu = threading.Lock()

        def hold(c):
            try:
                sem = c.Semaphore(self.root + "/sem", max_leases=2)
                for _ in range(3):
                    with sem:
                        with mu:
                            state["in"] += 1
                            state["max"] = max(state["max"], state["in"])
                        time.sleep(0.01)
                        with mu:
                            state["in"] -= 1
            except Exception as e:
                errors.append(repr(e))

        threads = [threading.Thread(target=hold, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        self.assertLessEqual(state["max"], 2)
        self.assertGreaterEqual(state["max"], 1)

    def test_tree_cache(self):
        from kazoo.recipe.cache import TreeCache, TreeEvent
        base = self.zk.create(self.root + "/tc", b"r")
        seen = queue.Queue()
        cache = TreeCache(self.zk, base)
        cache.listen(lambda ev: seen.put((ev.event_type, ev.event_data.path if ev.event_data else None)))
        cache.start()
        try:
            deadline = time.monotonic() + WAIT
            while True:
                ev = seen.get(timeout=max(0.1, deadline - time.monotonic()))
                if ev[0] == TreeEvent.INITIALIZED:
                    break
            self.zk.create(base + "/a", b"1")
            self.assertEqual(seen.get(timeout=WAIT), (TreeEvent.NODE_ADDED, base + "/a"))
            self.zk.set(base + "/a", b"2")
            self.assertEqual(seen.get(timeout=WAIT), (TreeEvent.NODE_UPDATED, base + "/a"))
            self.zk.delete(base + "/a")
            self.assertEqual(seen.get(timeout=WAIT), (TreeEvent.NODE_REMOVED, base + "/a"))
            self.assertEqual(cache.get_data(base).data, b"r")
        finally:
            cache.close()

    # -- session resume ---------------------------------------------------------------------------

    def test_resume_session_with_id_and_password(self):
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=20000)
        err, p = raw.create(self.root + "/mine", b"m", flags=zkwire.EPHEMERAL)
        self.assertEqual(err, 0)
        raw.abandon()  # connection gone, session alive
        resumed = self.client(client_id=(raw.session_id, raw.passwd))
        self.assertEqual(resumed.client_id[0], raw.session_id)
        self.assertEqual(self.zk.exists(p).ephemeralOwner, raw.session_id)
        # it is the same session: closing it removes the ephemeral
        resumed.stop()
        self.assertIsNone(self.zk.exists(p))

    def test_resume_with_wrong_password_is_expired(self):
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=20000)
        err, p = raw.create(self.root + "/kept", flags=zkwire.EPHEMERAL)
        self.assertEqual(err, 0)
        bad = bytes((b ^ 0xFF) for b in raw.passwd)
        probe = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=20000,
                                  session_id=raw.session_id, passwd=bad)
        self.assertEqual((probe.timeout_ms, probe.session_id), (0, 0))
        probe.abandon()
        raw.abandon()  # ZooKeeper closes the session's current connection even when the password is bad
        self.assertIsNotNone(self.zk.exists(p))  # a failed resume does not end the session
        good = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=20000,
                                 session_id=raw.session_id, passwd=raw.passwd)
        self.assertEqual(good.session_id, raw.session_id)
        self.assertEqual(good.ping(), (-2, 0))
        good.close_session()
        self.assertIsNone(self.zk.exists(p))

    def test_kazoo_gets_new_session_on_bad_password(self):
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=20000)
        states = []
        c = KazooClient(hosts=self.server.hosts, timeout=10.0,
                        client_id=(raw.session_id, bytes((b ^ 0xFF) for b in raw.passwd)))
        self.clients.append(c)
        c.add_listener(states.append)
        try:
            c.start(timeout=WAIT)
        except Exception:
            pass
        # the server refuses the resume (Expired); kazoo then starts a fresh session
        self.assertTrue(harness.wait_until(lambda: c.connected, WAIT))
        self.assertNotEqual(c.client_id[0], raw.session_id)
        self.assertIn(KazooState.CONNECTED, states)
        raw.close_session()

    # -- ACLs and auth ----------------------------------------------------------------------------

    def test_digest_acl(self):
        owner = self.client(auth_data=[("digest", "alice:secret")])
        acl = [make_digest_acl("alice", "secret", all=True)]
        p = owner.create(self.root + "/private", b"top", acl=acl)
        self.assertEqual(owner.get(p)[0], b"top")
        with self.assertRaises(NoAuthError):
            self.zk.get(p)
        with self.assertRaises(NoAuthError):
            self.zk.set(p, b"x")
        with self.assertRaises(NoAuthError):
            self.zk.create(p + "/kid")
        # exists on a node without READ: ZooKeeper <= 3.8.3 answers (3.8.0, the reference here);
        # 3.8.4+/3.9.2+ (zkraft's compat level, 3.9.4) answer NoAuth. Either is ZooKeeper behaviour.
        try:
            self.assertIsNotNone(self.zk.exists(p))
        except NoAuthError:
            pass
        acls, st = owner.get_acls(p)
        self.assertEqual(len(acls), 1)
        self.assertEqual((acls[0].perms, acls[0].id.scheme), (31, "digest"))
        self.assertEqual(acls[0].id.id, acl[0].id.id)
        self.assertEqual(st.aversion, 0)
        later = self.client()
        later.add_auth("digest", "alice:secret")
        self.assertEqual(later.get(p)[0], b"top")
        # CREATOR_ALL_ACL resolves to the creator's authenticated ids
        c = owner.create(self.root + "/creator", acl=CREATOR_ALL_ACL)
        self.assertEqual([(a.perms, a.id.scheme, a.id.id) for a in owner.get_acls(c)[0]],
                         [(31, "digest", acl[0].id.id)])
        with self.assertRaises(InvalidACLError):
            self.zk.create(self.root + "/noauth-creator", acl=CREATOR_ALL_ACL)  # no authenticated id
        # open it up for reading; aversion moves, a stale aversion fails
        st2 = owner.set_acls(p, acl + list(READ_ACL_UNSAFE), version=0)
        self.assertEqual(st2.aversion, 1)
        self.assertEqual(self.zk.get(p)[0], b"top")
        with self.assertRaises(NoAuthError):
            self.zk.set(p, b"x")
        with self.assertRaises(BadVersionError):
            owner.set_acls(p, OPEN_ACL_UNSAFE, version=0)
        with self.assertRaises(InvalidACLError):
            owner.create(self.root + "/bad-acl", acl=[ACL(31, Id("nosuchscheme", "x"))])

    # -- four-letter words ----------------------------------------------------------------------

    def test_four_letter_words(self):
        self.assertEqual(self.zk.command(b"ruok"), "imok")
        srvr = self.zk.command(b"srvr")
        self.assertTrue(srvr.startswith("Zookeeper version: "), srvr)
        for key in ("Latency min/avg/max:", "Received:", "Sent:", "Connections:", "Outstanding:",
                    "Zxid: 0x", "Mode: ", "Node count:"):
            self.assertIn(key, srvr)
        self.assertTrue(self.server.four_letter("stat").startswith("Zookeeper version: "))
        # as test rigs send them: Solr half-closes after "stat", `echo ruok | nc` adds a newline
        import socket
        for payload, half_close, want in ((b"stat", True, "Zookeeper version: "), (b"ruok\n", False, "imok")):
            with socket.create_connection((self.server.host, self.server.port), timeout=10) as s:
                s.sendall(payload)
                if half_close:
                    s.shutdown(socket.SHUT_WR)
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            self.assertTrue(data.decode().startswith(want), (payload, data[:80]))
        self.assertEqual(self.server.four_letter("isro"), "rw")
        version = self.zk.server_version()  # kazoo parses zookeeper.version from envi
        self.assertGreaterEqual(version[:2], (3, 5), version)
        conf = self.server.four_letter("conf")
        self.assertIn("clientPort=%d" % self.server.port, conf)
        mntr = dict(line.split("\t", 1) for line in self.server.four_letter("mntr").splitlines() if "\t" in line)
        for key in ("zk_version", "zk_server_state", "zk_znode_count", "zk_watch_count",
                    "zk_ephemerals_count", "zk_num_alive_connections", "zk_outstanding_requests"):
            self.assertIn(key, mntr)
        self.assertGreater(int(mntr["zk_znode_count"]), 3)
        # srvr's Zxid is the last committed zxid: at least that of a write we just made
        st = self.zk.create(self.root + "/4lw", include_data=True)[1]
        zxid = int(self.server.four_letter("srvr").split("Zxid: ")[1].split()[0], 16)
        self.assertGreaterEqual(zxid, st.czxid)

    # -- Stat fields ------------------------------------------------------------------------------

    def test_stat_fields(self):
        p = self.root + "/st"
        st0 = self.zk.create(p, b"abc", include_data=True)[1]
        self.assertEqual((st0.version, st0.cversion, st0.aversion, st0.numChildren, st0.dataLength,
                          st0.ephemeralOwner), (0, 0, 0, 0, 3, 0))
        self.assertEqual(st0.czxid, st0.mzxid)
        self.assertEqual(st0.czxid, st0.pzxid)
        self.assertEqual(st0.ctime, st0.mtime)
        self.assertGreater(st0.ctime, 1_500_000_000_000)  # milliseconds since the epoch
        st1 = self.zk.set(p, b"")
        self.assertEqual((st1.version, st1.dataLength), (1, 0))
        self.assertGreater(st1.mzxid, st0.mzxid)
        self.assertEqual(st1.czxid, st0.czxid)
        self.assertEqual(st1.pzxid, st0.pzxid)  # data changes do not move pzxid
        self.assertGreaterEqual(st1.mtime, st0.mtime)
        kid = self.zk.create(p + "/k", include_data=True)[1]
        st2 = self.zk.exists(p)
        self.assertEqual((st2.cversion, st2.numChildren, st2.version), (1, 1, 1))
        self.assertEqual(st2.pzxid, kid.czxid)
        self.assertEqual(st2.mzxid, st1.mzxid)  # child changes do not move mzxid
        self.zk.delete(p + "/k")
        st3 = self.zk.exists(p)
        self.assertEqual((st3.cversion, st3.numChildren), (2, 0))
        self.assertGreater(st3.pzxid, kid.czxid)
        root = self.zk.exists("/")
        self.assertEqual(root.ephemeralOwner, 0)
        self.assertIn("zookeeper", self.zk.get_children("/"))


if __name__ == "__main__":
    harness.run_suite()
