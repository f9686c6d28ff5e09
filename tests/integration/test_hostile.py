#!/usr/bin/python3
"""Hostile input over raw sockets: garbage bytes, a declared 2 GB frame, truncated frames, requests
in pieces with pauses between them, 1,000 idle connections, a client that pipelines many requests and never reads. After each, the server
must still serve a well-behaved Kazoo client, and its RSS must stay bounded.

RSS limit: growth < 200 MB over the value measured just before the attack. Why 200 MB: a server
that bounds what it keeps per connection (frames <= jute.maxbuffer = 1 MiB, a capped number of
outstanding requests per connection and in total, ZooKeeper's globalOutstandingLimit = 1000) needs
far less (1,000 idle connections x 64 KiB buffers = 64 MB), while the attacks here would cost
gigabytes if input were buffered without limit (a 2 GB frame; 50,000 pipelined reads of a 100 KB
node = 5 GB of responses). Apache ZooKeeper 3.8 (-Xmx256m) stays within it too.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_hostile.py
"""

import logging
import os
import random
import resource
import socket
import struct
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

RSS_GROWTH_LIMIT_KB = 200 * 1024
IDLE_CONNECTIONS = 1000


def closed_by_server(sock, timeout=10.0):
    """True if the server closes the connection (EOF or reset) within timeout; drains any reply."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


class Hostile(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = IDLE_CONNECTIONS + 512
        if soft < need:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, soft), hard), hard))
        # maxClientCnxns=0: no per-IP limit (every test connection comes from 127.0.0.1)
        cls.server = harness.Server(name="hostile", max_client_cnxns=0).start()
        cls.zk = KazooClient(hosts=cls.server.hosts, timeout=10.0)
        cls.zk.start(timeout=20)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.zk.stop()
            cls.zk.close()
        finally:
            cls.server.close()

    def setUp(self):
        self.assertTrue(self.server.running(), "server died earlier")
        self.rss_before = self.server.rss_kb()

    def assert_still_serving(self, tag):
        self.assertTrue(self.server.running(), "server process died (%s)" % tag)
        fresh = KazooClient(hosts=self.server.hosts, timeout=10.0)
        fresh.start(timeout=20)
        try:
            p = fresh.create("/ok-%s-" % tag, b"fine", sequence=True, ephemeral=True)
            self.assertEqual(fresh.get(p)[0], b"fine")
            self.assertEqual(self.zk.get(p)[0], b"fine")  # the long-lived client is fine too
        finally:
            fresh.stop()
            fresh.close()

    def assert_rss_bounded(self, tag):
        grown = self.server.rss_kb() - self.rss_before
        print("%s: RSS %d kB -> %d kB (growth %d kB)" % (tag, self.rss_before, self.rss_before + grown, grown))
        self.assertLess(grown, RSS_GROWTH_LIMIT_KB, "RSS grew by %d kB during %s" % (grown, tag))

    # ---------------------------------------------------------------------------------------------

    def test_garbage_bytes(self):
        rng = random.Random(1234)  # reproducible garbage
        payloads = [bytes(rng.getrandbits(8) for _ in range(n)) for n in (1, 3, 7, 100, 4096, 65536)]
        payloads += [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\xff" * 1000, b"\x00" * 1000,
                     b"\x00\x00\x00\x05hello" * 50]
        for p in payloads:
            with socket.create_connection((self.server.host, self.server.port), timeout=10) as s:
                try:
                    s.sendall(p)
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass  # the server may already have closed it: fine
                closed_by_server(s, timeout=5)
        # garbage after a valid handshake: a well-framed request with nonsense inside
        for body in (b"\x00\x00\x00\x01", b"\x00\x00\x00\x01\x00\x00\x00\x04" + b"\xff" * 64,
                     b"\x00\x00\x00\x01\x00\x00\x00\x01\x7f\xff\xff\xff/x",
                     b"\x00\x00\x00\x01\x00\x00\x03\xe7" + b"junk"):
            raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000)
            try:
                raw.sock.sendall(zkwire.frame(body))
                # either an error reply or a closed connection is fine; it must not hang the server
                raw.sock.settimeout(5)
                try:
                    raw.sock.recv(65536)
                except (socket.timeout, OSError):
                    pass
            finally:
                raw.abandon()
        self.assert_still_serving("garbage")
        self.assert_rss_bounded("garbage")

    def test_declared_2gb_frame(self):
        for prefix_handshake in (False, True):
            if prefix_handshake:
                raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000)
                s = raw.sock
            else:
                s = socket.create_connection((self.server.host, self.server.port), timeout=10)
            try:
                s.sendall(struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 1024)
                self.assertTrue(closed_by_server(s), "a 2 GB frame header did not close the connection "
                                "(handshake first: %s)" % prefix_handshake)
            finally:
                s.close()
        # a negative length too
        with socket.create_connection((self.server.host, self.server.port), timeout=10) as s:
            s.sendall(struct.pack(">i", -5) + b"\x00" * 16)
            self.assertTrue(closed_by_server(s), "a negative frame length did not close the connection")
        self.assert_still_serving("bigframe")
        self.assert_rss_bounded("bigframe")

    def test_truncated_frames_then_close(self):
        for i in range(200):
            with socket.create_connection((self.server.host, self.server.port), timeout=10) as s:
                full = zkwire.connect_request(10000)
                s.sendall(full[: 4 + (i % (len(full) - 4))])  # declared length, part of the body
        for i in range(50):
            raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000)
            req = zkwire.create_request(1, "/trunc-%d" % i, b"x" * 5000)
            raw.sock.sendall(req[: len(req) // 2])
            raw.abandon()  # closed mid-frame; the session itself expires later
        self.assert_still_serving("truncated")
        self.assertIsNone(self.zk.exists("/trunc-0"), "a truncated create must not be applied")
        self.assert_rss_bounded("truncated")

    def test_requests_sent_in_pieces_with_pauses(self):
        # A client on a slow link: every request arrives in pieces, the server having read all
        # there was before the next piece comes. Each piece must wake the server's read again
        # (it waits for readiness once a read has emptied the socket), over one byte and over
        # pieces larger than its 16 KiB read buffer. Every request is answered, in order.
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000)
        big = bytes(random.Random(7).getrandbits(8) for _ in range(200_000))
        requests = [
            (zkwire.create_request(1, "/pieces-small", b"abc"), 3),
            (zkwire.create_request(2, "/pieces-big", big), 20_000),
            (zkwire.get_data_request(3, "/pieces-small"), 1),
        ]
        for req, piece in requests:
            for at in range(0, len(req), piece):
                raw.sock.sendall(req[at:at + piece])
                time.sleep(0.002 if piece == 1 else 0.05)
        replies = [raw.read_reply() for _ in requests]
        self.assertEqual([(xid, err) for xid, _, err, _ in replies], [(1, 0), (2, 0), (3, 0)])
        d = zkwire.Decoder(replies[2][3])
        self.assertEqual(d.buffer(), b"abc")
        raw.close_session()
        self.assertEqual(self.zk.get("/pieces-big")[0], big)
        self.assert_still_serving("pieces")

    def test_thousand_idle_connections(self):
        socks = []
        try:
            for _ in range(IDLE_CONNECTIONS):
                socks.append(socket.create_connection((self.server.host, self.server.port), timeout=10))
            # give the server time to accept them all (mntr reports them when it has; not required)
            def alive():
                for line in self.server.four_letter("mntr").splitlines():
                    if line.startswith("zk_num_alive_connections\t"):
                        return int(line.split("\t")[1])
                return -1
            harness.wait_until(lambda: alive() >= IDLE_CONNECTIONS, 5.0, interval=0.2)
            print("idle: server reports %d alive connections" % alive())
            self.assert_still_serving("idle")
            self.assert_rss_bounded("idle (1000 open)")
        finally:
            for s in socks:
                s.close()
        self.assert_still_serving("idle-closed")

    def test_client_that_never_reads(self):
        self.zk.ensure_path("/hostile")
        big = self.zk.create("/hostile/big", b"b" * 100_000)
        rss_before = self.server.rss_kb()
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=30000)
        raw.sock.settimeout(3.0)
        sent = 0
        try:
            for i in range(50_000):  # 5 GB of responses if all were buffered
                raw.sock.sendall(zkwire.get_data_request(i + 1, big))
                sent += 1
        except socket.timeout:
            pass  # the server stopped reading from us: back-pressure, as it should
        except OSError:
            pass  # or it closed the connection: also acceptable
        print("never-reading client: %d requests sent" % sent)
        try:
            time.sleep(1.0)  # let the server work through what it accepted
            self.assert_still_serving("noread")
            self.rss_before = rss_before
            self.assert_rss_bounded("never-reading client")
        finally:
            raw.abandon()
        self.assert_still_serving("noread-closed")

    def test_request_over_jute_maxbuffer_closes_connection(self):
        # a create whose frame exceeds jute.maxbuffer (0xfffff): the server drops the connection,
        # but the session survives and can be resumed
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000)
        err, eph = raw.create("/before-too-big", flags=zkwire.EPHEMERAL)
        self.assertEqual(err, 0)
        try:
            raw.sock.sendall(zkwire.create_request(1, "/too-big", b"z" * 1_100_000))
        except OSError:
            pass  # already closed while we were still sending: fine
        try:
            self.assertTrue(closed_by_server(raw.sock), "an over-limit frame did not close the connection")
        finally:
            raw.abandon()
        self.assertIsNone(self.zk.exists("/too-big"))
        again = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=10000,
                                  session_id=raw.session_id, passwd=raw.passwd)
        self.assertEqual(again.session_id, raw.session_id, "session lost with the oversized frame")
        self.assertEqual(self.zk.exists(eph).ephemeralOwner, raw.session_id)
        again.close_session()
        self.assert_still_serving("maxbuffer")
        self.assert_rss_bounded("maxbuffer")

    def test_session_flood_then_mass_expiry(self):
        # 1,000 sessions opened and dropped without closeSession (each with an ephemeral): all
        # expire within a few timeouts; the server keeps serving throughout
        self.zk.ensure_path("/flood")
        for i in range(1000):
            raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=1000)
            if i % 10 == 0:
                err, _ = raw.create("/flood/e-%04d" % i, flags=zkwire.EPHEMERAL)
                self.assertEqual(err, 0)
            raw.abandon()
        self.assert_still_serving("flood")
        self.assertTrue(harness.wait_until(lambda: self.zk.get_children("/flood") == [], 30.0),
                        "ephemerals of 1,000 dropped sessions not all gone after 30 s")
        self.assert_still_serving("flood-expired")
        self.assert_rss_bounded("session flood")

    def test_many_clients_pipelining_writes(self):
        # sanity for the back-pressure path: a reading client pipelining 5,000 small writes gets
        # every reply, in order
        raw = zkwire.RawSession(self.server.host, self.server.port, timeout_ms=30000)
        self.zk.ensure_path("/pipe")

        def sender():
            for i in range(5000):
                raw.sock.sendall(zkwire.create_request(i + 1, "/pipe/n-", b"", flags=zkwire.SEQUENCE))

        t = threading.Thread(target=sender, daemon=True)
        t.start()
        xids = []
        for _ in range(5000):
            xid, zxid, err, body = raw.read_reply()
            self.assertEqual(err, 0)
            xids.append(xid)
        t.join(30)
        raw.close_session()
        self.assertEqual(xids, list(range(1, 5001)))
        self.assertEqual(self.zk.exists("/pipe").numChildren, 5000)
        self.assertEqual(len(self.zk.get_children("/pipe")), 5000)
        self.assert_still_serving("pipeline")



class ConnectionLimit(unittest.TestCase):
    """maxClientCnxns limits concurrent connections from one IP address; the ones over the limit
    are closed at once, and a slot frees when a connection closes."""

    def test_max_client_cnxns_per_ip(self):
        with harness.Server(name="cnxnlimit", max_client_cnxns=10) as srv:
            held = [zkwire.RawSession(srv.host, srv.port, timeout_ms=10000) for _ in range(10)]
            try:
                self.assertTrue(all(h.session_id != 0 for h in held))
                try:
                    over = socket.create_connection((srv.host, srv.port), timeout=10)
                except OSError:
                    over = None  # refused or reset while connecting: closed by the server as well
                if over is not None:
                    try:
                        try:
                            over.sendall(zkwire.connect_request(10000))
                        except OSError:
                            pass
                        self.assertTrue(closed_by_server(over), "connection 11 of 10 allowed was not closed")
                    finally:
                        over.close()
                held.pop().close_session()
                # a slot is free again (the server may need a moment to notice the close)
                def can_connect():
                    try:
                        s = zkwire.RawSession(srv.host, srv.port, timeout_ms=10000, io_timeout=2.0)
                    except (OSError, struct.error):
                        return False
                    held.append(s)
                    return s.session_id != 0
                self.assertTrue(harness.wait_until(can_connect, 10.0, interval=0.2))
            finally:
                for h in held:
                    h.abandon()


if __name__ == "__main__":
    harness.run_suite()
