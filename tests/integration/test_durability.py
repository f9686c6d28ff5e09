#!/usr/bin/python3
"""kill -9 durability: every acknowledged write survives a SIGKILL of the server and a restart on
the same dataDir; sessions and their ephemerals survive too, until their timeout passes unpinged.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_durability.py
"""

import logging
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import NoNodeError  # noqa: E402
from kazoo.protocol.states import KazooState  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

WAIT = 20.0


def node_count(srvr):
    for line in srvr.splitlines():
        if line.startswith("Node count:"):
            return int(line.split(":")[1])
    return None


class Writer(threading.Thread):
    """Writes unique znodes and sequential znodes alternately until stopped or the first error;
    records (path, data) of every write whose response arrived (= acknowledged)."""

    def __init__(self, hosts, idx, round_no):
        super().__init__(daemon=True)
        self.hosts, self.idx, self.round_no = hosts, idx, round_no
        self.acked = []
        self.stop_flag = threading.Event()
        self.error = None
        self.client = KazooClient(hosts=hosts, timeout=10.0)
        self.client.start(timeout=WAIT)

    def run(self):
        n = 0
        while not self.stop_flag.is_set():
            data = ("r%d-w%d-%d" % (self.round_no, self.idx, n)).encode()
            if n % 2 == 0:
                want = "/dur/r%d-w%d-%06d" % (self.round_no, self.idx, n)
                fut = self.client.create_async(want, data)
            else:
                fut = self.client.create_async("/dur/seq-", data, sequence=True)
            try:
                path = fut.get(timeout=5)
            except Exception as e:  # connection loss after the kill, or a timeout: not acknowledged
                self.error = e
                return
            self.acked.append((path, data))
            n += 1

    def close(self):
        try:
            self.client.stop()
            self.client.close()
        except Exception:
            pass


