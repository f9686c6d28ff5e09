#!/usr/bin/python3
"""Kazoo (python3-kazoo 2.8) against one server: CRUD, sequential and ephemeral nodes, expiry,
watches, transactions. test_kazoo_recipes.py has the recipes, sessions, ACLs and Stat fields.

    ZK_TARGET=zookeeper /usr/bin/python3 tests/integration/test_kazoo.py
    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_kazoo.py
"""

import logging
import os
import queue
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from kazoo_case import WAIT, KazooCase  # noqa: E402
import zkwire  # noqa: E402

from kazoo.exceptions import (BadVersionError, NoNodeError, NodeExistsError,  # noqa: E402
                              NotEmptyError, NoChildrenForEphemeralsError, RolledBackError,
                              RuntimeInconsistency)
from kazoo.protocol.states import EventType  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


class KazooSuite(KazooCase):
    # -- CRUD -------------------------------------------------------------------------------------

    def test_crud(self):
        p = self.root + "/a"
        self.assertEqual(self.zk.create(p, b"hello"), p)
        data, st = self.zk.get(p)
        self.assertEqual(data, b"hello")
        self.assertEqual(st.version, 0)
        self.assertEqual(st.dataLength, 5)
        with self.assertRaises(NodeExistsError):
            self.zk.create(p, b"again")
        st2 = self.zk.set(p, b"world!")
        self.assertEqual(st2.version, 1)
        self.assertEqual(st2.dataLength, 6)
        self.assertEqual(self.zk.get(p)[0], b"world!")
        with self.assertRaises(BadVersionError):
            self.zk.set(p, b"x", version=0)
        self.assertEqual(self.zk.set(p, b"v2", version=1).version, 2)
        self.assertIsNotNone(self.zk.exists(p))
        self.assertIsNone(self.zk.exists(p + "/missing"))
        self.zk.create(p + "/c1")
        self.zk.create(p + "/c2", b"2")
        self.assertEqual(sorted(self.zk.get_children(p)), ["c1", "c2"])
        with self.assertRaises(NotEmptyError):
            self.zk.delete(p)
        with self.assertRaises(BadVersionError):
            self.zk.delete(p + "/c2", version=5)
        self.zk.delete(p + "/c2", version=0)
        self.zk.delete(p + "/c1")
        self.zk.delete(p)
        self.assertIsNone(self.zk.exists(p))
        with self.assertRaises(NoNodeError):
            self.zk.get(p)
        with self.assertRaises(NoNodeError):
            self.zk.set(p, b"x")
        with self.assertRaises(NoNodeError):
            self.zk.delete(p)
        with self.assertRaises(NoNodeError):
            self.zk.create(self.root + "/no/parent")
        self.zk.create(self.root + "/deep/er/path", b"d", makepath=True)
        self.assertEqual(self.zk.get(self.root + "/deep/er/path")[0], b"d")

    def test_large_and_binary_data(self):
        blob = bytes(range(256)) * 4000  # 1,024,000 bytes: below the default 1 MiB jute.maxbuffer
        p = self.zk.create(self.root + "/big", blob)
        data, st = self.zk.get(p)
        self.assertEqual(data, blob)
        self.assertEqual(st.dataLength, len(blob))

    # -- sequential and ephemeral ---------------------------------------------------------------

    def test_sequential_nodes(self):
        parent = self.root
        first = self.zk.create(parent + "/s-", b"", sequence=True)
        self.assertEqual(first, parent + "/s-0000000000")
        self.zk.create(parent + "/plain")
        second = self.zk.create(parent + "/s-", sequence=True)
        self.assertEqual(second, parent + "/s-0000000002")  # the counter counts every child create
        self.zk.delete(second)
        third = self.zk.create(parent + "/other-", sequence=True)
        self.assertEqual(third, parent + "/other-0000000003")  # deletes do not roll it back
        fourth = self.zk.create(parent + "/e-", ephemeral=True, sequence=True)
        self.assertEqual(fourth, parent + "/e-0000000004")
        self.assertEqual(self.zk.exists(parent).cversion, 6)  # 5 creates + 1 delete

    def test_ephemeral_owner_and_close(self):
        owner = self.client()
        p = owner.create(self.root + "/eph", b"e", ephemeral=True)
        st = self.zk.exists(p)
        self.assertEqual(st.ephemeralOwner, owner.client_id[0])
        self.assertEqual(self.zk.exists(self.root).ephemeralOwner, 0)
        with self.assertRaises(NoChildrenForEphemeralsError):
            owner.create(p + "/child")
        owner.stop()  # closeSession: its ephemerals go in the same transaction
        self.assertIsNone(self.zk.exists(p))

    def test_ephemeral_vanishes_after_session_expiry(self):
        # A raw-protocol session creates an ephemeral and then goes silent: no pings, socket open.
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=1000)
        try:
            self.assertGreater(raw.session_id, 0)
            self.assertEqual(raw.timeout_ms, 1000)
            err, p = raw.create(self.root + "/silent", b"x", flags=zkwire.EPHEMERAL)
            self.assertEqual(err, 0)
            events = queue.Queue()
            self.assertEqual(self.zk.exists(p, watch=events.put).ephemeralOwner, raw.session_id)
            self.zk.get_children(self.root, watch=events.put)
            raw.go_silent()
            # expiry deletes the ephemeral like a delete: watchers of the node and of its parent hear it
            got = sorted((ev.type, ev.path) for ev in (events.get(timeout=WAIT), events.get(timeout=WAIT)))
            self.assertEqual(got, sorted([(EventType.DELETED, p), (EventType.CHILD, self.root)]))
            gone = harness.wait_until(lambda: self.zk.exists(p) is None, WAIT)
            self.assertTrue(gone, "ephemeral of a silent session still present after %ss" % WAIT)
            # the server also closes the expired session's connection
            raw.sock.settimeout(WAIT)
            try:
                closed = raw.sock.recv(1) == b""
            except ConnectionError:
                closed = True
            except OSError:
                closed = False
            self.assertTrue(closed, "connection of the expired session left open")
        finally:
            raw.abandon()
        # The session is really dead: resuming it is refused (timeOut 0, sessionId 0).
        again = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=1000,
                                  session_id=raw.session_id, passwd=raw.passwd)
        try:
            self.assertEqual((again.timeout_ms, again.session_id), (0, 0))
        finally:
            again.abandon()

    def test_ephemeral_vanishes_after_abandoned_connection_expires(self):
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=1000)
        err, p = raw.create(self.root + "/dropped", flags=zkwire.EPHEMERAL)
        self.assertEqual(err, 0)
        raw.abandon()  # socket closed without closeSession: the session must still time out
        self.assertTrue(harness.wait_until(lambda: self.zk.exists(p) is None, WAIT))

    # -- watches ----------------------------------------------------------------------------------

    def test_one_shot_watches(self):
        p = self.root + "/w"
        events = queue.Queue()
        self.assertIsNone(self.zk.exists(p, watch=events.put))  # exists on a missing node watches too
        self.zk.create(p, b"1")
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.CREATED, p))
        self.zk.get(p, watch=events.put)
        self.zk.set(p, b"2")
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.CHANGED, p))
        self.zk.set(p, b"3")  # one-shot: no second event
        self.zk.get_children(p, watch=events.put)
        self.zk.create(p + "/kid")
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.CHILD, p))
        self.zk.get(p, watch=events.put)
        self.zk.get_children(p, watch=events.put)
        self.zk.delete(p + "/kid")
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.CHILD, p))
        self.zk.delete(p)
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.DELETED, p))
        self.zk.sync(self.root)
        self.assertTrue(events.empty(), "unexpected extra event %r" % (None if events.empty() else events.queue[0],))

    def test_watch_from_other_client(self):
        watcher = self.client()
        p = self.zk.create(self.root + "/x", b"0")
        events = queue.Queue()
        watcher.get(p, watch=events.put)
        self.zk.set(p, b"1")
        ev = events.get(timeout=WAIT)
        self.assertEqual((ev.type, ev.path), (EventType.CHANGED, p))
        # the event arrives before any response that shows the change
        self.assertEqual(watcher.get(p)[0], b"1")

    def test_watch_fanout_to_many_sessions(self):
        p = self.zk.create(self.root + "/fan", b"0")
        watchers = [self.client() for _ in range(20)]
        events = queue.Queue()
        for i, w in enumerate(watchers):
            w.create(self.root + "/fan-eph-%02d" % i, ephemeral=True)
            w.get(p, watch=lambda ev, i=i: events.put((i, ev.type, ev.path)))
        self.zk.set(p, b"1")
        got = sorted(events.get(timeout=WAIT) for _ in range(20))
        self.assertEqual(got, [(i, EventType.CHANGED, p) for i in range(20)])
        self.assertEqual(len([c for c in self.zk.get_children(self.root) if c.startswith("fan-eph-")]), 20)
        for w in watchers:
            w.stop()
        self.assertEqual([c for c in self.zk.get_children(self.root) if c.startswith("fan-eph-")], [])

    def test_event_reaches_watcher_before_it_can_read_the_change(self):
        # raw session A watches; kazoo writes; A's next read must see the event first
        p = self.zk.create(self.root + "/order", b"0")
        a = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=30000)
        try:
            for i in range(1, 21):
                frames, reply = a.call(zkwire.OP_GETDATA, zkwire.ustring(p) + zkwire.boolean(True))
                self.assertEqual(reply[2], 0)
                self.zk.set(p, str(i).encode())  # returns once the write is applied
                frames, reply = a.call(zkwire.OP_GETDATA, zkwire.ustring(p) + zkwire.boolean(False))
                d = zkwire.Decoder(reply[3])
                self.assertEqual(d.buffer(), str(i).encode())
                self.assertEqual(len(frames), 1, "round %d: the NodeDataChanged event did not arrive "
                                 "before the read that shows the new data" % i)
                ev = zkwire.Decoder(frames[0][3])
                self.assertEqual((ev.int32(), ev.int32(), ev.ustring()), (3, 3, p))
        finally:
            a.close_session()

    def test_pipelined_reads_see_own_earlier_writes(self):
        # FIFO per session + read-your-writes: a read pipelined right behind a write of the same
        # session sees that write, replies come back in order, reply zxids never go backwards;
        # another session writes elsewhere at the same time
        p = self.zk.create(self.root + "/ryw", b"-1")
        other = self.zk.create(self.root + "/noise", b"")
        stop = threading.Event()

        def noise():
            c = self.client()
            i = 0
            while not stop.is_set():
                c.set(other, b"%d" % i)
                i += 1

        t = threading.Thread(target=noise, daemon=True)
        t.start()
        a = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=30000)
        try:
            n = 1000
            out = b""
            for i in range(n):
                out += zkwire.frame(zkwire.int32(2 * i + 1) + zkwire.int32(zkwire.OP_SETDATA) + zkwire.ustring(p) +
                                    zkwire.buffer(b"%d" % i) + zkwire.int32(-1))
                out += zkwire.frame(zkwire.int32(2 * i + 2) + zkwire.int32(zkwire.OP_GETDATA) + zkwire.ustring(p) +
                                    zkwire.boolean(False))
            sender = threading.Thread(target=a.sock.sendall, args=(out,), daemon=True)
            sender.start()
            last_zxid = 0
            for i in range(n):
                xid, zxid, err, body = a.read_reply()
                self.assertEqual((xid, err), (2 * i + 1, 0))
                set_version = zkwire.Decoder(body).stat()["version"]
                self.assertGreaterEqual(zxid, last_zxid)
                last_zxid = zxid
                xid, zxid, err, body = a.read_reply()
                self.assertEqual((xid, err), (2 * i + 2, 0))
                self.assertGreaterEqual(zxid, last_zxid)
                last_zxid = zxid
                d = zkwire.Decoder(body)
                self.assertEqual(d.buffer(), b"%d" % i, "read %d did not see the write before it" % i)
                self.assertEqual(d.stat()["version"], set_version)
            sender.join(10)
        finally:
            stop.set()
            t.join(10)
            a.xid = 2 * n
            a.close_session()

    def test_many_async_requests_in_flight(self):
        # 2,000 creates and then 2,000 reads issued without waiting; all complete, in order
        base = self.zk.create(self.root + "/async")
        creates = [self.zk.create_async(base + "/n-", b"%d" % i, sequence=True) for i in range(2000)]
        paths = [f.get(timeout=60) for f in creates]
        self.assertEqual(paths, [base + "/n-%010d" % i for i in range(2000)])
        reads = [self.zk.get_async(p) for p in paths]
        self.assertEqual([f.get(timeout=60)[0] for f in reads], [b"%d" % i for i in range(2000)])
        self.assertEqual(self.zk.exists(base).numChildren, 2000)

    def test_session_close_removes_many_ephemerals(self):
        parent = self.zk.create(self.root + "/many")
        a = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=30000)
        n = 500
        for i in range(n):  # pipelined
            a.send(i + 1, zkwire.OP_CREATE, zkwire.create_body(parent + "/e-", b"", flags=zkwire.EPHEMERAL | zkwire.SEQUENCE))
        for i in range(n):
            xid, _, err, _ = a.read_reply()
            self.assertEqual((xid, err), (i + 1, 0))
        a.xid = n
        self.assertEqual(self.zk.exists(parent).numChildren, n)
        events = queue.Queue()
        self.zk.get_children(parent, watch=events.put)
        a.close_session()
        self.assertEqual(events.get(timeout=WAIT).type, EventType.CHILD)
        st = self.zk.exists(parent)
        self.assertEqual((st.numChildren, st.cversion), (0, 2 * n))
        self.assertEqual(self.zk.get_children(parent), [])

    def test_data_watch(self):
        p = self.root + "/dw"
        seen = queue.Queue()

        @self.zk.DataWatch(p)
        def watch(data, stat):
            seen.put((data, stat.version if stat else None))

        self.assertEqual(seen.get(timeout=WAIT), (None, None))
        self.zk.create(p, b"a")
        self.assertEqual(seen.get(timeout=WAIT), (b"a", 0))
        self.zk.set(p, b"b")
        self.assertEqual(seen.get(timeout=WAIT), (b"b", 1))
        self.zk.delete(p)
        self.assertEqual(seen.get(timeout=WAIT), (None, None))

    def test_children_watch(self):
        p = self.zk.create(self.root + "/cw")
        seen = queue.Queue()

        @self.zk.ChildrenWatch(p)
        def watch(children):
            seen.put(sorted(children))

        self.assertEqual(seen.get(timeout=WAIT), [])
        self.zk.create(p + "/one")
        self.assertEqual(seen.get(timeout=WAIT), ["one"])
        self.zk.create(p + "/two")
        self.assertEqual(seen.get(timeout=WAIT), ["one", "two"])
        self.zk.delete(p + "/one")
        self.assertEqual(seen.get(timeout=WAIT), ["two"])

    # -- transactions ---------------------------------------------------------------------------

    def test_transaction_success(self):
        base = self.zk.create(self.root + "/t", b"0")
        self.zk.create(base + "/gone")
        tx = self.zk.transaction()
        tx.create(base + "/new", b"n")
        tx.set_data(base, b"1", version=0)
        tx.check(base + "/new", 0)
        tx.delete(base + "/gone")
        tx.create(base + "/seq-", sequence=True)
        res = tx.commit()
        self.assertEqual(res[0], base + "/new")
        self.assertEqual(res[1].version, 1)
        self.assertIs(res[2], True)
        self.assertIs(res[3], True)
        self.assertEqual(res[4], base + "/seq-0000000002")
        new_st = self.zk.exists(base + "/new")
        base_st = self.zk.exists(base)
        self.assertEqual(new_st.czxid, base_st.mzxid)  # one transaction, one zxid
        self.assertEqual(base_st.pzxid, new_st.czxid)
        self.assertIsNone(self.zk.exists(base + "/gone"))

    def test_transaction_failure_is_atomic_with_per_op_codes(self):
        base = self.zk.create(self.root + "/tf", b"0")
        before = self.zk.exists(base)
        tx = self.zk.transaction()
        tx.create(base + "/would-be", b"x")
        tx.set_data(base, b"1", version=7)  # wrong version: fails
        tx.delete(base + "/missing")
        res = tx.commit()
        self.assertEqual(len(res), 3)
        self.assertIsInstance(res[0], RolledBackError)      # 0 = would have succeeded
        self.assertIsInstance(res[1], BadVersionError)      # -103
        self.assertIsInstance(res[2], RuntimeInconsistency)  # -2 for ops after the failure
        self.assertIsNone(self.zk.exists(base + "/would-be"))
        after = self.zk.exists(base)
        self.assertEqual((after.version, after.mzxid, after.cversion), (before.version, before.mzxid, before.cversion))
        self.assertEqual(self.zk.get(base)[0], b"0")


if __name__ == "__main__":
    harness.run_suite()
