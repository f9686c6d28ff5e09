#!/usr/bin/python3
"""Three-server ensembles (server.N lines + dataDir/myid in the same zoo.cfg format): one leader;
writes through any member are visible on every member; kill -9 of the leader mid-stream loses
no acknowledged write, a new leader takes over and sessions survive; a minority cannot write.

    ZK_TARGET=zookeeper /usr/bin/python3 tests/integration/test_ensemble.py
    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_ensemble.py
"""

import logging
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import NoNodeError  # noqa: E402
from kazoo.retry import KazooRetry  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

WAIT = 30.0


def connect(hosts, **kw):
    c = KazooClient(hosts=hosts, timeout=kw.pop("timeout", 10.0), **kw)
    c.start(timeout=WAIT)
    return c


def stop(*clients):
    for c in clients:
        try:
            c.stop()
            c.close()
        except Exception:
            pass


class EnsembleSuite(unittest.TestCase):
    def test_one_leader_and_writes_visible_everywhere(self):
        with Ensemble(3, name="vis") as ens:
            modes = sorted(ens.mode(m) for m in ens.members)
            self.assertEqual(modes, ["follower", "follower", "leader"])
            per_member = [connect(m.hosts) for m in ens.members]
            try:
                for i, c in enumerate(per_member):
                    c.create("/from-%d" % i, b"v%d" % i)
                for c in per_member:
                    c.sync("/")
                    for i in range(3):
                        self.assertEqual(c.get("/from-%d" % i)[0], b"v%d" % i)
                # every member reports the same Stat for the same node
                stats = [c.exists("/from-0") for c in per_member]
                self.assertEqual(len(set(stats)), 1, stats)
                seq = [per_member[i % 3].create("/s-", sequence=True) for i in range(6)]
                self.assertEqual(seq, ["/s-%010d" % (i + 3) for i in range(6)])
            finally:
                stop(*per_member)

    def test_leader_kill9_loses_no_acknowledged_write(self):
        with Ensemble(3, name="kill") as ens:
            old = ens.leader()
            self.assertIsNotNone(old, "no leader")
            setup = connect(ens.hosts)
            setup.create("/w")
            # a session with an ephemeral, connected to a follower: it must survive the failover
            follower = next(m for m in ens.members if m is not old)
            owner = connect(follower.hosts, timeout=20.0)
            owner.create("/w-owner", ephemeral=True)
            acked, lock, stop_flag = [], threading.Lock(), threading.Event()
            errors = []

            def writer(idx):
                c = KazooClient(hosts=ens.hosts, timeout=20.0, connection_retry=KazooRetry(max_tries=-1, max_delay=0.5))
                c.start(timeout=WAIT)
                retry = KazooRetry(max_tries=-1, deadline=WAIT, max_delay=0.5)
                n = 0
                try:
                    while not stop_flag.is_set():
                        path = "/w/t%d-%05d" % (idx, n)
                        try:
                            # a retried create may find its own earlier attempt: both count as written
                            retry(lambda: c.create(path, b"%d" % n) if not c.exists(path) else path)
                        except Exception as e:
                            errors.append("%s: %r" % (path, e))
                            return
                        with lock:
                            acked.append((path, b"%d" % n))
                        n += 1
                finally:
                    stop(c)

            threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(3)]
            for t in threads:
                t.start()
            harness.wait_until(lambda: len(acked) >= 150, WAIT)
            old.kill9()
            before_kill = len(acked)
            # a new leader among the two others; writes continue through it
            self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, WAIT), "no new leader")
            self.assertTrue(harness.wait_until(lambda: len(acked) >= before_kill + 150, WAIT),
                            "writes did not resume after the leader died (%d acked, errors %r)"
                            % (len(acked), errors[:3]))
            old.start(timeout=60)  # rejoins as a follower and catches up
            stop_flag.set()
            for t in threads:
                t.join(WAIT)
            self.assertEqual(errors, [])
            checks = [connect(m.hosts) for m in ens.members]
            try:
                for c in checks:
                    c.sync("/w")
                    missing = []
                    for path, data in acked:
                        try:
                            if c.get(path)[0] != data:
                                missing.append(path)
                        except NoNodeError:
                            missing.append(path)
                    self.assertEqual(missing[:10], [], "%d acknowledged writes missing on a member" % len(missing))
                    self.assertIsNotNone(c.exists("/w-owner"), "ephemeral of a live session lost in the failover")
                self.assertEqual(owner.exists("/w-owner").ephemeralOwner, owner.client_id[0])
            finally:
                stop(owner, setup, *checks)

    def test_watch_fires_for_write_on_another_member_and_session_moves(self):
        with Ensemble(3, name="move") as ens:
            a, b, c = ens.members
            watcher = connect(a.hosts)
            writer = connect(b.hosts)
            try:
                writer.create("/watched", b"0")
                events = []
                got = threading.Event()
                watcher.sync("/watched")
                watcher.get("/watched", watch=lambda ev: (events.append((ev.type, ev.path)), got.set()))
                writer.set("/watched", b"1")
                self.assertTrue(got.wait(WAIT), "no event on member 1 for a write through member 2")
                self.assertEqual(events, [("CHANGED", "/watched")])
            finally:
                stop(watcher, writer)
            # a session whose server dies moves to another member and keeps its ephemeral
            mover = KazooClient(hosts=c.hosts + "," + a.hosts, randomize_hosts=False, timeout=10.0)
            mover.start(timeout=WAIT)
            try:
                sid = mover.client_id[0]
                mover.create("/mover", b"m", ephemeral=True)
                c.kill9()
                self.assertTrue(harness.wait_until(lambda: mover.connected and
                                                   mover._connection._socket is not None and
                                                   mover._connection._socket.getpeername()[1] == a.port, WAIT),
                                "client did not move to the other member")
                self.assertEqual(mover.client_id[0], sid)
                self.assertEqual(mover.get("/mover")[0], b"m")
                st = mover.exists("/mover")
                self.assertEqual(st.ephemeralOwner, sid)
            finally:
                stop(mover)

    def test_minority_cannot_write(self):
        with Ensemble(3, name="minority") as ens:
            survivor = ens.members[0]
            for m in ens.members[1:]:
                m.kill9()
            c = KazooClient(hosts=survivor.hosts, timeout=10.0)
            try:
                try:
                    c.start(timeout=5)
                    started = True
                except Exception:
                    started = False  # a server without a quorum need not accept sessions at all
                if started:
                    with self.assertRaises(Exception):
                        c.create_async("/lonely").get(timeout=5)
            finally:
                stop(c)
            ens.members[1].start(timeout=60)  # quorum again: 2 of 3
            self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, WAIT))
            c = connect(survivor.hosts + "," + ens.members[1].hosts)
            try:
                c.create("/quorum-back", b"ok")
                self.assertEqual(c.get("/quorum-back")[0], b"ok")
                self.assertIsNone(c.exists("/lonely"))
            finally:
                stop(c)


if __name__ == "__main__":
    harness.run_suite()
