#!/usr/bin/python3
"""Three-server ensembles (server.N lines + dataDir/myid in the same zoo.cfg format): one leader;
writes through any member are visible on every member; kill -9 of the leader mid-stream loses
no acknowledged write, a new leader takes over and sessions survive; a minority cannot write.

    ZK_TARGET=zookeeper /usr/bin/python3 tests/integration/test_ensemble.py
    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_ensemble.py
"""

import logging
import os
import random
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import ConnectionLoss, KazooException, NodeExistsError, NoNodeError  # noqa: E402
from kazoo.handlers.threading import KazooTimeoutError  # noqa: E402
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


class WriteStream:
    """Three kazoo writers creating unique znodes under `parent` through the whole ensemble
    (any member), retrying across failovers; `acked` holds every create that returned."""

    def __init__(self, test, hosts, parent, writers=3):
        self.test, self.hosts, self.parent, self.writers = test, hosts, parent, writers
        self.acked, self.errors = [], []
        self.lock, self.stop_flag = threading.Lock(), threading.Event()
        self.threads = []

    def start(self):
        for i in range(self.writers):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def _run(self, idx):
        c = KazooClient(hosts=self.hosts, timeout=20.0, connection_retry=KazooRetry(max_tries=-1, max_delay=0.5))
        try:
            c.start(timeout=WAIT)
        except Exception as e:
            self.errors.append("start: %r" % e)
            return
        # retries stop as soon as the test stops the stream (e.g. after killing every member)
        retry = KazooRetry(max_tries=-1, deadline=2 * WAIT, max_delay=0.5, interrupt=self.stop_flag.is_set)
        n = 0
        try:
            while not self.stop_flag.is_set():
                path = "%s/t%d-%05d" % (self.parent, idx, n)
                data = b"%d" % n
                try:
                    retry(self._create_once, c, path, data)
                except Exception as e:  # includes the retry interrupted by stop()
                    if not self.stop_flag.is_set():
                        self.errors.append("%s: %r" % (path, e))
                    return
                with self.lock:
                    self.acked.append((path, data))
                n += 1
        finally:
            stop(c)

    @staticmethod
    def _create_once(c, path, data):
        """One attempt, bounded in time (a request queued while disconnected would otherwise wait
        for a server forever). A retried create may find its own earlier attempt: the path is
        unique to this writer, so NodeExists means it was written."""
        try:
            if c.exists_async(path).get(timeout=5) is not None:
                return path
            return c.create_async(path, data).get(timeout=5)
        except NodeExistsError:
            return path
        except KazooTimeoutError:
            raise ConnectionLoss("no answer within 5 s")

    def count(self):
        with self.lock:
            return len(self.acked)

    def wait_for(self, n, when=""):
        ok = harness.wait_until(lambda: self.count() >= n or self.errors, 2 * WAIT)
        self.test.assertTrue(ok and not self.errors, "writes stalled %s (%d acked, errors %r)"
                             % (when, self.count(), self.errors[:3]))

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(2 * WAIT)

    def verify_on(self, members):
        """Every acknowledged write is on every member (after sync)."""
        for m in members:
            c = connect(m.hosts)
            try:
                c.sync(self.parent)
                missing = []
                for path, data in list(self.acked):
                    try:
                        if c.get(path)[0] != data:
                            missing.append(path)
                    except NoNodeError:
                        missing.append(path)
                self.test.assertEqual(missing[:10], [], "%d of %d acknowledged writes missing on %s"
                                      % (len(missing), len(self.acked), m.hosts))
            finally:
                stop(c)


HASH_LINE = re.compile(r"^([0-9a-f]+): (-?\d+)$")


def random_workload(clients, rng, n):
    """n writes spread over the clients under /h: creates (some ephemeral, some sequential),
    sets, deletes and multis; failures (NodeExists, NoNode) take zxids too."""
    names = ["/h/n%d" % i for i in range(12)]
    for i in range(n):
        c = clients[i % len(clients)]
        path, kind = rng.choice(names), rng.random()
        try:
            if kind < 0.3:
                c.create(path, b"c%d" % i, ephemeral=rng.random() < 0.4)
            elif kind < 0.55:
                c.set(path, b"s%d" % i)
            elif kind < 0.7:
                c.delete(path)
            elif kind < 0.85:
                t = c.transaction()
                t.create(path + "-m%d" % i, b"m")
                t.set_data("/h", b"%d" % i)
                t.commit()
            else:
                c.create("/h/seq-", b"q", sequence=True, ephemeral=rng.random() < 0.5)
        except KazooException:
            pass


