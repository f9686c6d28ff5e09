#!/usr/bin/python3
"""Fault tests for 3-server ensembles of real processes on 127.0.0.1: kill -9 and restart of a
follower, a follower rebuilt from nothing by a snapshot, a SIGSTOPped (paused) leader that must
not serve stale reads after sync, session expiry decided once for the whole ensemble, a session
moving to another member with its ephemeral and watches, and the write gap of a leader failover.

    ZK_TARGET=zookeeper /usr/bin/python3 tests/integration/test_ensemble_faults.py
    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_ensemble_faults.py
    (one test: append e.g. EnsembleFaults.test_3_paused_leader_serves_no_stale_read)

Write outcomes follow the client's view (faults_clients.py): acknowledged writes must be on every
member; writes answered with an error on none; writes whose connection was lost on all or none.
"""

import logging
import os
import shutil
import signal
import struct
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire  # noqa: E402
from ensemble import Ensemble  # noqa: E402
from harness import ServerStartError  # noqa: E402
import faults_raw  # noqa: E402
from faults_clients import (WAIT, TimedWriters, check_outcomes, connect, get_or_none,  # noqa: E402
                            on_each, retrying, stop)

from kazoo.client import KazooClient  # noqa: E402
from kazoo.recipe.watchers import DataWatch  # noqa: E402
from kazoo.retry import KazooRetry  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


def start_ensemble(name, snap_count=None):
    """A started 3-member Ensemble (Ensemble.start retries a start that lost a port race)."""
    ens = Ensemble(3, name=name)
    if snap_count is not None:
        for m in ens.members:
            m.extra_cfg["snapCount"] = snap_count
    try:
        return ens.start()
    except ServerStartError:
        ens.close()
        raise


def followers(ens):
    return [m for m in ens.members if m.running() and ens.mode(m) == "follower"]


def wait_leader(ens, among=None, timeout=WAIT):
    """The member reporting Mode: leader (only `among` are asked: a stopped process would make
    srvr wait for its timeout); None after timeout."""
    found = []

    def look():
        for m in (among or ens.members):
            if m.running() and ens.mode(m) == "leader":
                found.append(m)
                return True
        return False
    return found[0] if harness.wait_until(look, timeout, interval=0.1) else None


def bulk_create(client, items, batch=500):
    """Create {path: data} with pipelined async creates; raises the first error."""
    items = list(items.items())
    for i in range(0, len(items), batch):
        futures = [client.create_async(p, d) for p, d in items[i:i + batch]]
        for f in futures:
            f.get(timeout=WAIT)


def pinned_to(client):
    """The port of the member a kazoo client is connected to (None while it is not)."""
    try:
        sock = client._connection._socket
        return sock.getpeername()[1] if client.connected and sock is not None else None
    except OSError:
        return None