class Durability(unittest.TestCase):
    def test_acknowledged_writes_survive_kill9(self):
        self.writes_survive_kill9(harness.Server(name="durability"))

    def test_acknowledged_writes_survive_kill9_with_frequent_snapshots(self):
        # snapCount=50: snapshots (and log truncation) happen many times during the stream, so
        # recovery goes through snapshot + log replay
        self.writes_survive_kill9(harness.Server(name="snapshots", extra_cfg={"snapCount": 50}))

    def writes_survive_kill9(self, server):
        with server as srv:
            admin = KazooClient(hosts=srv.hosts, timeout=10.0)
            admin.start(timeout=WAIT)
            admin.create("/dur")
            admin.stop()
            admin.close()
            all_acked = []
            max_seq = -1
            for round_no in range(2):
                writers = [Writer(srv.hosts, i, round_no) for i in range(4)]
                for w in writers:
                    w.start()
                # let a stream build up, then kill while the writers are still writing
                harness.wait_until(lambda: sum(len(w.acked) for w in writers) >= 400 or
                                   any(not w.is_alive() for w in writers), 60)
                self.assertTrue(all(w.is_alive() for w in writers),
                                "a writer stopped before the kill: %r" % [w.error for w in writers])
                srv.kill9()
                for w in writers:
                    w.stop_flag.set()
                for w in writers:
                    w.join(timeout=15)
                acked = [a for w in writers for a in w.acked]
                print("round %d: %d acknowledged writes before kill -9" % (round_no, len(acked)))
                self.assertGreater(len(acked), 0)
                all_acked.extend(acked)
                srv.start()
                for w in writers:
                    w.close()
                check = KazooClient(hosts=srv.hosts, timeout=10.0)
                check.start(timeout=WAIT)
                try:
                    missing = []
                    for path, data in all_acked:
                        try:
                            got = check.get(path)[0]
                            if got != data:
                                missing.append((path, data, got))
                        except NoNodeError:
                            missing.append((path, data, None))
                    self.assertEqual(missing[:10], [], "%d acknowledged writes lost or wrong after kill -9 "
                                     "(first 10 shown: path, written, read)" % len(missing))
                    seqs = [int(p.rsplit("-", 1)[1]) for p, _ in all_acked if p.startswith("/dur/seq-")]
                    self.assertEqual(len(seqs), len(set(seqs)), "a sequence number was handed out twice")
                    max_seq = max(seqs + [max_seq])
                    # the sequence counter survived too: no number is reused after the restart
                    after = check.create("/dur/seq-", b"after", sequence=True)
                    self.assertGreater(int(after.rsplit("-", 1)[1]), max_seq)
                    all_acked.append((after, b"after"))
                finally:
                    check.stop()
                    check.close()

    def test_graceful_restart_keeps_data_and_sessions(self):
        with harness.Server(name="graceful") as srv:
            c = KazooClient(hosts=srv.hosts, timeout=30.0)
            c.start(timeout=WAIT)
            try:
                c.create("/g", b"kept")
                c.create("/g-eph", ephemeral=True)
                sid = c.client_id[0]
                states = []
                c.add_listener(states.append)
                srv.stop()  # SIGTERM
                self.assertFalse(srv.last_stop_needed_sigkill, "server did not exit within 10 s of SIGTERM")
                self.assertTrue(harness.wait_until(lambda: KazooState.SUSPENDED in states, WAIT))
                srv.start()
                # kazoo reconnects into the same session (CONNECTED, never LOST)
                self.assertTrue(harness.wait_until(lambda: states[-1] == KazooState.CONNECTED, WAIT), states)
                self.assertNotIn(KazooState.LOST, states)
                self.assertEqual(c.client_id[0], sid)
                self.assertEqual(c.retry(c.get, "/g")[0], b"kept")
                self.assertEqual(c.retry(c.exists, "/g-eph").ephemeralOwner, sid)
            finally:
                c.stop()
                c.close()

    def test_a_restart_serves_nothing_before_the_log_is_replayed(self):
        # snapCount out of reach: every write is replayed from the log at the restart. The first
        # srvr answer that is not "not currently serving" must count every node: a server that
        # answers while it replays shows a state older than one it acknowledged (ZooKeeper loads
        # its whole database before it serves; zkraft's gate waits for the start-up replay).
        with harness.Server(name="replay", extra_cfg={"snapCount": 10000000}) as srv:
            c = KazooClient(hosts=srv.hosts, timeout=10.0)
            c.start(timeout=WAIT)
            try:
                c.create("/replay")
                for start in range(0, 30000, 1000):
                    pending = [c.create_async("/replay/n-%06d" % i, b"x" * 20) for i in range(start, start + 1000)]
                    for a in pending:
                        a.get(timeout=WAIT)
            finally:
                c.stop()
                c.close()
            expected = node_count(srv.four_letter("srvr"))
            self.assertIsNotNone(expected)
            self.assertGreaterEqual(expected, 30001)
            srv.stop()
            launched = time.monotonic()
            srv.launch()
            deadline = launched + 60
            answers, first = 0, None
            while first is None and time.monotonic() < deadline:
                self.assertIsNone(srv.proc.poll(), "the server exited:\n" + srv.log_tail(20))
                answer = harness.four_letter_word(srv.host, srv.port, "srvr", timeout=1.0)
                answers += bool(answer)
                first = node_count(answer)
            self.assertIsNotNone(first, "not serving within 60 s")
            print("restart: serving %.0f ms after the launch, %d srvr answers" %
                  (1000 * (time.monotonic() - launched), answers))
            self.assertEqual(first, expected, "the first srvr answer after the restart counts %d nodes, not %d"
                             % (first, expected))

    def test_sessions_and_ephemerals_survive_kill9_until_timeout(self):
        with harness.Server(name="sessions") as srv:
            live = zkwire.RawSession(srv.host, srv.port, timeout_ms=30000)
            dies = zkwire.RawSession(srv.host, srv.port, timeout_ms=2000)
            self.assertEqual(live.create("/eph-live", b"L", flags=zkwire.EPHEMERAL), (0, "/eph-live"))
            self.assertEqual(dies.create("/eph-dies", b"D", flags=zkwire.EPHEMERAL), (0, "/eph-dies"))
            srv.kill9()
            live.abandon()
            dies.abandon()
            srv.start()
            c = KazooClient(hosts=srv.hosts, timeout=10.0)
            c.start(timeout=WAIT)
            try:
                # well within its 30 s timeout: the session and its ephemeral are still there
                st = c.exists("/eph-live")
                self.assertIsNotNone(st, "ephemeral of a live session lost by kill -9 + restart")
                self.assertEqual(st.ephemeralOwner, live.session_id)
                # ... and the session resumes with id + password
                resumed = KazooClient(hosts=srv.hosts, timeout=30.0, client_id=(live.session_id, live.passwd))
                resumed.start(timeout=WAIT)
                try:
                    self.assertEqual(resumed.client_id[0], live.session_id)
                    self.assertEqual(resumed.get("/eph-live")[0], b"L")
                finally:
                    resumed.stop()  # closes the session: its ephemeral goes
                    resumed.close()
                self.assertIsNone(c.exists("/eph-live"))
                # the 2 s session is never resumed: once its timeout passes without pings it is gone
                self.assertTrue(harness.wait_until(lambda: c.exists("/eph-dies") is None, WAIT),
                                "ephemeral of an expired session still there %ss after restart" % WAIT)
                probe = zkwire.RawSession(srv.host, srv.port, timeout_ms=2000,
                                          session_id=dies.session_id, passwd=dies.passwd)
                self.assertEqual((probe.timeout_ms, probe.session_id), (0, 0))
                probe.abandon()
            finally:
                c.stop()
                c.close()


if __name__ == "__main__":
    harness.run_suite()