def last_zxid(member):
    z = [l for l in member.four_letter("srvr").splitlines() if l.startswith("Zxid: ")]
    return int(z[0][6:], 16) if z else -1


def hash_histories(test, ens, clients):
    """Syncs, waits until every member has applied the same last zxid, and returns each member's
    `hash` output as {zxid: digest}, checking ZooKeeper's line shape on the way."""
    for c in clients:
        c.sync("/")
    test.assertTrue(harness.wait_until(lambda: len({last_zxid(m) for m in ens.members}) == 1, WAIT),
                    [last_zxid(m) for m in ens.members])
    histories = []
    for m in ens.members:
        text = m.four_letter("hash")
        pairs = {}
        for l in text.splitlines():
            match = HASH_LINE.match(l)
            test.assertIsNotNone(match, "%s: hash line %r" % (m.hosts, l))
            zxid = int(match.group(1), 16)
            test.assertEqual(zxid % 128, 0, l)
            pairs[zxid] = int(match.group(2))
        test.assertTrue(text == "" or text.endswith("\n"), repr(text))
        histories.append(pairs)
    return histories


def assert_same_pairs(test, histories, zxids):
    for z in sorted(zxids):
        test.assertEqual(len({h[z] for h in histories}), 1,
                         "digests differ at zxid 0x%x: %s" % (z, [h[z] for h in histories]))


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
            stream = WriteStream(self, ens.hosts, "/w").start()
            try:
                stream.wait_for(100)
                old.kill9()
                # a new leader among the two others; writes continue through it
                self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, WAIT), "no new leader")
                stream.wait_for(stream.count() + 100, "after the leader died")
                old.start(timeout=60)  # rejoins as a follower and catches up
            finally:
                stream.stop()
            try:
                stream.verify_on(ens.members)
                for m in ens.members:
                    c = connect(m.hosts)
                    try:
                        c.sync("/")
                        self.assertIsNotNone(c.exists("/w-owner"), "ephemeral of a live session lost in the failover")
                    finally:
                        stop(c)
                self.assertEqual(owner.exists("/w-owner").ephemeralOwner, owner.client_id[0])
            finally:
                stop(owner, setup)

    def test_follower_kill9_then_whole_ensemble_kill9(self):
        with Ensemble(3, name="all") as ens:
            setup = connect(ens.hosts)
            setup.create("/w")
            stop(setup)
            stream = WriteStream(self, ens.hosts, "/w").start()
            try:
                stream.wait_for(100)
                follower = next(m for m in ens.members if ens.mode(m) == "follower")
                follower.kill9()
                stream.wait_for(stream.count() + 100, "after a follower died")
                follower.start(timeout=60)
                stream.wait_for(stream.count() + 100, "after the follower came back")
                for m in ens.members:  # everything at once, mid-stream
                    m.kill9()
            finally:
                t0 = time.monotonic()
                stream.stop()
                print("stream stopped in %.1f s" % (time.monotonic() - t0))
            ens.start()
            self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, WAIT), "no leader after restart")
            stream.verify_on(ens.members)

    def test_silent_session_on_a_follower_expires(self):
        with Ensemble(3, name="expire") as ens:
            follower = next(m for m in ens.members if ens.mode(m) == "follower")
            other = next(m for m in ens.members if m is not follower)
            raw = zkwire.RawSession(follower.host, follower.port, timeout_ms=1000)
            try:
                self.assertEqual(raw.create("/silent", flags=zkwire.EPHEMERAL), (0, "/silent"))
                watcher = connect(other.hosts)
                try:
                    watcher.sync("/")
                    self.assertIsNotNone(watcher.exists("/silent"))
                    # no pings from now on: the session expires and its ephemeral goes everywhere
                    self.assertTrue(harness.wait_until(lambda: watcher.exists("/silent") is None, WAIT),
                                    "ephemeral of a silent session on a follower did not expire")
                finally:
                    stop(watcher)
            finally:
                raw.abandon()

    def test_differential_through_a_follower(self):
        # the wire-level scripts of test_differential.py, with every session on one follower of a
        # 3-server ensemble (writes forwarded to the leader), against a ZooKeeper ensemble
        import test_differential as diff
        scripts = [("raw", diff.run_raw_script), ("random", lambda srv: diff.run_random_script(srv, 7))]
        results = {}
        for kind in ("zookeeper", harness.target_kind()):
            with Ensemble(3, kind=kind, name="diff-" + kind) as ens:
                follower = next(m for m in ens.members if ens.mode(m) == "follower")
                results[kind] = {}
                for name, script in scripts:
                    try:
                        results[kind][name] = script(follower)
                    except (ConnectionError, OSError) as e:
                        results[kind][name] = getattr(e, "partial", []) + ["!! script aborted: %r" % e]
        for name, _ in scripts:
            with self.subTest(script=name):
                expected = results["zookeeper"][name]
                got = results[harness.target_kind()][name]
                for i, (e, g) in enumerate(zip(expected, got)):
                    if e != g:
                        print("%s step %d differs:\n  zookeeper: %s\n  target:    %s" % (name, i, e, g))
                self.assertEqual(expected, got)

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
                # The client can reach member 1 a moment before member 1 learns that the leader
                # died; member 1 then drops its clients until the election ends, as a ZooKeeper
                # follower does. A client retries a ConnectionLoss; the session must survive it.
                self.assertEqual(mover.retry(mover.get, "/mover")[0], b"m")
                st = mover.retry(mover.exists, "/mover")
                self.assertEqual(mover.client_id[0], sid)
                self.assertEqual(st.ephemeralOwner, sid)
            finally:
                stop(mover)

    def test_hash_digests_agree_across_members_after_a_random_workload(self):
        # `hash` prints "<hex zxid>: <digest>" for every 128th zxid (DataTree.logZxidDigest): the
        # digest comes from the replicated tree, so every member prints the same pair for each
        # zxid they both applied.
        rng = random.Random(11)
        with Ensemble(3, name="hash") as ens:
            clients = [connect(m.hosts) for m in ens.members]
            try:
                clients[0].ensure_path("/h")
                random_workload(clients, rng, 420)
                histories = hash_histories(self, ens, clients)
                shared = set(histories[0]) & set(histories[1]) & set(histories[2])
                self.assertGreaterEqual(len(shared), 1, histories)
                assert_same_pairs(self, histories, shared)
                # the digest follows the tree: the last two pairs differ
                values = [d for _, d in sorted(histories[0].items())]
                if len(values) >= 2:
                    self.assertNotEqual(values[-1], values[-2], histories[0])
            finally:
                stop(*clients)

    def test_hash_digests_agree_after_a_member_restores_from_a_snapshot(self):
        # snapCount=100: snapshots every 100 entries and a short log tail, so a follower that was
        # down for 400 writes restarts from a snapshot (its own, then the leader's). Its digests
        # for the zxids after that must be the ones the others print.
        rng = random.Random(12)
        with Ensemble(3, name="hashsnap", extra_cfg={"snapCount": 100}) as ens:
            follower = next(m for m in ens.members if ens.mode(m) == "follower")
            others = [m for m in ens.members if m is not follower]
            clients = [connect(m.hosts) for m in ens.members]
            try:
                clients[0].ensure_path("/h")
                random_workload(clients, rng, 200)
                follower.kill9()
                stop(clients[ens.members.index(follower)])
                live = [connect(m.hosts) for m in others]
                random_workload(live, rng, 400)
                follower.start(timeout=60)
                restarted_at = last_zxid(others[0])
                stop(*clients)
                clients = live + [connect(follower.hosts)]
                random_workload(clients, rng, 400)
                histories = hash_histories(self, ens, clients)
                shared = set(histories[0]) & set(histories[1]) & set(histories[2])
                after = [z for z in shared if z > restarted_at]
                self.assertGreaterEqual(len(after), 1, (restarted_at, histories))
                assert_same_pairs(self, histories, shared)
            finally:
                stop(*clients)

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