class EnsembleFaults(unittest.TestCase):

    # 1 ----------------------------------------------------------------------------------------
    def test_1_follower_kill9_restart_catches_up(self):
        with start_ensemble("f1-") as ens:
            leader = wait_leader(ens)
            self.assertIsNotNone(leader, "no leader")
            victim = followers(ens)[0]
            others = [m for m in ens.members if m is not victim]
            setup = connect(ens.hosts)
            setup.create("/w")
            stop(setup)
            writers = TimedWriters(",".join(m.hosts for m in others), "/w", writers=3).start()
            try:
                self.assertTrue(writers.wait_acked(100), "writes stalled before the kill")
                victim.kill9()
                n = writers.acked_count()
                self.assertTrue(writers.wait_acked(n + 200), "writes stalled with one follower dead "
                                "(%d acked, errors %r)" % (writers.acked_count(), writers.errors))
                victim.start(timeout=60)
                n = writers.acked_count()
                self.assertTrue(writers.wait_acked(n + 100), "writes stalled after the follower came back")
            finally:
                writers.stop()
            self.assertEqual(writers.errors, [])
            acked, failed, unknown = writers.outcomes()
            # the restarted follower alone: every acknowledged write, after sync
            c = connect(victim.hosts)
            try:
                retrying(c, c.sync, "/w")
                missing = [p for p, d in acked.items() if get_or_none(c, p) != d]
                self.assertEqual(missing[:5], [], "%d of %d acknowledged writes missing on the restarted "
                                 "follower" % (len(missing), len(acked)))
            finally:
                stop(c)
            check_outcomes(self, ens.members, acked, failed, unknown)

    # 2 ----------------------------------------------------------------------------------------
    def test_2_wiped_follower_rebuilt_by_snapshot(self):
        # snapshot every 100 entries, log tail kept: 100
        with start_ensemble("f2-", snap_count=100) as ens:
            self.assertIsNotNone(wait_leader(ens), "no leader")
            victim = followers(ens)[0]
            c = connect(",".join(m.hosts for m in ens.members if m is not victim), timeout=20.0)
            try:
                c.create("/big")
                expected = {"/big/n%05d" % i: b"v%d" % i for i in range(3000)}
                bulk_create(c, expected)
                # some updates and deletes, so the snapshot is more than a list of creates
                for i in range(0, 3000, 10):
                    expected["/big/n%05d" % i] = b"set%d" % i
                futures = [c.set_async(p, d) for p, d in expected.items() if d.startswith(b"set")]
                for i in range(5, 3000, 50):
                    futures.append(c.delete_async("/big/n%05d" % i))
                    del expected["/big/n%05d" % i]
                for f in futures:
                    f.get(timeout=WAIT)
                victim.kill9()
                # wipe everything but myid
                for name in os.listdir(victim.data_dir):
                    if name == "myid":
                        continue
                    p = os.path.join(victim.data_dir, name)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                more = {"/big/after%03d" % i: b"a%d" % i for i in range(300)}
                bulk_create(c, more)
                expected.update(more)
                victim.start(timeout=60)
                more = {"/big/later%03d" % i: b"l%d" % i for i in range(50)}
                bulk_create(c, more)
                expected.update(more)
            finally:
                stop(c)

            def read_all(cl):
                kids = cl.get_children("/big")
                futures = [(k, cl.get_async("/big/" + k)) for k in kids]
                return {"/big/" + k: f.get(timeout=WAIT)[0] for k, f in futures}

            seen = on_each([victim], read_all)[victim.name]
            self.assertEqual(len(seen), len(expected), "the rebuilt follower has %d of %d znodes"
                             % (len(seen), len(expected)))
            wrong = [p for p, d in expected.items() if seen.get(p) != d]
            self.assertEqual(wrong[:5], [], "%d znodes missing or with wrong data on the rebuilt follower"
                             % len(wrong))
            stats = on_each(ens.members, lambda cl: cl.exists("/big"))
            self.assertEqual(len(set(stats.values())), 1, "members disagree on /big's Stat: %r" % stats)
            if ens.kind == "zkraft":
                with open(victim.log_path, "rb") as f:
                    log = f.read().decode("utf-8", "replace")
                print("  rebuilt follower log mentions installing a snapshot: %s"
                      % ("installing snapshot" in log))

    # 3 ----------------------------------------------------------------------------------------
    def test_3_paused_leader_serves_no_stale_read(self):
        with start_ensemble("f3-") as ens:
            old = wait_leader(ens)
            self.assertIsNotNone(old, "no leader")
            rest = [m for m in ens.members if m is not old]
            setup = connect(ens.hosts)
            setup.create("/k", b"old")
            setup.create("/pend")
            stop(setup)
            # two raw sessions on the old leader: `queued` sends while it is stopped, `late` right
            # after it resumes; a long timeout so no session expires while the leader is paused
            queued = zkwire.RawSession(old.host, old.port, timeout_ms=30000)
            late = zkwire.RawSession(old.host, old.port, timeout_ms=30000)
            self.assertEqual(late.call(zkwire.OP_SYNC, zkwire.ustring("/k"))[1][2], 0)
            writer = connect(",".join(m.hosts for m in rest), timeout=20.0)
            pending = {}
            try:
                paused_at = time.monotonic()
                os.kill(old.pid, signal.SIGSTOP)
                try:
                    # requests into the paused leader's socket: writes, then sync + getData
                    for i in range(10):
                        path = "/pend/p%d" % i
                        pending[faults_raw.send_create(queued, path, b"q")] = path
                    q_sync = faults_raw.send_sync(queued, "/k")
                    q_get = faults_raw.send_get_data(queued, "/k")
                    # the majority elects a new leader and commits a newer value
                    new = wait_leader(ens, among=rest, timeout=WAIT)
                    self.assertIsNotNone(new, "the two running members elected no leader")
                    retrying(writer, writer.set, "/k", b"new")
                    elected_after = time.monotonic() - paused_at
                    time.sleep(max(0.0, 4.5 - (time.monotonic() - paused_at)))
                finally:
                    os.kill(old.pid, signal.SIGCONT)
                paused_for = time.monotonic() - paused_at
                l_sync = faults_raw.send_sync(late, "/k")
                l_get = faults_raw.send_get_data(late, "/k")
                print("  paused %.1f s; new leader elected and /k=new committed %.1f s after the pause"
                      % (paused_for, elected_after))
                q_replies, q_end = faults_raw.collect(queued, list(pending) + [q_sync, q_get], 20.0)
                l_replies, l_end = faults_raw.collect(late, [l_sync, l_get], 20.0)
            finally:
                queued.abandon()
                late.abandon()
                stop(writer)

            stale = []
            for who, replies, end, xs, xg in (("queued during the pause", q_replies, q_end, q_sync, q_get),
                                              ("sent after the resume", l_replies, l_end, l_sync, l_get)):
                s, g = replies.get(xs), replies.get(xg)
                value = faults_raw.get_data_value(g[1]) if g and g[0] == 0 else None
                print("  old leader, %s: sync %s, getData %s (%s), connection %s"
                      % (who, "-" if s is None else "err %d" % s[0], "-" if g is None else "err %d" % g[0],
                         value, end))
                if s is not None and s[0] == 0 and g is not None and g[0] == 0 and value != b"new":
                    stale.append("%s: sync succeeded, then getData returned %r" % (who, value))
            acked = {p: b"q" for x, p in pending.items() if x in q_replies and q_replies[x][0] == 0}
            failed = [p for x, p in pending.items() if x in q_replies and q_replies[x][0] != 0]
            unknown = [p for x, p in pending.items() if x not in q_replies]
            print("  writes queued at the old leader: %d acknowledged, %d failed, %d unanswered"
                  % (len(acked), len(failed), len(unknown)))

            # the old leader rejoins; every member agrees on /k and on the queued writes
            self.assertIsNotNone(wait_leader(ens, timeout=WAIT), "no leader after the resume")
            self.assertTrue(old.wait_serving(WAIT), "the old leader does not serve after the resume")
            values = on_each(ens.members, lambda c: get_or_none(c, "/k"))
            self.assertEqual(set(values.values()), {b"new"}, values)
            check_outcomes(self, ens.members, acked, failed, unknown)
            if stale and ens.kind == "zookeeper":
                # ZooKeeper 3.8's resumed old leader answers a sync at once while it still believes
                # it leads (no quorum round), so it can serve the stale value: a known difference
                # of the reference, reported rather than failed; zkraft must not do this.
                self.skipTest("ZooKeeper 3.8 served a stale read after sync: %s" % stale)
            self.assertEqual(stale, [], "stale read after a successful sync on the paused old leader")

    # 4 ----------------------------------------------------------------------------------------
    def test_4_session_expiry_decided_once(self):
        with start_ensemble("f4-") as ens:
            self.assertIsNotNone(wait_leader(ens), "no leader")
            f1, f2 = followers(ens)[:2]
            setup = connect(ens.hosts)
            setup.create("/eph")
            stop(setup)
            # two raw sessions on follower f1, each with an ephemeral: one goes silent with its
            # socket open, the other drops its socket without closeSession
            silent = zkwire.RawSession(f1.host, f1.port, timeout_ms=4000)
            dropped = zkwire.RawSession(f1.host, f1.port, timeout_ms=4000)
            watcher = None
            try:
                self.assertEqual(silent.create("/eph/silent", flags=zkwire.EPHEMERAL), (0, "/eph/silent"))
                last_silent = time.monotonic()
                self.assertEqual(dropped.create("/eph/dropped", flags=zkwire.EPHEMERAL), (0, "/eph/dropped"))
                dropped.abandon()
                last_dropped = time.monotonic()
                timeout_s = min(silent.timeout_ms, dropped.timeout_ms) / 1000.0
                # a watcher on the other follower
                watcher = connect(f2.hosts)
                events, lock = [], threading.Lock()
                gone = {}

                def watch(ev):
                    with lock:
                        events.append((ev.type, ev.path))
                        gone.setdefault(ev.path, time.monotonic())
                watcher.sync("/eph")
                for p in ("/eph/silent", "/eph/dropped"):
                    self.assertIsNotNone(watcher.exists(p, watch=watch), "%s not on the other follower" % p)
                self.assertTrue(harness.wait_until(lambda: len(events) >= 2, WAIT),
                                "the watcher on another member got %r, not two NodeDeleted" % events)
                time.sleep(1.0)  # a repeated expiry would show as a second event or change
                with lock:
                    self.assertEqual(sorted(events), [("DELETED", "/eph/dropped"), ("DELETED", "/eph/silent")])
                    early = [(p, gone[p] - t) for p, t in (("/eph/silent", last_silent),
                                                           ("/eph/dropped", last_dropped))
                             if gone[p] - t < timeout_s * 0.8]
                print("  ephemerals gone %.1f s / %.1f s after their sessions' last request (timeout %.1f s)"
                      % (gone["/eph/silent"] - last_silent, gone["/eph/dropped"] - last_dropped, timeout_s))
                self.assertEqual(early, [], "ephemeral deleted before its session's timeout")
            finally:
                silent.abandon()
                stop(watcher)
            # gone on every member, and every member's /eph has the same Stat (one deletion each)
            stats = on_each(ens.members, lambda c: (c.get_children("/eph"), c.exists("/eph")))
            for name, (kids, _) in stats.items():
                self.assertEqual(kids, [], "ephemerals still on %s" % name)
            self.assertEqual(len({st for _, st in stats.values()}), 1, "members disagree on /eph: %r" % stats)
            # the expired session cannot be resumed on any member
            for m in ens.members:
                try:
                    again = zkwire.RawSession(m.host, m.port, timeout_ms=4000, session_id=silent.session_id,
                                              passwd=silent.passwd)
                    resumed = again.session_id != 0 and again.timeout_ms > 0
                    again.abandon()
                except (ConnectionError, OSError):
                    resumed = False
                self.assertFalse(resumed, "expired session 0x%x resumed on %s" % (silent.session_id, m.name))

    # 5 ----------------------------------------------------------------------------------------
    def _session_moves(self, kill_leader):
        """kazoo drops its watches on a disconnect (2.8 has no SetWatches; it calls each watcher
        with a NONE event), so its watch is a DataWatch recipe, which re-arms on reconnect. The
        server-side carry-over of watches is checked with a raw session that moves the same way
        and re-registers its watches with SetWatches, as the Java and C clients do."""
        with start_ensemble("f5%s-" % ("l" if kill_leader else "f")) as ens:
            leader = wait_leader(ens)
            self.assertIsNotNone(leader, "no leader")
            a = leader if kill_leader else followers(ens)[0]
            b, c = [m for m in ens.members if m is not a]
            other = connect(c.hosts)
            mover = KazooClient(hosts=a.hosts + "," + b.hosts, randomize_hosts=False, timeout=10.0,
                                connection_retry=KazooRetry(max_tries=-1, max_delay=0.3))
            mover.start(timeout=WAIT)
            raw = zkwire.RawSession(a.host, a.port, timeout_ms=20000)
            moved = None
            try:
                self.assertEqual(pinned_to(mover), a.port)
                sid = mover.client_id[0]
                other.create("/watched", b"0")
                mover.create("/mine", b"m", ephemeral=True)
                self.assertEqual(raw.create("/raw-mine", flags=zkwire.EPHEMERAL), (0, "/raw-mine"))
                seen, seen_lock = [], threading.Lock()

                def on_data(data, stat, event=None):
                    with seen_lock:
                        seen.append(data)
                retrying(mover, mover.sync, "/watched")
                DataWatch(mover, "/watched", on_data)
                self.assertTrue(harness.wait_until(lambda: b"0" in seen, WAIT), "DataWatch never called")
                # the raw session watches /watched (data) and /later (exists)
                _, r = raw.call(zkwire.OP_SYNC, zkwire.ustring("/watched"))
                self.assertEqual(r[2], 0)
                _, r = raw.call(zkwire.OP_GETDATA, zkwire.ustring("/watched") + zkwire.boolean(True))
                self.assertEqual(r[2], 0)
                last_zxid = r[1]
                _, r = raw.call(zkwire.OP_EXISTS, zkwire.ustring("/later") + zkwire.boolean(True))
                self.assertEqual(r[2], -101)  # NoNode, with an exist watch left
                a.kill9()
                raw.abandon()
                self.assertTrue(harness.wait_until(lambda: pinned_to(mover) == b.port, WAIT),
                                "the kazoo client did not reconnect to the other member")
                self.assertEqual(mover.client_id[0], sid, "a new session instead of the moved one")
                st = retrying(mover, mover.exists, "/mine")
                self.assertIsNotNone(st, "the moved session's ephemeral is gone")
                self.assertEqual(st.ephemeralOwner, sid)
                # the raw session resumes on b (once b serves) and re-registers its watches
                moved = self._resume_raw(b, raw)
                sw = (struct.pack(">q", last_zxid) + struct.pack(">i", 1) + zkwire.ustring("/watched")
                      + struct.pack(">i", 1) + zkwire.ustring("/later") + struct.pack(">i", 0))
                moved.send(-8, 101, sw)  # SetWatches
                early = []
                while True:
                    xid, _, err, body = moved.read_any()
                    if xid == -8:
                        self.assertEqual(err, 0, "SetWatches refused")
                        break
                    early.append(body)
                self.assertEqual(early, [], "notifications before any change")
                retrying(other, other.set, "/watched", b"1")
                retrying(other, other.create, "/later", b"")
                events = []
                moved.sock.settimeout(WAIT)
                while len(events) < 2:
                    xid, _, _, body = moved.read_any()
                    if xid == -1:
                        d = zkwire.Decoder(body)
                        typ = d.int32()
                        d.int32()  # keeper state
                        events.append((typ, d.ustring()))
                # NodeDataChanged = 3, NodeCreated = 1
                self.assertEqual(sorted(events), [(1, "/later"), (3, "/watched")])
                self.assertTrue(harness.wait_until(lambda: b"1" in seen, WAIT),
                                "the kazoo DataWatch missed the change after the move (saw %r)" % seen)
                owners = on_each([b, c], lambda cl: (cl.exists("/mine"), cl.exists("/raw-mine")))
                for name, (st_k, st_r) in owners.items():
                    self.assertIsNotNone(st_k, "kazoo ephemeral missing on %s" % name)
                    self.assertIsNotNone(st_r, "raw ephemeral missing on %s" % name)
                    self.assertEqual((st_k.ephemeralOwner, st_r.ephemeralOwner), (sid, raw.session_id))
            finally:
                if moved is not None:
                    moved.abandon()
                stop(mover, other)

    def _resume_raw(self, member, raw):
        """Reconnect raw's session (id + password) to member, retrying while it does not serve."""
        deadline = time.monotonic() + WAIT
        last = None
        while time.monotonic() < deadline:
            try:
                s = zkwire.RawSession(member.host, member.port, timeout_ms=raw.timeout_ms,
                                      session_id=raw.session_id, passwd=raw.passwd)
                self.assertEqual(s.session_id, raw.session_id, "session not resumed on %s" % member.name)
                self.assertGreater(s.timeout_ms, 0, "session expired on the move")
                return s
            except (ConnectionError, OSError, struct.error) as e:
                last = e
                time.sleep(0.2)
        self.fail("raw session could not reconnect to %s: %r" % (member.name, last))

    def test_5a_session_moves_when_its_follower_dies(self):
        self._session_moves(kill_leader=False)

    def test_5b_session_moves_when_its_leader_dies(self):
        self._session_moves(kill_leader=True)

    # 6 ----------------------------------------------------------------------------------------
    def test_6_leader_kill9_failover_gap(self):
        with start_ensemble("f6-") as ens:
            old = wait_leader(ens)
            self.assertIsNotNone(old, "no leader")
            setup = connect(ens.hosts)
            setup.create("/g")
            stop(setup)
            writers = TimedWriters(ens.hosts, "/g", writers=4).start()
            try:
                self.assertTrue(writers.wait_acked(200), "writes stalled before the kill (%d acked, %r)"
                                % (writers.acked_count(), writers.errors))
                old.kill9()
                # kill9() returns once the process is reaped: nothing it did can come after this
                killed_at = time.monotonic()
                first = None
                if harness.wait_until(lambda: writers.first_ack_sent_after(killed_at) is not None, 60.0):
                    first = writers.first_ack_sent_after(killed_at)
                if first is not None:
                    n = writers.acked_count()
                    self.assertTrue(writers.wait_acked(n + 100), "writes stalled after the failover")
            finally:
                writers.stop()
            self.assertEqual(writers.errors, [])
            self.assertIsNotNone(first, "no write succeeded within 60 s of the leader's kill")
            gap = first[0] - killed_at
            acked, failed, unknown = writers.outcomes()
            print("  failover gap: %.2f s from the leader's kill -9 to the first acknowledged write "
                  "(%d acked, %d failed, %d unknown in total)" % (gap, len(acked), len(failed), len(unknown)))
            self.assertLess(gap, 15.0, "failover took %.1f s" % gap)
            survivors = [m for m in ens.members if m is not old]
            check_outcomes(self, survivors, acked, failed, unknown)
            old.start(timeout=60)  # and the old leader, back as a follower, agrees
            check_outcomes(self, ens.members, acked, failed, unknown)


if __name__ == "__main__":
    harness.run_suite()
